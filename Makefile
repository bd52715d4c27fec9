# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip --disable-pip-version-check -q

.PHONY: demo test lint typecheck test-suite test-dev test-install clean bfcl

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[local-llm]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[dev,local-llm,bfcl]"
	$(PIP) install --no-deps "bfcl-eval==$(BFCL_VERSION)"
	touch $@

# BFCL's data and checkers for `durable-loop eval --suite bfcl` (see docs/evals.md):
# bfcl-eval without its declared dependencies, plus the few its checkers import.
BFCL_VERSION := 2026.3.23
bfcl: | $(BIN)/python
	$(PIP) install -e ".[bfcl]"
	$(PIP) install --no-deps "bfcl-eval==$(BFCL_VERSION)"

demo: $(VENV)/.installed-demo
	$(BIN)/durable-loop demo

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy durable_loop bench

test-suite: $(VENV)/.installed-dev
	$(BIN)/pytest -q $(PYTEST_ARGS)

test: lint typecheck test-suite

# The same suite against the embedded dev server instead of the time-skipping server.
test-dev: $(VENV)/.installed-dev
	DURABLE_LOOP_TEST_SERVER=dev $(BIN)/pytest -q $(PYTEST_ARGS)

# The wheel in fresh venvs (no extras, then [local-llm,testing]): tests/install and tests/docs there.
test-install: $(VENV)/.installed-dev
	bash .ci/plain-install

clean:
	rm -rf $(VENV) .durable-loop .pytest_cache .mypy_cache .ruff_cache
