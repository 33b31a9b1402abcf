#!/usr/bin/env bash
# A Python with every-eval-ever (the Every Eval Ever schema and its `validate` command), in a venv
# outside the checkout, for tests/unit/export/test_export.py (TCSEXAM_EEE_PYTHON). Prints that
# Python's path on stdout (everything else goes to stderr); fails loudly.
#
# every-eval-ever 0.3.0 requires Python >= 3.12 and this project runs on 3.11, so it is no
# dependency of tcsexam. With a Python >= 3.12 here it is installed with its dependencies. Else
# (3.11) `pip install --ignore-requires-python every-eval-ever` fails (its numpy >= 2.4.1 needs
# 3.12 too), so the package alone is installed (--ignore-requires-python --no-deps) with what its
# validate command imports (pydantic, jsonschema, rich, pyyaml, requests): checked to run on 3.11.
set -euo pipefail
VERSION=${EEE_VERSION:-0.3.0}
DEST=${1:-/var/cache/tcsexam/eee-venv}

have() { [ -x "$DEST/bin/python" ] && "$DEST/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('every-eval-ever') != '$VERSION')" 2>/dev/null; }

if ! have; then
    rm -rf "$DEST"
    mkdir -p "$(dirname "$DEST")"
    PY=""
    for c in python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[23]*/bin/python3; do
        if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            PY=$c
            break
        fi
    done
    if [ -n "$PY" ]; then
        echo "eee-venv: $("$PY" --version) found: installing every-eval-ever==$VERSION with its dependencies" >&2
        "$PY" -m venv "$DEST" >&2
        "$DEST/bin/pip" install -q "every-eval-ever==$VERSION" >&2
    else
        echo "eee-venv: no Python >= 3.12 here: every-eval-ever==$VERSION with --ignore-requires-python --no-deps on $(python3 --version)" >&2
        python3 -m venv "$DEST" >&2
        "$DEST/bin/pip" install -q --ignore-requires-python --no-deps "every-eval-ever==$VERSION" >&2
        "$DEST/bin/pip" install -q "pydantic>=2.12.5,<3" "jsonschema>=4.26,<5" "rich>=14,<15" "pyyaml>=6" "requests>=2.32.5,<3" >&2
    fi
fi
# the validate command must start (its imports), else this environment is of no use
"$DEST/bin/python" -m every_eval_ever validate --help >/dev/null
echo "$DEST/bin/python"
