# The two set-up commands: `make demo` (autograde each assignment's bundled examples, score files and feedback
# pages in scores/<assignment>/, then their class report, scores/class.html) and `make test` (every test, the real
# nbgrader included); `make release A=NAME`
# (one assignment's student release, then nbgrader generate_assignment on its source notebook), `make bench`,
# `make diagnoses`, `make feedback`, `make fairness` (these four measure the-block).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
NB_STAMP := $(VENV)/.installed-nbgrader
NB_DIR := nbgrader_course
# The course's assignments, as course.json lists them; A is the one `make release` writes.
ASSIGNMENTS := $(shell $(PYTHON) -c 'import json; print(*(a["assignment"] for a in json.load(open("course.json"))["assignments"]))')
A ?= the-block
# nbgrader runs alembic and jupyter by name: the venv's bin goes first on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: install demo test test-container release bench diagnoses feedback fairness crosscheck \
        chromium clean

install: $(STAMP)

# apt-get runs for two packages only, each only when missing, on Linux with apt-get: bubblewrap
# (the instructor's sandbox; students' machines, macOS and Windows do without) and chromium
# (`make test`: the feedback page's screenshot test). NO_APT=1 installs neither: autograde then
# needs --unsafe, and the tests that need them say what is missing.
NO_APT ?=
SANDBOX_PKG := $(shell [ -z "$(NO_APT)" ] && [ "$$(uname -s)" = Linux ] \
                 && ! command -v bwrap >/dev/null && command -v apt-get >/dev/null \
                 && echo bubblewrap)

$(STAMP): pyproject.toml
	@if [ -n "$(SANDBOX_PKG)" ]; then \
	  echo "installing bubblewrap (autograde's sandbox; NO_APT=1 skips it)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq bubblewrap; \
	  else sudo apt-get install -y -qq bubblewrap || echo "bubblewrap not installed: autograde needs it (or --unsafe)"; fi; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NB_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -e '.[nbgrader]'
	touch $(NB_STAMP)

demo: $(STAMP)
	for a in $(ASSIGNMENTS); do [ ! -d examples/$$a ] || $(BIN)/grade autograde -a $$a examples/$$a --out scores/$$a --html || exit $$?; done
	$(BIN)/grade report $(foreach a,$(ASSIGNMENTS),$(if $(wildcard examples/$(a)),scores/$(a))) \
	  --roster examples/roster.csv --html scores/class.html

# On every core (pytest-xdist), a test file to a worker: a module's fixtures are built once.
test: $(NB_STAMP) chromium
	$(BIN)/python -m pytest -n auto --dist loadfile

# The container image's entry point in the image's system, built from Debian's packages with
# debootstrap (container/rootfs.sh; minutes, as root; not part of `make test`): installs debootstrap
# when missing.
test-container: $(STAMP)
	@command -v debootstrap >/dev/null 2>&1 || { \
	  echo "installing debootstrap (it builds the image's system)"; $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
	$(SUDO) env GRADE_CONTAINER_TEST=1 $(BIN)/python -m pytest -m container \
	  tests/unit/sandbox/test_container.py

# The feedback page's test renders it in headless Chromium; on Debian this installs it when missing.
chromium:
	@[ -n "$(NO_APT)" ] || command -v chromium >/dev/null 2>&1 || \
	  command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "installing chromium (the feedback page's test renders it headless; NO_APT=1 skips it)"; \
	    $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

release: $(NB_STAMP)
	$(BIN)/grade release -a $(A) --out release/ --nbgrader-dir $(NB_DIR)/
	cd $(NB_DIR) && nbgrader generate_assignment $(A) --force

# the-modern-block's reference against transformers' LlamaDecoderLayer and LlamaConfig counts (needs torch and
# transformers: PYTHON_XCHECK is a python that has them, e.g. a venv of their own; not part of `make test`).
PYTHON_XCHECK ?= python3
crosscheck:
	$(PYTHON_XCHECK) tests/the-modern-block/checks/crosscheck.py

bench: $(NB_STAMP)
	$(BIN)/python tests/bench/bench.py

# How well the known mistakes name the faults of the acceptance corpus (../shared/submissions).
diagnoses: $(STAMP)
	@[ -d ../shared/submissions ] || { echo "make diagnoses: needs the acceptance corpus in ../shared/submissions (beside this repository), which is absent here"; exit 2; }
	$(BIN)/python tests/bench/diagnoses.py

# The feedback a student gets, from a release in a fresh venv: faults named, wrong diagnoses, hints.
feedback: $(STAMP)
	$(BIN)/python tests/bench/feedback.py

# Where the points of single faults fall: in their own problem only (tests/the-block/checks/mutants.py FAULTS).
fairness: $(STAMP)
	$(BIN)/python tests/bench/fairness.py

clean:
	rm -rf $(VENV) scores release $(NB_DIR) build *.egg-info
