"""What a run reads (the parsed instance, cached per process) and leaves beside its record, and whether its folders were still its own afterwards: the outcome's fields on the record, the candidate's stderr
tail, and the final certificate kept for `tcsexam view` (under <attempt>/certificates)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tcsexam.fileio import UntrustedFileError, atomic_write_bytes, read_untrusted
from tcsexam.records import InstanceRecord, Status
from tcsexam.runner.limiter import ProcessOutcome
from tcsexam.runner.limiter.scratch import scratch_intact
from tcsexam.runner.verdict import Decision


def record_outcome(record: InstanceRecord, outcome: ProcessOutcome) -> None:
    """What the process outcome puts on the record (its status aside)."""
    record.wall_s = outcome.wall_s
    record.cpu_s = outcome.cpu_s
    record.peak_mem_mb = outcome.peak_mem_mb
    record.exit_code = outcome.exit_code
    record.signal = outcome.signal
    record.termination = outcome.termination
    record.sandbox = outcome.sandbox or record.sandbox
    record.limiter = outcome.limiter
    tail = (outcome.stderr_tail or "").strip()
    if tail:  # what the candidate said last (bounded): shown beside the record by `tcsexam view`
        record.extra["stderr_tail"] = tail[-STDERR_TAIL_CHARS:]


#: how much of a candidate's stderr a record keeps (`extra.stderr_tail`)
STDERR_TAIL_CHARS = 2000
#: the largest certificate kept beside the records (a bigger one is checked, not kept)
KEEP_CERTIFICATE_BYTES = 1 << 20
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


def keep_certificate(folder: str | None, name: object, solution: Path | None) -> None:
    """Keep the run's final certificate (what the checker judges) as <certificates_dir>/<instance>.txt,
    atomically; a run that leaves none (or one not judged: a timeout, a crash) removes an older
    one, so a kept certificate is always this record's. Never raises: keeping is a convenience."""
    if not folder or not isinstance(name, str) or not _SAFE_NAME.fullmatch(name):
        return
    target = Path(folder) / f"{name}.txt"
    try:
        data = None
        if solution is not None:
            try:
                data = read_untrusted(solution, KEEP_CERTIFICATE_BYTES)
            except UntrustedFileError:
                data = None
        if data is None or len(data) > KEEP_CERTIFICATE_BYTES:
            target.unlink(missing_ok=True)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data, durable=False)
    except OSError:
        pass


def folders_lost(folders, work) -> Decision | None:
    """`infrastructure_error` when a folder of the run vanished or was replaced while it ran
    (`tcsexam.runner.execute`), else None."""
    checked = [*folders, *([work] if work else [])]
    for path, identity in checked:
        if not scratch_intact(path, identity):
            what = "work" if work and path == work[0] else "scratch"
            return Decision(
                Status.INFRASTRUCTURE_ERROR,
                f"the run's {what} folder {path} vanished or was replaced while the candidate ran "
                "(removed or swapped from outside the run: the machine's fault, retried)",
            )
    return None


_parsed_cache: dict[tuple[str, str, int, int], Any] = {}


def parsed_instance(problem, path: Path):
    """Parsed instances are cached per process (an actor runs many candidates on one task)."""
    st = path.stat()
    key = (problem.name, str(path), st.st_mtime_ns, st.st_size)
    parsed = _parsed_cache.get(key)
    if parsed is None:
        if len(_parsed_cache) > 64:
            _parsed_cache.clear()
        parsed = problem.parse_instance(path)
        _parsed_cache[key] = parsed
    return parsed
