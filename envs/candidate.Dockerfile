# The candidate runtime image of the Docker sandbox: what a candidate may use, nothing of the harness.
# Python 3 with numpy, scipy, networkx, python-sat (>= 1.9.dev16: whole DRAT proofs from get_proof) and
# tsplib95 (the demo TSP programs' import), and Coq (coqc, coqchk: `tcsexam proof check` runs the proof
# checker in the candidate sandbox; Debian bookworm's Coq 8.16, the release the theorem tasks name).
# Build it with one command (see docs/runner.md):
#     make candidate-image                                   # BASE defaults to python:3.11-slim
#     make candidate-image BASE=tcsexam-base:bookworm        # a base built from Debian packages (CI)
# The build context is prepared by envs/build-candidate-image.sh: ca-bundle.crt is the CA bundle
# the host's pip uses (empty when there is none), needed where PyPI is reached through a proxy.
ARG BASE=python:3.11-slim
FROM ${BASE}
COPY ca-bundle.crt /tmp/ca-bundle.crt
ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN set -eu; \
    if ! command -v coqc >/dev/null || ! command -v coqchk >/dev/null; then \
        apt-get update && apt-get install -y --no-install-recommends coq && rm -rf /var/lib/apt/lists/*; \
    fi; \
    cert=""; if [ -s /tmp/ca-bundle.crt ]; then cert="--cert /tmp/ca-bundle.crt"; fi; \
    missing=""; \
    python3 -c 'import numpy' 2>/dev/null || missing="$missing numpy"; \
    python3 -c 'import scipy' 2>/dev/null || missing="$missing scipy"; \
    python3 -c 'import networkx' 2>/dev/null || missing="$missing networkx"; \
    python3 -c 'from pysat.solvers import Cadical195 as C; s = C(bootstrap_with=[[1], [-1]], with_proof=True); \
assert not s.solve() and s.get_proof()[-1].strip() == "0"' 2>/dev/null || missing="$missing python-sat>=1.9.dev16"; \
    python3 -c 'import tsplib95' 2>/dev/null || missing="$missing tsplib95"; \
    if [ -n "$missing" ]; then python3 -m pip install $cert $missing; fi; \
    rm -f /tmp/ca-bundle.crt; \
    python3 -c 'import numpy, scipy, networkx, tsplib95, pysat.solvers; pysat.solvers.Solver(name="cd19").delete()'; \
    coqc --print-version; coqchk --version >/dev/null
# candidates run as the harness's user with a read-only root file system, no network, /tmp a tmpfs
ENV PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8
CMD ["python3"]
