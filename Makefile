# Set-up and entry points. `make run` and `make test` create .venv on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)

.PHONY: setup run test test-under-load lint bench clean-results candidate-image orspace-image

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

# The suite with two busy processes per core in the background: no test outcome may depend on speed.
test-under-load: setup
	PYTEST=$(BIN)/pytest tests/under_load.sh

# The lint gates CI applies: ruff (rules and format, configured in pyproject.toml), snakefmt, snakemake --lint.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint

# The Docker sandbox's candidate image (envs/candidate.Dockerfile): Python 3, numpy, scipy, networkx,
# python-sat. BASE: a slim Python image where a registry is reachable, or a Debian base (.ci/docker-base.sh).
BASE ?= python:3.11-slim
CANDIDATE_IMAGE ?= tcsexam-candidate:latest
candidate-image:
	bash envs/build-candidate-image.sh $(CANDIDATE_IMAGE) $(BASE)

# The OR-Space sandbox image (envs/orspace.Dockerfile): the candidate image plus PuLP + CBC, highspy,
# gurobipy and coptpy (envs/orspace-requirements.txt). Needs the candidate image (make candidate-image).
ORSPACE_IMAGE ?= tcsexam-orspace:latest
orspace-image:
	bash envs/build-orspace-image.sh $(ORSPACE_IMAGE) $(CANDIDATE_IMAGE)

clean-results:
	rm -rf results/* .snakemake
	touch results/.gitkeep
