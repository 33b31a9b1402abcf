"""A run's heartbeat: `heartbeat.json` beside its records.json, rewritten atomically every few
seconds while the job runs, and once more with its final state. It is what `tcsexam status`
reads to tell running jobs from finished or lost ones, and to count statuses without opening
tens of thousands of record files. The same timer logs a progress line every `progress_every_s`
(the log-friendly progress of a cluster job, whose stderr is a file).

Fields: ``format`` (1), ``task``, ``attempt``, ``state`` (running | finished | failed |
interrupted), ``host``, ``pid``, ``slurm_job_id``, ``started`` and ``updated`` (Unix times),
``interval_s``, ``planned`` (instances of this run), ``reused``, ``executed`` (run by this job),
``done`` (reused + executed), ``statuses`` (status -> count over ``done``), ``sandbox``,
``limiter``, and once the runs went somewhere ``pool`` (``ray`` or ``in-process``: `tcsexam run
--pool`, decided from the task's size and limits under ``auto``), and ``usage``: the job's own
CPU seconds (``cpu_s``) and peak resident memory (``max_rss_mb``), this process's with those of
the processes it waited for (the candidates of an in-process pool, the DRAT checks, the builds;
not the Ray workers). That is what a job's Snakemake `benchmark:` measured of its process tree,
which a command run by the workflow's fork server is not part of. A heartbeat that cannot be
written (a full disk) is logged once and never stops the run.
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from tcsexam.containment import Limiter, SandboxName
from tcsexam.fileio import atomic_write_json

HEARTBEAT_NAME = "heartbeat.json"
HEARTBEAT_FORMAT = 1
DEFAULT_INTERVAL_S = 5.0
DEFAULT_PROGRESS_EVERY_S = 60.0


def heartbeat_path(output: str | os.PathLike) -> Path:
    """Where the run writing `output` (its records.json) keeps its heartbeat."""
    return Path(output).parent / HEARTBEAT_NAME


def job_usage() -> dict[str, float]:
    """This process's CPU seconds and peak resident memory (MB) with those of the children it
    waited for (their own waited-for descendants included)."""
    me, waited = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + waited.ru_utime + waited.ru_stime
    return {"cpu_s": round(cpu, 3), "max_rss_mb": round(max(me.ru_maxrss, waited.ru_maxrss) / 1024, 1)}


def duration_text(seconds: float | None) -> str:
    """'45 s', '12 min', '3 h 05 min', or '?'."""
    if seconds is None or seconds != seconds or seconds < 0 or seconds == float("inf"):
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


class Heartbeat:
    """Begun once the run knows what it will do (`begin`), told of every record (`record`),
    closed with the run's final state (`close`)."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        progress_every_s: float | None = DEFAULT_PROGRESS_EVERY_S,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.interval_s = float(interval_s)
        self.progress_every_s = progress_every_s
        self.log = log
        self.data: dict | None = None
        self.statuses: Counter = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._write_failed = False
        self._t0 = time.monotonic()
        self._last_progress = self._t0

    def begin(
        self, *, task: str, attempt: str | None, planned: int, reused: Counter, sandbox: SandboxName, limiter: Limiter
    ):
        with self._lock:
            self.statuses = Counter(reused)
            self.data = {
                "format": HEARTBEAT_FORMAT,
                "task": task,
                "attempt": attempt,
                "state": "running",
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
                "started": time.time(),
                "updated": None,
                "interval_s": self.interval_s,
                "planned": int(planned),
                "reused": int(sum(reused.values())),
                "executed": 0,
                "done": int(sum(reused.values())),
                "statuses": {},
                "sandbox": sandbox,
                "limiter": limiter,
            }
        self._t0 = self._last_progress = time.monotonic()
        self._write()
        self._thread = threading.Thread(target=self._beat, name="tcsexam-heartbeat", daemon=True)
        self._thread.start()

    def note(self, **fields: str) -> None:
        """Add fields to the heartbeat (e.g. where the runs went), written with the next beat."""
        with self._lock:
            if self.data is not None:
                self.data.update(fields)

    def record(self, status: str) -> None:
        with self._lock:
            self.statuses[status] += 1
            if self.data is not None:
                self.data["executed"] += 1

    @contextlib.contextmanager
    def closing(self) -> Iterator[Heartbeat]:
        """Close with `finished` when the block ends normally, `interrupted` on SIGTERM's
        SystemExit or Ctrl-C, `failed` on any other exception."""
        state = "failed"
        try:
            yield self
            state = "finished"
        except (SystemExit, KeyboardInterrupt):
            state = "interrupted"
            raise
        finally:
            self.close(state)

    def close(self, state: str) -> None:
        """Stop the timer and write the final state (nothing when the run never began)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.data is None:
            return
        with self._lock:
            self.data["state"] = state
        self._write()

    # ---- internals ------------------------------------------------------------------------

    def _snapshot(self) -> dict:
        with self._lock:
            data = dict(self.data or {})
            data["statuses"] = dict(sorted(self.statuses.items()))
            data["done"] = int(sum(self.statuses.values()))
        data["updated"] = time.time()
        data["usage"] = job_usage()
        return data

    def _write(self) -> None:
        data = self._snapshot()
        try:
            atomic_write_json(self.path, data, durable=False)
        except Exception as exc:  # housekeeping: a heartbeat never stops a run
            if not self._write_failed and self.log is not None:
                self.log(f"{data.get('task')}: WARNING: cannot write the heartbeat {self.path}: {exc}")
            self._write_failed = True

    def progress_line(self, data: dict | None = None) -> str:
        data = data or self._snapshot()
        done, planned, executed = data["done"], data["planned"], data["executed"]
        elapsed = max(time.monotonic() - self._t0, 1e-9)
        rate = executed / elapsed
        eta = (planned - done) / rate if rate > 0 else None
        failures = sum(n for s, n in data["statuses"].items() if s != "ok")
        counts = " ".join(f"{s}={n}" for s, n in data["statuses"].items())
        pct = 100.0 * done / planned if planned else 100.0
        return (
            f"{data['task']}: progress {done}/{planned} ({pct:.0f}%), {executed} run in "
            f"{duration_text(elapsed)} ({rate:.2f}/s), {failures} not ok{', ' + counts if counts else ''}; "
            f"ETA {duration_text(eta) if done < planned else '0 s'}"
        )

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._write()
            every = self.progress_every_s
            if every and self.log is not None and time.monotonic() - self._last_progress >= every:
                self._last_progress = time.monotonic()
                self.log(self.progress_line())
