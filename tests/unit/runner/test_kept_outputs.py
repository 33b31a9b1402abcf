"""What a run keeps for the results explorer (`tcsexam view`): the candidate's stderr tail in the
record (`extra.stderr_tail`, bounded) and the final certificate as <attempt>/certificates/<instance>.txt,
removed again when a later run of the instance leaves none to judge (a crash, a timeout)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tcsexam.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_run_cli import write_task  # noqa: E402

SOLVE = """\
import os, sys
inst, sol, mode = sys.argv[1], sys.argv[2], sys.argv[3]
name = os.path.basename(inst)
n = int(open(inst).readline().split()[0])
print("x" * 5000 + " working on " + name, file=sys.stderr)
if mode == "crash" and name.startswith("b"):
    print("Traceback: boom on " + name, file=sys.stderr)
    sys.exit(3)
with open(sol, "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n")
"""


def _candidate(root: Path, mode: str) -> Path:
    cand = root / f"cand-{mode}"
    cand.mkdir()
    (cand / "solve.py").write_text(SOLVE)
    cmd = [sys.executable, "solve.py", "{instance}", "{solution}", mode]
    (cand / "solver.yaml").write_text(f"command: {json.dumps(cmd)}\nthreads: 1\n")
    return cand


def _run(task: Path, cand: Path, out: Path) -> dict[str, dict]:
    argv = ["run", "--task", str(task), "--candidate", str(cand), "--output", str(out), "--no-progress", "--no-ray"]
    assert main([*argv, "--sandbox", "local", "--allow-unsandboxed"]) == 0
    return {r["instance"]: r for r in json.loads(out.read_text())}


def test_stderr_tail_and_certificate_are_kept_and_a_stale_certificate_removed(tmp_path):
    task = write_task(tmp_path, names=("a", "b"))
    out = tmp_path / "attempt" / "records.json"
    recs = _run(task, _candidate(tmp_path, "ok"), out)
    assert {r["status"] for r in recs.values()} == {"ok"}
    for name, r in recs.items():
        tail = r["extra"]["stderr_tail"]
        assert tail.endswith(f"working on {name}.txt") and len(tail) == 2000
        n = int(r["A"]) + 1  # a path of n vertices, alternately cut: n - 1 edges
        kept = out.parent / "certificates" / f"{name}.txt"
        assert kept.read_text() == " ".join(str(v % 2) for v in range(n)) + "\n"
    # the same instances again with a candidate that crashes on b: b's old certificate goes
    recs = _run(task, _candidate(tmp_path, "crash"), out)
    assert recs["b"]["status"] == "crash" and "Traceback: boom on b.txt" in recs["b"]["extra"]["stderr_tail"]
    assert (out.parent / "certificates" / "a.txt").is_file()
    assert not (out.parent / "certificates" / "b.txt").exists()
