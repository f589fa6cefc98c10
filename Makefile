# `make demo` (autograde the bundled examples), `make test` (every test, the real nbgrader included) and
# `make release` (the student release, then nbgrader generate_assignment on the source notebook).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NB_STAMP := $(VENV)/.installed-nbgrader
NB_DIR := nbgrader_course
# nbgrader runs alembic and jupyter by name: the venv's bin goes first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install demo test release bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(NB_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[nbgrader]'
	touch $(NB_STAMP)

demo: $(STAMP)
	$(BIN)/grade autograde examples/submissions --out scores/

test: $(NB_STAMP)
	$(BIN)/python -m pytest

release: $(NB_STAMP)
	$(BIN)/grade release --out release/ --nbgrader-dir $(NB_DIR)/
	cd $(NB_DIR) && nbgrader generate_assignment $$($(abspath $(BIN))/python -c 'import json; print(json.load(open("../course.json"))["assignment"])') --force

bench: $(STAMP)
	$(BIN)/python tests/bench/bench.py

clean:
	rm -rf $(VENV) scores release $(NB_DIR) build *.egg-info
