"""What a timeout's message says (issue 46): a valid certificate on disk that came too late, and
that `threads` sets the CPU budget when a run is killed on CPU time. Real runs under `local`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

LOCAL = get_sandbox("local")
GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"
WRITE = "open(sys.argv[1], 'w').write('0 1 0 1 1\\n')\n"
PROGRAMS = {
    # a valid certificate first, then still running at the limit
    "early": "import sys, time\n" + WRITE + "time.sleep(60)\n",
    # nothing until SIGTERM, then a valid certificate (after the limit)
    "late": "import signal, sys, time\n"
    "def on_term(*_):\n    " + WRITE.replace("\n", "\n    ") + "sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, on_term)\ntime.sleep(60)\n",
    # an invalid certificate, then still running
    "wrong": "import sys, time\nopen(sys.argv[1], 'w').write('0 1\\n')\ntime.sleep(60)\n",
    # a valid certificate, then burning CPU until killed on CPU time
    "spin": "import sys\n" + WRITE + "while True:\n    pass\n",
}


def task(folder: Path, limits: str):
    (folder / "g.txt").write_text(GRAPH)
    (folder / "task.yaml").write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{{limits}, mem_mb: 256, output_mb: 1, nproc: 32}}\n"
        f"instance_dir: {folder}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return load_task(folder / "task.yaml")


def run(folder: Path, t, how: str):
    cand = folder / f"cand-{how}"
    cand.mkdir()
    (cand / "s.py").write_text(PROGRAMS[how])
    (cand / "solver.yaml").write_text("command: [python3, s.py, '{solution}']\nthreads: 1\n")
    cand.chmod(0o755)
    scratch = folder / f"run-{how}"
    scratch.mkdir()
    scratch.chmod(0o755)
    return run_instance(
        t, "g", load_candidate(cand), sandbox=LOCAL, limits=t.limits.for_threads(1), seed=1, scratch_dir=scratch
    )


@pytest.fixture
def work(reachable_tmp):
    return reachable_tmp


def test_a_valid_certificate_before_the_limit_is_named_in_the_timeout(work):
    rec = run(work, task(work, "wall_s: 1"), "early")
    assert rec.status == "timeout" and rec.termination == "walltime", rec
    assert "a valid certificate was on disk but the program did not end within the limit" in rec.message
    assert rec.A is None


def test_a_valid_certificate_written_after_the_limit_is_named_so(work):
    rec = run(work, task(work, "wall_s: 1"), "late")
    assert rec.status == "timeout", rec
    assert "a valid certificate was on disk but it arrived after the limit" in rec.message, rec.message


def test_an_invalid_certificate_is_not_called_valid(work):
    rec = run(work, task(work, "wall_s: 1"), "wrong")
    assert rec.status == "timeout", rec
    assert "valid certificate" not in rec.message


def test_a_cpu_kill_says_that_threads_sets_the_budget(work):
    rec = run(work, task(work, "wall_s: 20, cpu_s: 1"), "spin")
    assert rec.status == "timeout" and rec.termination == "cputime", rec
    assert "the CPU budget is 1 s for threads: 1 in solver.yaml" in rec.message, rec.message
    assert "killed on CPU time before it ended" in rec.message
