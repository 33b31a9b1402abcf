"""What a run reads (the parsed instance, cached per process) and leaves beside its record, and whether its folders were still its own afterwards: the outcome's fields on the record, the candidate's stderr
tail, and what is kept beside the records (`Keep`): the final certificate (<attempt>/certificates, also
shown by `tcsexam view`) and the DRAT proof of an UNSAT answer (<attempt>/proofs), each named with its
sha256 in the record's `extra.kept`, so that `tcsexam check --record` re-checks the record later."""

from __future__ import annotations

import gzip
import hashlib
import re
from enum import StrEnum
from pathlib import Path
from typing import Any, TypedDict

from tcsexam.fileio import UntrustedFileError, atomic_write_bytes, read_untrusted
from tcsexam.limits import MiB
from tcsexam.records import InstanceRecord, Status
from tcsexam.runner.limiter import ProcessOutcome
from tcsexam.runner.ownership.scratch import scratch_intact
from tcsexam.runner.solver.verdict import Decision


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
#: the largest certificate or UNSAT proof kept beside the records by default (`tcsexam run
#: --keep-max-mb`); a bigger one is checked, not kept
KEEP_MAX_MB = 16
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


class Keep(StrEnum):
    """What a Solver run keeps beside its records so that a record can be re-checked later without
    rerunning (`tcsexam check --record`): `tcsexam run --keep`, the workflow's `run.keep`."""

    ALL = "all"  #: final certificates and the DRAT proofs of UNSAT answers (the default)
    PROOFS = "proofs"  #: only the DRAT proofs of UNSAT answers
    CERTIFICATES = "certificates"  #: only final certificates
    NONE = "none"

    @property
    def certificates(self) -> bool:
        return self in (Keep.ALL, Keep.CERTIFICATES)

    @property
    def proofs(self) -> bool:
        return self in (Keep.ALL, Keep.PROOFS)


#: where a run keeps them, beside records.json: <attempt>/certificates/<instance>.txt and
#: <attempt>/proofs/<instance>.drat.gz
CERTIFICATES_DIR = "certificates"
PROOFS_DIR = "proofs"
CERTIFICATE_SUFFIX, PROOF_SUFFIX = ".txt", ".drat.gz"


class Kept(TypedDict, total=False):
    """What a record's `extra.kept` says of a kept file: where it is (`file`, relative to the
    attempt folder), its `sha256` and `bytes`; or why it was not kept (`not_kept`)."""

    file: str
    sha256: str
    bytes: int
    not_kept: str


def keep_certificate(
    folder: str | None, name: object, solution: Path | None, max_bytes: int = KEEP_MAX_MB * MiB
) -> Kept | None:
    """Keep the run's final certificate (what the checker judges) as <folder>/<instance>.txt,
    atomically; a run that leaves none (or one not judged: a timeout, a crash) removes an older
    one, so a kept certificate is always this record's. Returns what the record's `extra.kept`
    says of it (`file` relative to the attempt folder, `sha256`, `bytes`; `not_kept` and why),
    None when nothing was to keep. Never raises: keeping is a convenience."""
    return _keep(folder, name, CERTIFICATE_SUFFIX, solution, max_bytes, compress=False)


def keep_proof(folder: str | None, name: object, proof: Path | None, max_bytes: int = KEEP_MAX_MB * MiB) -> Kept | None:
    """Keep the DRAT proof of a checked UNSAT answer as <folder>/<instance>.drat.gz (gzip; `sha256`
    and `bytes` are the proof's own), like `keep_certificate`; `tcsexam check --proof` reads it."""
    return _keep(folder, name, PROOF_SUFFIX, proof, max_bytes, compress=True)


def _keep(folder, name, suffix: str, source: Path | None, max_bytes: int, *, compress: bool) -> Kept | None:
    if not folder or not isinstance(name, str) or not _SAFE_NAME.fullmatch(name):
        return None
    target = Path(folder) / f"{name}{suffix}"
    try:
        data = None
        if source is not None:
            try:
                data = read_untrusted(source, max_bytes)
            except UntrustedFileError:
                data = None
        if data is None or len(data) > max_bytes:
            target.unlink(missing_ok=True)
            if data is None:
                return None
            return {"not_kept": f"larger than the {max_bytes // MiB} MiB kept (--keep-max-mb)"}
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, gzip.compress(data, mtime=0) if compress else data, durable=False)
    except OSError as exc:
        return {"not_kept": f"could not be written: {exc.strerror or exc}"}
    return {
        "file": f"{Path(folder).name}/{target.name}",
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }


def folders_lost(folders, work) -> Decision | None:
    """`infrastructure_error` when a folder of the run vanished or was replaced while it ran
    (`tcsexam.runner.solver.execute`), else None."""
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
