# The two set-up commands: `make demo` (autograde the bundled examples, score files and feedback pages in scores/)
# and `make test` (every test).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: install demo test bench diagnoses chromium clean

install: $(STAMP)

# The instructor's sandbox needs bubblewrap on Linux; students' machines (macOS, Windows) do without.
SANDBOX_PKG := $(shell [ "$$(uname -s)" = Linux ] && ! command -v bwrap >/dev/null && command -v apt-get >/dev/null && echo bubblewrap)

$(STAMP): pyproject.toml
	@if [ -n "$(SANDBOX_PKG)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else sudo apt-get install -y -qq bubblewrap || echo "bubblewrap not installed: autograde needs it (or --unsafe)"; fi; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/grade autograde examples/submissions --out scores/ --html

test: $(STAMP) chromium
	$(BIN)/python -m pytest

# The feedback page's test renders it in headless Chromium; on Debian this installs it when missing.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "installing chromium (the feedback page's test renders it headless)"; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

bench: $(STAMP)
	$(BIN)/python tests/bench/bench.py

# How well the known mistakes name the faults of the acceptance corpus (../shared/submissions).
diagnoses: $(STAMP)
	$(BIN)/python tests/bench/diagnoses.py

clean:
	rm -rf $(VENV) scores build *.egg-info
