"""Record keys of known inputs are the ones main computed before the run-path renovation (issue 22):
a changed key would rerun every record on resume. The literals were computed on main (1e5b621)."""

from __future__ import annotations

from tcsexam.records.digest import record_key
from tcsexam.runner.limiter import Limits
from tcsexam.tasks import parse_limits

SOLVER = {"cpu_s": None, "mem_mb": 1024, "nproc": 64, "output_mb": 16, "threads": 2, "wall_s": 10}
ORSPACE = {"cpu_s": None, "mem_mb": 4096, "nproc": None, "output_bytes": 67108864, "wall_s": 180.0}
RUN = {"cpu_s": 20.0, "disk_mb": 4096, "mem_mb": 1024, "nproc": 64, "output_bytes": 16777216, "wall_s": 10.0}
KEYS = [
    "sha256:7e19f0b7159628cab3e13ca61faf474ad74d0bfef69d4d5417c1b64f423502a8",
    "sha256:d6800db65b429535f85f77d3318858f0f52c36d6fafa073c9a392a039748fb0c",
    "sha256:76f2a7d9f47f0f17fa01e1769130c8a939dadcf86958907e18624704d22cddf9",
]


def test_limit_encodings_and_keys_are_mains():
    task_limits = parse_limits({"wall_s": 10, "mem_mb": 1024, "output_mb": 16, "nproc": 64})
    solver = dict(task_limits.task_dict(), threads=2)  # the Solver key's limits (orchestrate; main: TaskLimits.as_dict)
    orspace = Limits(wall_s=180.0, mem_mb=4096).as_dict()  # OR-Space's (orspace.execute)
    run = task_limits.for_threads(2).as_dict()
    assert (solver, orspace, run) == (SOLVER, ORSPACE, RUN)
    assert {k: type(v) for k, v in solver.items()} == {k: type(v) for k, v in SOLVER.items()}  # 10 stays 10
    keys = [
        record_key(
            candidate_hash="sha256:c",
            instance_hash="sha256:i",
            limits=lim,
            sandbox="bwrap",
            seed=0,
            meta={"n": 3},
            problem="maxcut",
            harness_version="X",
        )
        for lim in (solver, orspace, run)
    ]
    assert keys == KEYS
