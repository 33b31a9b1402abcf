"""Per-instance record store: the resume point of a Solver-track run.

Every finished instance is written at once, atomically, to `<records-dir>/<instance>.json`
(the instance name made file-name safe by `record_filename`). Each record carries a key: the
sha256 of everything that determines the outcome (the candidate's files, the instance file, the
limits, the harness version, the sandbox, the seed, the instance's checker metadata). A rerun
reuses a record only if its key matches and its status is not `infrastructure_error`; everything
else is run again and replaced.

Every record also carries a digest of its own content (`tcsexam.records.digest.record_digest`, an HMAC
under the results tree's key, `tcsexam.records.key`). A record
that does not parse, fails its digest, names another instance or was made under another key is
never reused: it is set aside into `<records-dir>/.set-aside/<timestamp>/` (kept, with the reason
in `reasons.txt` there, never deleted) and its instance runs again.

`repair` moves chosen records aside (into `<records-dir>/.repaired/<timestamp>/`, nothing is
deleted) so that the next run redoes only those instances; damaged records are always chosen.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar, cast, overload

from tcsexam.errors import InputError
from tcsexam.fileio import aside_dir, atomic_write_json, exclusive_use, move_aside, read_json
from tcsexam.records import STATUSES, InstanceRecord, Status, StoredRecord
from tcsexam.records.digest import digest_problem
from tcsexam.records.key import RecordKey, ensure_key, find_key

REPAIRED_DIR = ".repaired"
SET_ASIDE_DIR = ".set-aside"
_SAFE = re.compile(r"[A-Za-z0-9_.+=,-]")


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


#: the record type of a store (`InstanceRecord`, OR-Space's `WorkspaceRecord`)
R = TypeVar("R", bound=StoredRecord)


@dataclass
class Lookup(Generic[R]):
    """Why a record is (not) reused: `reused` holds it when it is."""

    reused: R | None
    reason: str  #: "reused", "missing", "infrastructure_error", or a SET_ASIDE_REASONS entry
    detail: str = ""  #: what exactly is wrong with a record that is set aside


#: Reasons a stored record is set aside (moved into .set-aside/) instead of reused.
SET_ASIDE_REASONS = ("unreadable", "digest-mismatch", "wrong-instance", "key-changed")


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class RecordStore(Generic[R]):
    """The folder of one attempt's per-instance records (or of an OR-Space run's per-workspace
    records: `record_type` is then `tcsexam.orspace.record.WorkspaceRecord`; see `StoredRecord`)."""

    @overload
    def __init__(
        self: RecordStore[InstanceRecord], directory: str | os.PathLike, *, key: RecordKey | None = None
    ) -> None: ...
    @overload
    def __init__(self, directory: str | os.PathLike, record_type: type[R], key: RecordKey | None = None) -> None: ...
    def __init__(
        self,
        directory: str | os.PathLike,
        record_type: type[StoredRecord] = InstanceRecord,
        key: RecordKey | None = None,
    ) -> None:
        self.dir = Path(directory)
        self.record_type = cast("type[R]", record_type)  # InstanceRecord where the overload says so
        self._key = key
        self._looked = False  #: find_key ran (a tree without a key is not searched per record)
        self._aside: Path | None = None
        self.set_aside: list[tuple[str, str, str]] = []  #: (instance, reason, detail) this session

    @property
    def key(self) -> RecordKey | None:
        """The key its records are sealed with (given, or the tree's: `tcsexam.records.key.find_key`)."""
        if self._key is None and not self._looked:
            self._key, self._looked = find_key(self.dir), True
        return self._key

    @property
    def set_aside_dir(self) -> Path:
        """This session's folder for set-aside records (one per store object)."""
        if self._aside is None:
            self._aside = aside_dir(self.dir / SET_ASIDE_DIR)
        return self._aside

    def set_aside_record(self, instance: str, reason: str, detail: str = "") -> Path | None:
        """Move an instance's record file aside (kept, never deleted); None if it is gone."""
        path = self.path_for(instance)
        if not path.exists():
            return None
        dest = move_aside(path, self.set_aside_dir, f"{reason}: {detail}" if detail else reason)
        self.set_aside.append((instance, reason, detail))
        return dest

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

    def load(self, instance: str) -> R | None:
        """The stored record of an instance; None if absent. InputError if it is not a sound
        record (unparseable, no valid status, another instance's, or failing its digest)."""
        found = self.check(instance)
        if found.reason in SET_ASIDE_REASONS and found.reason != "key-changed":
            raise InputError(f"{self.path_for(instance)}: {found.detail}")
        return found.reused

    def check(self, instance: str, key: str | None = None) -> Lookup[R]:
        """Read and verify an instance's record (without moving anything)."""
        kind = self.record_type
        path = self.path_for(instance)
        if not path.exists():
            return Lookup(None, "missing")
        try:
            data = read_json(path, kind.KIND)
        except InputError as exc:
            return Lookup(None, "unreadable", str(exc).removeprefix(f"{path}: "))
        problem = kind.shape_problem(data)
        if problem is not None:
            return Lookup(None, "unreadable", problem)
        problem = digest_problem(data, self.key)
        if problem is not None:
            return Lookup(None, "digest-mismatch", problem)
        named = data.get(kind.NAME_FIELD)
        if named != instance:
            return Lookup(None, "wrong-instance", f"record is for {kind.NOUN} {named!r}, not {instance!r}")
        try:
            record = kind.from_dict(data)
        except TypeError as exc:
            return Lookup(None, "unreadable", f"not {_article(kind.KIND)}: {exc}")
        if key is not None and record.key != key:
            return Lookup(None, "key-changed", f"made under key {record.key}, this run's key is {key}")
        return Lookup(record, "reused")

    def lookup(self, instance: str, key: str) -> Lookup[R]:
        """The record to reuse for an instance, or why there is none. A damaged record, or one
        made under another key, is set aside (moved into .set-aside/, never deleted)."""
        found = self.check(instance, key)
        if found.reason in SET_ASIDE_REASONS:
            self.set_aside_record(instance, found.reason, found.detail)
            return found
        if found.reused is not None and found.reused.infrastructure_error:
            return Lookup(None, "infrastructure_error")
        return found

    def write(self, record: R) -> Path:
        path = self.path_for(getattr(record, self.record_type.NAME_FIELD))
        # no fsync per record (it cost 8 ms per instance on a busy 2-core machine, found with
        # benchmarks/throughput.py): the rename is atomic against a kill, and a record torn by a
        # power cut fails its digest, is set aside and rerun
        if self.key is None:  # a store on its own: the tree is the folder holding the records folder
            self._key = ensure_key(self.dir.parent, near=self.dir)
        atomic_write_json(path, record.to_dict(self.key), durable=False)
        return path

    def records(self) -> list[tuple[Path, R]]:
        """Every record in the folder (sorted by file name); InputError on a file that is not a
        sound record (see `scan` for a listing that tolerates them)."""
        out = []
        for path, record, problem in self.scan():
            if record is None:
                raise InputError(f"{path}: {problem}")
            out.append((path, record))
        return out

    def scan(self) -> list[tuple[Path, R | None, str]]:
        """Every record file in the folder (sorted by name) as (path, record, problem): record is
        None and problem says why when the file is not a sound record."""
        kind = self.record_type
        out: list[tuple[Path, R | None, str]] = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                data = read_json(path, kind.KIND)
            except InputError as exc:
                out.append((path, None, str(exc).removeprefix(f"{path}: ")))
                continue
            problem = kind.shape_problem(data)
            if problem is not None:
                out.append((path, None, problem))
                continue
            named = data.get(kind.NAME_FIELD)
            if not isinstance(named, str) or record_filename(named) != path.name:
                out.append((path, None, f"record is for {kind.NOUN} {named!r}, not this file's"))
                continue
            problem = digest_problem(data, self.key)
            if problem is not None:
                out.append((path, None, problem))
                continue
            try:
                out.append((path, kind.from_dict(data), ""))
            except TypeError as exc:
                out.append((path, None, f"not {_article(kind.KIND)}: {exc}"))
        return out


@dataclass
class RepairResult:
    moved: list[tuple[str, str]]  #: (instance, status) moved aside; damaged files as (file name, problem)
    destination: Path | None  #: where they went (None when nothing was moved)
    kept: int  #: records left in place
    unknown_instances: list[str]  #: --instances names with no record
    damaged: int = 0  #: records moved because they were unreadable or failed their digest


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
    status when they are; `"any"` in `statuses` matches every status. A damaged record file (one
    that does not parse, names another instance or fails its digest) is always chosen.
    """
    store = RecordStore(records_dir)
    if not store.dir.is_dir():
        raise InputError(f"{store.dir}: records folder not found")
    names = None if instances is None else list(instances)
    if statuses is None:
        wanted = set(STATUSES) if names else {Status.INFRASTRUCTURE_ERROR}
    else:
        wanted = set()
        for s in statuses:
            if s == "any":
                wanted |= STATUSES
            elif s in STATUSES:
                wanted.add(Status(s))
            else:
                raise InputError(f"unknown status {s!r}: use one of {', '.join(sorted(STATUSES))} or 'any'")
    with contextlib.ExitStack() as hold:
        if not dry_run:  # never under a run that is writing the folder
            hold.enter_context(exclusive_use([(store.dir, True)]))
        return _choose_and_move(store, wanted, names, dry_run)


def _choose_and_move(store: RecordStore, wanted: set[Status], names: list[str] | None, dry_run: bool) -> RepairResult:
    scanned = store.scan()
    present = {rec.instance for _, rec, _ in scanned if rec is not None}
    chosen: list[tuple[Path, str, str, str]] = []  # (path, name, what, reason for reasons.txt)
    for path, rec, problem in scanned:
        if rec is None:
            chosen.append((path, path.name, problem, problem))
        elif rec.status in wanted and (names is None or rec.instance in names):
            chosen.append((path, rec.instance, rec.status, f"repair: status {rec.status}"))
    unknown = [] if names is None else [n for n in names if n not in present]
    destination = None
    if chosen and not dry_run:
        destination = aside_dir(store.dir / REPAIRED_DIR)
        for path, _, _, reason in chosen:
            move_aside(path, destination, reason)
    return RepairResult(
        moved=[(name, what) for _, name, what, _ in chosen],
        destination=destination,
        kept=len(scanned) - len(chosen),
        unknown_instances=unknown,
        damaged=sum(1 for _, rec, _ in scanned if rec is None),
    )


def records_file_problem(path: str | os.PathLike, records_dir: str | os.PathLike) -> str | None:
    """Why a records.json cannot be trusted (None when it can): it does not parse, a record fails
    its digest, or a record is not the very record stored for its instance in `records_dir`."""
    path = Path(path)
    try:
        data = read_json(path, "records file")
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    if not isinstance(data, list):
        return "not a JSON list of records"
    store = RecordStore(records_dir)
    key = find_key(path)
    seen: set[str] = set()
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            return f"record {i + 1} is not a JSON object"
        problem = digest_problem(rec, key)
        if problem is not None:
            return f"record {i + 1} ({rec.get('instance')!r}): {problem}"
        name = rec.get("instance")
        if not isinstance(name, str) or not name or name in seen:
            return f"record {i + 1}: missing or repeated instance name {name!r}"
        seen.add(name)
        stored = store.check(name)
        if stored.reused is None:
            return (
                f"instance {name!r}: its stored record in {store.dir} is not usable ({stored.detail or stored.reason})"
            )
        if stored.reused.digest != rec.get("digest"):
            return f"instance {name!r}: differs from its stored record in {store.dir}"
    return None
