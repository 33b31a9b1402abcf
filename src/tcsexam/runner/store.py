"""Per-instance record store: the resume point of a Solver-track run.

Every finished instance is written at once, atomically, to `<records-dir>/<instance>.json`
(the instance name made file-name safe by `record_filename`). Each record carries a key: the
sha256 of everything that determines the outcome (the candidate's files, the instance file, the
limits, the harness version, the sandbox, the seed, the instance's checker metadata). A rerun
reuses a record only if its key matches and its status is not `infrastructure_error`; everything
else is run again and replaced.

`repair` moves chosen records aside (into `<records-dir>/.repaired/<timestamp>/`, nothing is
deleted) so that the next run redoes only those instances.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcsexam import HARNESS_VERSION
from tcsexam.errors import InputError
from tcsexam.fileio import atomic_write_json, read_json
from tcsexam.records import STATUSES, InstanceRecord, Status

#: Folders and files of a candidate that do not define it (caches the interpreter writes).
IGNORED_DIRS = frozenset({"__pycache__", ".git", ".pytest_cache", ".mypy_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")
REPAIRED_DIR = ".repaired"
_SAFE = re.compile(r"[A-Za-z0-9_.+=,-]")
_CHUNK = 1 << 20


def record_filename(instance: str) -> str:
    """A file name for an instance's record: safe characters kept, others as `%XX` (UTF-8).

    The encoding is injective (a literal `%` is escaped too), so two instances never share a
    file; a leading dot is escaped so no record is hidden.
    """
    if not instance:
        raise InputError("an instance name must not be empty")
    out = []
    for i, ch in enumerate(instance):
        if _SAFE.fullmatch(ch) and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out) + ".json"


def _hash_file_into(h: hashlib._Hash, path: Path) -> None:
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


def hash_file(path: str | os.PathLike) -> str:
    """sha256 of a file's bytes (read in 1 MiB chunks); InputError naming the file if unreadable."""
    path = Path(path)
    h = hashlib.sha256()
    try:
        _hash_file_into(h, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read instance file: {exc.strerror or exc}") from None
    return h.hexdigest()


def candidate_files(directory: str | os.PathLike) -> list[Path]:
    """The files that define a candidate, as sorted relative paths (caches left out)."""
    root = Path(directory)
    files = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in filenames:
            if name.endswith(IGNORED_SUFFIXES):
                continue
            files.append((Path(dirpath) / name).relative_to(root))
    return sorted(files, key=lambda p: p.as_posix())


def hash_candidate(directory: str | os.PathLike) -> str:
    """sha256 over the candidate's relative paths and file contents, in sorted order.

    A symbolic link is hashed by its target text (a link out of the folder is not followed).
    """
    root = Path(directory)
    h = hashlib.sha256()
    for rel in candidate_files(root):
        full = root / rel
        h.update(b"path\0" + rel.as_posix().encode("utf-8") + b"\0")
        try:
            if full.is_symlink():
                h.update(b"link\0" + os.readlink(full).encode("utf-8") + b"\0")
            else:
                st = full.stat()
                h.update(b"file\0%d\0%d\0" % (st.st_size, st.st_mode & 0o111))
                _hash_file_into(h, full)
        except OSError as exc:
            raise InputError(f"{full}: cannot read candidate file: {exc.strerror or exc}") from None
    return h.hexdigest()


def _canonical(obj: Any) -> Any:
    """JSON-able form with stable ordering; numbers that are integral floats stay distinct."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def record_key(
    *,
    candidate_hash: str,
    instance_hash: str,
    limits: Mapping[str, Any],
    sandbox: str,
    seed: int,
    meta: Mapping[str, Any] | None = None,
    problem: str | None = None,
    harness_version: str = HARNESS_VERSION,
) -> str:
    """The key of one (candidate, instance, limits, harness, sandbox, seed) combination."""
    payload = {
        "candidate": candidate_hash,
        "instance": instance_hash,
        "limits": _canonical(dict(limits)),
        "sandbox": sandbox,
        "seed": seed,
        "meta": _canonical(dict(meta or {})),
        "problem": problem,
        "harness_version": harness_version,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Lookup:
    """Why a record is (not) reused: `reused` holds it when it is."""

    reused: InstanceRecord | None
    reason: str  #: "reused", "missing", "key-changed", "infrastructure_error", "unreadable"


class RecordStore:
    """The folder of one attempt's per-instance records."""

    def __init__(self, directory: str | os.PathLike):
        self.dir = Path(directory)

    def path_for(self, instance: str) -> Path:
        return self.dir / record_filename(instance)

    def prepare(self) -> None:
        """Create the folder and remove temp files a killed writer left behind."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{self.dir}: cannot create records folder: {exc.strerror}") from None
        if not self.dir.is_dir():
            raise InputError(f"{self.dir}: records folder is not a folder")
        for leftover in self.dir.glob(".*.json.*.tmp"):
            try:
                leftover.unlink()
            except OSError:
                pass

    def load(self, instance: str) -> InstanceRecord | None:
        """The stored record of an instance; None if absent. InputError if it is not a record."""
        path = self.path_for(instance)
        if not path.exists():
            return None
        data = read_json(path, "instance record")
        if not isinstance(data, dict) or data.get("status") not in STATUSES:
            raise InputError(f"{path}: not an instance record (no valid 'status')")
        if data.get("instance") != instance:
            raise InputError(f"{path}: record is for instance {data.get('instance')!r}, not {instance!r}")
        return InstanceRecord.from_dict(data)

    def lookup(self, instance: str, key: str) -> Lookup:
        try:
            record = self.load(instance)
        except InputError:
            return Lookup(None, "unreadable")
        if record is None:
            return Lookup(None, "missing")
        if record.status == Status.INFRASTRUCTURE_ERROR:
            return Lookup(None, "infrastructure_error")
        if record.key != key:
            return Lookup(None, "key-changed")
        return Lookup(record, "reused")

    def write(self, record: InstanceRecord) -> Path:
        path = self.path_for(record.instance)
        atomic_write_json(path, record.to_dict())
        return path

    def records(self) -> list[tuple[Path, InstanceRecord]]:
        """Every record in the folder (sorted by file name); InputError on a file that is not one."""
        out = []
        for path in sorted(self.dir.glob("*.json")):
            data = read_json(path, "instance record")
            if not isinstance(data, dict) or data.get("status") not in STATUSES:
                raise InputError(f"{path}: not an instance record (no valid 'status')")
            if "instance" not in data:
                raise InputError(f"{path}: instance record has no 'instance'")
            out.append((path, InstanceRecord.from_dict(data)))
        return out


@dataclass
class RepairResult:
    moved: list[tuple[str, str]]  #: (instance, status) moved aside
    destination: Path | None  #: where they went (None when nothing was moved)
    kept: int  #: records left in place
    unknown_instances: list[str]  #: --instances names with no record


def repair(
    records_dir: str | os.PathLike,
    *,
    statuses: Iterable[str] | None = None,
    instances: Iterable[str] | None = None,
    dry_run: bool = False,
) -> RepairResult:
    """Move chosen records into `<records-dir>/.repaired/<timestamp>/` so the next run redoes them.

    A record is chosen when its status is in `statuses` and (if given) its instance in
    `instances`. `statuses=None` means `infrastructure_error` when no instances are named and any
    status when they are; `"any"` in `statuses` matches every status.
    """
    store = RecordStore(records_dir)
    if not store.dir.is_dir():
        raise InputError(f"{store.dir}: records folder not found")
    names = None if instances is None else list(instances)
    if statuses is None:
        wanted = set(STATUSES) if names else {Status.INFRASTRUCTURE_ERROR.value}
    else:
        wanted = set()
        for s in statuses:
            if s == "any":
                wanted |= STATUSES
            elif s in STATUSES:
                wanted.add(s)
            else:
                raise InputError(f"unknown status {s!r}: use one of {', '.join(sorted(STATUSES))} or 'any'")
    all_records = store.records()
    present = {rec.instance for _, rec in all_records}
    chosen = [
        (path, rec) for path, rec in all_records if rec.status in wanted and (names is None or rec.instance in names)
    ]
    unknown = [] if names is None else [n for n in names if n not in present]
    destination = None
    if chosen and not dry_run:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        destination = store.dir / REPAIRED_DIR / stamp
        n = 1
        while destination.exists():
            n += 1
            destination = store.dir / REPAIRED_DIR / f"{stamp}-{n}"
        destination.mkdir(parents=True)
        for path, _ in chosen:
            os.replace(path, destination / path.name)
    return RepairResult(
        moved=[(rec.instance, rec.status) for _, rec in chosen],
        destination=destination,
        kept=len(all_records) - len(chosen),
        unknown_instances=unknown,
    )
