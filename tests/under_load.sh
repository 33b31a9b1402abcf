#!/usr/bin/env bash
# Run the test suite on a busy machine: two CPU-bound processes per core in the background (the
# load CI may meet on a shared machine), then pytest with any arguments given. The busy processes
# run at normal priority and are always stopped, whatever pytest's outcome. Usage:
#   tests/under_load.sh [pytest args...]      (make test-under-load runs it with no arguments)
# TCSEXAM_LOAD_PER_CORE sets the number of busy processes per core (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
per_core="${TCSEXAM_LOAD_PER_CORE:-2}"
n=$(( $(nproc) * per_core ))
pids=()
stop_load() { kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
trap stop_load EXIT INT TERM
for _ in $(seq "$n"); do
    sh -c 'while :; do :; done' &
    pids+=("$!")
done
echo "under_load: $n busy processes on $(nproc) cores" >&2
"${PYTEST:-.venv/bin/pytest}" "$@"
