# Two commands on a fresh machine: `make demo` and `make test`. Everything they need is set up here.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv lint typecheck bench pg-start pg-stop browser clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

## The main job on the embedded default: SQLite and the simulated web.
demo: $(STAMP)
	$(BIN)/fairfetch demo

## The whole suite, on SQLite and on a throwaway PostgreSQL cluster, with the browser tests.
test: $(STAMP) browser
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	scripts/with-postgres $(BIN)/python -m pytest -p no:cacheprovider -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench || true

typecheck: $(STAMP)
	$(BIN)/mypy

## Debian's Chromium for the browser tests (Playwright drives /usr/bin/chromium; no browser download).
browser:
	@test -x /usr/bin/chromium || scripts/install-chromium

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	scripts/with-postgres $(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build src/*.egg-info
