# Set-up and entry points. `make run` and `make test` create .venv on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)

.PHONY: setup run test bench clean-results

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,strict]'
	touch $@

run: setup
	$(BIN)/snakemake --cores all

test: setup
	$(BIN)/pytest

clean-results:
	rm -rf results/* .snakemake
	touch results/.gitkeep
