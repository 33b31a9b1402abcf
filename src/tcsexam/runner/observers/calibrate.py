"""Machine calibration: a fixed, deterministic CPU micro-benchmark every Solver job runs before its
first candidate, so that two runs' machines can be compared by how fast they were, not only by
their CPU model names.

Two parts, reported separately, each the minimum over `REPEATS` timed repetitions of the same work
(the minimum is the usual estimate of a benchmark's uncontended time), timed by this thread's CPU
clock (`time.thread_time`), so that time spent descheduled on a busy node is not counted:

- `python`: pure-Python integer work (a linear congruential generator folded into a checksum,
  `PY_STEPS` steps per repetition);
- `numpy`: vectorised work on `NP_SIZE` float64 values from a fixed-seed generator (sort, cumsum,
  elementwise sqrt/sin), single-threaded by nature (no BLAS).

`speed` of a part is `REF_<part>_S / seconds` (1.0 on the machine the constants were measured on,
higher is faster); `speed` overall is the geometric mean of the two. Each part's checksum is
fixed, so a wrong (e.g. optimised-away) computation is noticed. About 0.3 s in all here.

Once per run and machine: a workflow run's fork server (`tcsexam.forkserver`) has a child of its
own measure the machine (`measure_for_run`: the median of `RUN_MEASUREMENTS` measurements) as the
server starts serving, into a file in the server's private folder; every Solver and construction job the server
serves afterwards records that measurement (`"scope": "run"`) instead of spending 0.3 s of its
core on its own (29 jobs in the bundled default: about 7 core-seconds). A job that runs on its own
(a standalone `tcsexam run`, a cluster node, `run.fork_server: false`, or served before the
measurement was there) measures itself (`"scope": "job"`). Both are the same benchmark (`VERSION`).
"""

from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.fileio import JsonObject, atomic_write_json, read_json
from tcsexam.layout import ResultsLayout

VERSION = 1
REPEATS = 5
#: the run's one measurement (`measure_for_run`) is the median of this many of a job's (each the
#: minimum of `REPEATS` repetitions): the estimate the manifest's summary, the median over the
#: jobs, made when every job measured (a minimum of 15 repetitions instead read 3-10 % faster
#: than a job's own: another estimate; benchmarks/anytime.py --calibration-only)
RUN_MEASUREMENTS = 3
PY_STEPS = 120_000
NP_SIZE = 400_000
#: the parts' CPU times on the reference machine (the 2-core development machine, loaded)
REF_PYTHON_S = 0.030
REF_NUMPY_S = 0.024
FILE_NAME = "calibration.json"


def _python_part() -> int:
    x, acc = 12345, 0
    for _ in range(PY_STEPS):
        x = (1103515245 * x + 12345) & 0x7FFFFFFF
        acc ^= x >> 7
    return acc


def _numpy_part() -> float:
    rng = np.random.default_rng(20260925)
    a = rng.random(NP_SIZE)
    b = np.sort(a)
    c = np.cumsum(b)
    return float(np.sqrt(c).sum() + np.sin(a).sum())


def _timed(fn, repeats: int) -> tuple[float, Any]:
    best, value = math.inf, None
    for _ in range(repeats):
        t0 = time.thread_time()
        value = fn()
        best = min(best, time.thread_time() - t0)
    return best, value


def calibrate(repeats: int = REPEATS) -> JsonObject:
    """Run the benchmark once: {version, python_s, numpy_s, python_speed, numpy_speed, speed, ...}."""
    py_s, py_sum = _timed(_python_part, repeats)
    np_s, np_sum = _timed(_numpy_part, repeats)
    py_speed, np_speed = REF_PYTHON_S / py_s, REF_NUMPY_S / np_s
    return {
        "version": VERSION,
        "python_s": round(py_s, 6),
        "numpy_s": round(np_s, 6),
        "python_speed": round(py_speed, 4),
        "numpy_speed": round(np_speed, 4),
        "speed": round(math.sqrt(py_speed * np_speed), 4),
        "checksums": [py_sum, round(np_sum, 3)],
        "repeats": repeats,
    }


#: the file of this run's measurement on this machine (`measure_for_run`), set by the fork server
#: before it serves: the jobs it forks inherit the name; None outside a served job
run_file: Path | None = None


def run_measurement() -> JsonObject:
    """The run's one measurement of this machine: the median (by speed) of `RUN_MEASUREMENTS`."""
    measured = sorted((calibrate() for _ in range(RUN_MEASUREMENTS)), key=lambda m: m["speed"])
    return {**measured[len(measured) // 2], "scope": "run", "measurements": RUN_MEASUREMENTS}


def measure_for_run(path: str | os.PathLike[str]) -> None:
    """`run_measurement`, written atomically to `path` (a job that finds no file measures itself)."""
    atomic_write_json(path, run_measurement())


def _read_run_measurement() -> JsonObject | None:
    """The run's measurement (`run_file`) when there is one of this benchmark version."""
    if run_file is None or not run_file.is_file():
        return None
    try:
        data = read_json(run_file, "calibration file")
    except Exception:  # unreadable: the job measures itself
        return None
    return data if isinstance(data, dict) and data.get("version") == VERSION else None


def speed_ratio(base: JsonObject | None, cand: JsonObject | None) -> float | None:
    """How much faster the candidate's machine was (cand speed / base speed); None when either
    calibration is missing or from another benchmark version."""
    if not base or not cand or base.get("version") != cand.get("version"):
        return None
    b, c = base.get("speed"), cand.get("speed")
    if not isinstance(b, (int, float)) or not isinstance(c, (int, float)) or b <= 0 or c <= 0:
        return None
    return c / b


def job_calibration(output, *, rerun: bool, say=None, label: str = "") -> JsonObject:
    """A Solver job's calibration (`write_job_calibration` stores it beside records.json once the
    job wrote its records): when the job runs candidates (`rerun`) or none is stored yet, the run's
    measurement of this machine where its fork server made one (`run_file`), else measured now;
    otherwise the stored one (every record was reused: the machine that made them was measured)."""
    path = Path(output).with_name(FILE_NAME)
    if not rerun and path.is_file():
        try:
            stored = read_json(path, "calibration file")
            if isinstance(stored, dict) and stored.get("version") == VERSION:
                return stored
        except Exception:  # unreadable: measure again
            pass
    result = _read_run_measurement() or {**calibrate(), "scope": "job"}
    if say is not None:
        whose = "the run's on this machine" if result["scope"] == "run" else "measured now"
        say(
            f"{label}: machine calibration ({whose}): python {result['python_s'] * 1e3:.1f} ms (speed "
            f"{result['python_speed']:.2f}), numpy {result['numpy_s'] * 1e3:.1f} ms (speed {result['numpy_speed']:.2f}) "
            f"-> {path}"
        )
    return result


def write_job_calibration(output: str | Path, calibration: JsonObject | None) -> None:
    """`calibration.json` beside the job's records.json (atomic)."""
    atomic_write_json(Path(output).with_name(FILE_NAME), calibration)


def collect(run_dir) -> JsonObject:
    """The manifest's `calibration` section: every Solver job's calibration (model -> task ->
    attempt) and their summary (median of each speed over the jobs; None without any)."""
    jobs: JsonObject = {}
    found = []
    for model, task, attempt, path in ResultsLayout(run_dir).solver_files(FILE_NAME):
        try:
            data = read_json(path, "calibration file")
        except Exception:  # a damaged file counts as missing: the summary says how many were read
            continue
        if isinstance(data, dict) and data.get("version") == VERSION:
            jobs.setdefault(model, {}).setdefault(task, {})[attempt] = data
            found.append(data)
    summary = None
    if found:
        summary = {"version": VERSION, "jobs": len(found)}
        for key in ("python_s", "numpy_s", "python_speed", "numpy_speed", "speed"):
            summary[key] = round(statistics.median(d[key] for d in found), 6)
    return {"summary": summary, "jobs": {m: dict(sorted(t.items())) for m, t in sorted(jobs.items())}}
