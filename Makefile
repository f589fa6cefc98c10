# The two set-up commands: `make demo` (autograde the bundled examples) and `make test` (every test).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/grade autograde examples/submissions --out scores/

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python tests/bench/bench.py

clean:
	rm -rf $(VENV) scores build *.egg-info
