# The OR-Space sandbox image: the candidate image (envs/candidate.Dockerfile) plus the four solvers of
# the OR-Space paper, so Build/Revise programs find them under --sandbox docker:
#   PuLP with CBC (PyPI `pulp`, whose wheel bundles CBC, and Debian's `coinor-cbc` for COIN_CMD),
#   highspy (HiGHS), gurobipy (Gurobi) and coptpy (COPT).
# gurobipy and coptpy run with the size-limited licences their wheels ship (no licence file needed);
# a full licence is mounted read-only at run time (`tcsexam orspace execute --licence`), never built in.
# Build it with one command:  make orspace-image   (BASE defaults to the candidate image)
ARG BASE=tcsexam-candidate:latest
FROM ${BASE}
COPY ca-bundle.crt /tmp/ca-bundle.crt
COPY requirements.txt /tmp/orspace-requirements.txt
ENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN set -eu; \
    if command -v apt-get >/dev/null 2>&1; then \
        apt-get update && apt-get install -y --no-install-recommends coinor-cbc && rm -rf /var/lib/apt/lists/*; \
    fi; \
    cert=""; if [ -s /tmp/ca-bundle.crt ]; then cert="--cert /tmp/ca-bundle.crt"; fi; \
    python3 -m pip install $cert -r /tmp/orspace-requirements.txt; \
    rm -f /tmp/ca-bundle.crt /tmp/orspace-requirements.txt; \
    python3 -c 'import pulp, highspy, gurobipy, coptpy; assert pulp.PULP_CBC_CMD(msg=0).available()'
ENV PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8
CMD ["python3"]
