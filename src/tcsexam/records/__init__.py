"""The closed vocabularies (`Status`, `Termination`) and the instance record every Solver-track run
produces.

A record keeps apart what the solver claimed (`claimed`) from what the checker verified (`A`,
`solved`), like BenchExec keeps a tool's answer apart from the verdict. Records are versioned by
`schema_version`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Generic, Self, TypeVar

from tcsexam.containment import Limiter, SandboxName
from tcsexam.fileio import Json, JsonObject
from tcsexam.records.digest import DIGEST_FIELD, record_digest
from tcsexam.records.key import RecordKey

SCHEMA_VERSION = 1


class Status(StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    MEMOUT = "memout"
    CRASH = "crash"
    INVALID = "invalid"
    CERTIFICATE_FAILED = "certificate_failed"
    INFRASTRUCTURE_ERROR = "infrastructure_error"


class Termination(StrEnum):
    """How a run ended: every value an instance record's `termination` can carry (the limiter's
    `classify` decides the process ones, the runner sets the others)."""

    EXIT = "exit"  #: ended on its own (any exit code)
    WALLTIME = "walltime"
    CPUTIME = "cputime"
    MEMORY = "memory"
    OUTPUT = "output"  #: stdout, stderr or a watched file over the output cap
    NPROC = "nproc"  #: more processes/threads than allowed
    SIGNAL = "signal"  #: killed by a signal the harness did not send
    DISK = "disk"  #: more written in the run's work folder than `disk_mb` (status memout)
    LAUNCH = "launch"  #: the candidate's program could not be started (set by the runner)
    CANDIDATE = "candidate"  #: the candidate's solver.yaml is unusable (set by the runner)
    BUILD = "build"  #: the candidate's build step failed (set by the runner)
    INPUT = "input"  #: the candidate changed one of its inputs (set by the runner)


STATUSES: frozenset[Status] = frozenset(Status)
#: Solver-level failures: a completed observation that scores 0.
FAILURE_STATUSES: frozenset[Status] = frozenset(
    {Status.TIMEOUT, Status.MEMOUT, Status.CRASH, Status.INVALID, Status.CERTIFICATE_FAILED}
)
#: Statuses the scorer refuses: the judging input must be repaired first.
REFUSED_STATUSES: frozenset[Status] = frozenset({Status.INFRASTRUCTURE_ERROR})


E = TypeVar("E", bound=StrEnum)


def vocabulary_member(vocabulary: type[E], value: Json, field_name: str) -> E:
    """`value` as a member of the closed `vocabulary` (a member, or its string); TypeError naming the
    field otherwise (what a record's loader reports for a file that is not a record)."""
    if type(value) is vocabulary:
        return value
    try:
        return vocabulary(value)
    except ValueError:
        allowed = ", ".join(vocabulary)
        raise TypeError(f"{field_name} {value!r} is not one of {allowed}") from None


V = TypeVar("V")


class VocabularyField(Generic[V]):
    """A record field holding a member of a closed vocabulary (a `StrEnum`), as the default of a
    dataclass field: a string given at construction, on assignment or read back from JSON becomes
    the member (TypeError naming the field for a string outside it; None stays None); the record's
    `to_dict` writes it as its string. A `required` field has no default, the others None. Typed
    `VocabularyField[Status]` (or `[Termination | None]`): the type checker lets only a member (or
    None) in where the code names one; JSON read back goes through `from_dict`."""

    def __init__(self, vocabulary: type[StrEnum], *, required: bool = False):
        self.vocabulary = vocabulary
        self.required = required
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, record: object, owner: type | None = None) -> V:
        if record is None:  # the dataclass asks for the field's default
            if self.required:
                raise AttributeError(self.name)
            return None  # type: ignore[return-value]  # the default of an optional field
        value: V = record.__dict__[self.name]
        return value

    def __set__(self, record: object, value: V) -> None:
        if value is not None:
            value = vocabulary_member(self.vocabulary, value, self.name)  # type: ignore[assignment]
        record.__dict__[self.name] = value


class StoredRecord(ABC):
    """What the runner's `RecordStore` and pools need of a record type (a Solver instance record,
    an OR-Space workspace record): the field that names it and the words for it in messages, a
    shape check of decoded JSON, whether it is an infrastructure error, and its form after retries."""

    NAME_FIELD = ""  #: the field holding the name its file is called after
    NOUN = ""  #: what one is a record of ("instance")
    KIND = ""  #: what the record is called in messages ("instance record")
    #: field -> the closed vocabulary it holds (its `VocabularyField`s), set for each record type
    VOCABULARIES: Mapping[str, type[StrEnum]] = MappingProxyType({})
    message: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found = {name: d.vocabulary for name, d in vars(cls).items() if isinstance(d, VocabularyField)}
        cls.VOCABULARIES = MappingProxyType({**cls.VOCABULARIES, **found})

    #: (field, member): the record of a run the harness failed, not the program, holds it
    HARNESS_FAILURE: tuple[str, StrEnum]
    #: the record key it was made under (`digest.record_key`): a field of every record type
    key: str | None

    @classmethod
    @abstractmethod
    def shape_problem(cls, data: Json) -> str | None:
        """Why decoded JSON is not a record of this type (None when it is one)."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: JsonObject) -> Self:
        """The record `data` (decoded JSON) holds."""

    @abstractmethod
    def to_dict(self, key: RecordKey | None = None) -> JsonObject:
        """The record as written (with its digest under `key`)."""

    @property
    def infrastructure_error(self) -> bool:
        """Whether the harness, not the program, failed (the pools retry such a record)."""
        name, member = self.HARNESS_FAILURE
        return bool(getattr(self, name) == member)

    def tries_fields(self, tries: int) -> JsonObject:
        """The fields that note how many runs a retried record took (its `tries` field)."""
        return {"tries": tries}

    @classmethod
    @functools.cache
    def field_names(cls) -> tuple[str, ...]:
        """The record's fields, in the order they are written."""
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]  # every subclass is a dataclass

    @classmethod
    @functools.cache
    def _field_set(cls) -> frozenset[str]:
        return frozenset(cls.field_names())

    def _written(self, data: JsonObject, key: RecordKey | None) -> JsonObject:
        """`data` (the record's fields) as written: vocabulary members as their plain strings (what
        reads back), then `digest`, the HMAC of the rest under `key` (none without a key)."""
        for name in self.VOCABULARIES:
            if data.get(name) is not None:
                data[name] = str(data[name])
        if key is not None:
            data[DIGEST_FIELD] = record_digest(data, key)
        return data

    def retried(self, tries: int):
        """This record after `tries` runs (the pool's retry policy): the count noted, and an
        infrastructure error says "(after K tries)"."""
        message = f"{self.message} (after {tries} tries)".strip() if self.infrastructure_error else self.message
        return dataclasses.replace(self, message=message, **self.tries_fields(tries))  # type: ignore[type-var]  # a dataclass


@dataclass
class InstanceRecord(StoredRecord):
    """The outcome of one candidate on one instance: what the checker verified (`A`, `solved`) kept
    apart from what the solver claimed (`claimed`)."""

    instance: str
    status: VocabularyField[Status] = VocabularyField(Status, required=True)
    A: float | None = None  #: the objective recomputed from the certificate (objective tasks)
    solved: bool | None = None  #: the verified solved indicator (solve tasks)
    claimed: float | str | None = None  #: what the solver itself reported, kept only for comparison
    reward: float | None = None  #: the task checker's original reward (e.g. cut / best known)
    message: str = ""
    wall_s: float | None = None  #: wall-clock seconds of the run
    cpu_s: float | None = None  #: CPU seconds, children included
    peak_mem_mb: float | None = None
    exit_code: int | None = None
    signal: int | None = None  #: the signal that ended the program, if one did
    termination: VocabularyField[Termination | None] = VocabularyField(Termination)
    #: the sandbox it ran in (`none`: checked in this process, nothing run)
    sandbox: VocabularyField[SandboxName | None] = VocabularyField(SandboxName)
    #: the limiter that enforced the limits (`tcsexam.runner.limiter`; `docker`: Docker's own)
    limiter: VocabularyField[Limiter | None] = VocabularyField(Limiter)
    sandbox_image: str | None = None  #: the container image id (docker), part of `key`; absent when None
    key: str | None = None  #: the record key (`tcsexam.records.digest.record_key`): reused only under the same one
    candidate_hash: str | None = None  #: sha256 of the candidate's files, the one in `key` (provenance)
    task: str | None = None
    attempt: str | None = None
    harness_version: str | None = None  #: `tcsexam.HARNESS_VERSION` of the run
    extra: JsonObject = field(default_factory=dict)
    trace: list[list[Json]] | None = None  #: anytime tasks: [[t, status, value], ...]; absent when None
    schema_version: int = SCHEMA_VERSION
    digest: str | None = None  #: HMAC of the record's other fields (`record_digest`), set by to_dict

    NAME_FIELD = "instance"
    NOUN = "instance"
    KIND = "instance record"
    HARNESS_FAILURE = ("status", Status.INFRASTRUCTURE_ERROR)

    def tries_fields(self, tries: int) -> JsonObject:
        return {"extra": {**self.extra, "tries": tries}}

    @classmethod
    def shape_problem(cls, data: Json) -> str | None:
        """Why decoded JSON is not an instance record (None when it is one)."""
        if not isinstance(data, dict) or data.get("status") not in STATUSES:
            return "not an instance record (no valid 'status')"
        return None

    def to_dict(self, key: RecordKey | None = None) -> JsonObject:
        """The record as written: every field plus `digest`, the HMAC of the rest under `key` (the
        results tree's `tcsexam.records.key`); without a key, the fields alone (no digest)."""
        # the fields in their order, `extra` deep-copied: what dataclasses.asdict gives, without
        # its recursion over every field (a third of the cost of writing a record)
        data = {name: getattr(self, name) for name in self.field_names()}
        data["extra"] = copy.deepcopy(self.extra) if self.extra else {}
        if not data["extra"]:
            del data["extra"]
        if data["sandbox_image"] is None:
            del data["sandbox_image"]
        if data["trace"] is None:
            del data["trace"]
        else:
            data["trace"] = [list(row) for row in data["trace"]]
        data.pop(DIGEST_FIELD, None)
        return self._written(data, key)

    @classmethod
    def from_dict(cls, data: JsonObject) -> Self:
        names = cls._field_set()
        known = {k: v for k, v in data.items() if k in names}
        extra = dict(known.pop("extra", None) or {})
        extra.update({k: v for k, v in data.items() if k not in names})
        return cls(**known, extra=extra)
