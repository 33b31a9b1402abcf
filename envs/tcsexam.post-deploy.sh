#!/usr/bin/env bash
# Snakemake runs this once, inside the new environment, after it created envs/tcsexam.yaml's
# environment (`--software-deployment-method conda`). It installs the tcsexam package that the
# running Snakemake imports (TCSEXAM_SOURCE, set by rules/common.smk) in editable mode: the
# environment then runs this very checkout, wherever Snakemake keeps its copy of these files
# (.snakemake/conda/ or any --conda-prefix). Dependencies come from the environment file (--no-deps).
set -euo pipefail
src="${TCSEXAM_SOURCE:-}"
if [ -z "$src" ] || [ ! -f "$src/pyproject.toml" ]; then
    echo "tcsexam post-deploy: TCSEXAM_SOURCE='${src}' is not the tcsexam repository (no pyproject.toml); run snakemake from a checkout with tcsexam installed (make setup)" >&2
    exit 1
fi
python -m pip install --no-deps --no-build-isolation --editable "$src"
