"""What the Solver-track problem modules share (MaxCut, SAT, TSP, colouring, MaxSAT).

- `InstanceFile`: the instance format's name (in error lines), the suffix of generated files, the
  parser of its bytes, and how a certificate's size cap grows with the instance;
- `SolverProblem`: reads an instance file through the bounded reader and hands its bytes to the
  parser; caps a certificate at 64 KiB plus a few bytes per vertex, variable or city;
- `VectorProblem`: the whole check of a vector certificate (docs/problems.md's vector grammar):
  read the vector, recompute the value from it alone, compare a claimed value, the task's reward.
  A module says only what is its own: `vector_value`, `best_known`, `describe`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from tcsexam.problems import _common as c
from tcsexam.problems.base import CheckResult, Direction, InstanceT, Kind, Problem
from tcsexam.records import Status

#: every certificate may use this many bytes whatever the instance (comments, a value line)
CERTIFICATE_SLACK_BYTES = 65536


@dataclass(frozen=True)
class InstanceFile:
    format: str  #: the format's name in error lines, e.g. "DIMACS colouring"
    suffix: str  #: the suffix of generated instance files, e.g. ".col"
    parse: Callable[..., Any]  #: (bytes, path) -> the parsed instance; InputError naming the file
    entries: str = "n"  #: the instance field a certificate's length grows with (vertices, variables)
    bytes_per_entry: int = 24  #: certificate bytes allowed per entry beyond the slack


class SolverProblem(Problem[InstanceT]):
    """A Solver-track problem: an instance file in its field's standard format."""

    kind: ClassVar[str] = Kind.OBJECTIVE
    instance_file: ClassVar[InstanceFile]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "instance_file" in cls.__dict__:
            cls.instance_suffix = cls.instance_file.suffix

    def parse_instance(self, path: Path) -> InstanceT:
        parsed: InstanceT = self.instance_file.parse(c.read_instance_bytes(path, self.instance_file.format), path)
        return parsed  # (`instance_file.parse` is this problem's parser)

    #: exit code -> the answer (`s` line) it stands for, where the problem's community has that
    #: convention (SAT: 10 SATISFIABLE, 20 UNSATISFIABLE): such a code is not a crash when the
    #: certificate states that answer (`stated_answer`)
    answer_exit_codes: ClassVar[Mapping[int, str]] = MappingProxyType({})

    def stated_answer(self, data: bytes) -> str | None:
        """The answer a certificate states (its `s` line's words, e.g. "SATISFIABLE"), None when it
        states none; only problems with `answer_exit_codes` say anything."""
        return None

    def candidate_copy(self, data: bytes) -> tuple[bytes, str] | None:
        """The instance as a candidate gets it when its file has a quirk that standard parsers of
        the format refuse (SATLIB's `%` trailer): (the normalised bytes, what was changed), or None
        when the file is given as it is. The checker always reads the original."""
        return None

    def max_certificate_bytes(self, inst: InstanceT) -> int:
        spec = self.instance_file
        entries: int = getattr(inst, spec.entries)  # the parsed instance's count the spec names
        return CERTIFICATE_SLACK_BYTES + spec.bytes_per_entry * entries


class VectorProblem(SolverProblem[InstanceT]):
    """An objective problem whose certificate is one integer vector (MaxCut, TSP, colouring)."""

    entry: ClassVar[str] = "entry"  #: what error lines call one entry of the vector

    def read_vector(self, instance: InstanceT, certificate: bytes) -> tuple[np.ndarray, float | None]:
        """(the vector, the claimed value or None); raises `Reject` (invalid)."""
        return c.vector_certificate(certificate, self.max_certificate_bytes(instance), self.entry)

    @abstractmethod
    def vector_value(self, instance: InstanceT, vector: np.ndarray, claimed: float | None) -> float:
        """The value recomputed from the vector alone; raises `Reject` (certificate_failed)."""

    #: the task metadata keys of the best known value, the first present wins (`reward`)
    best_known: ClassVar[tuple[str, ...]]

    def reward(self, value: float, meta: Mapping[str, Any]) -> float | None:
        """The task's original checker reward: the value against the best known one, the ratio that
        is at most 1 for a value no better (None without a best known value)."""
        best = c.meta_number(meta, *self.best_known)
        if self.direction == Direction.MAXIMIZE:
            return value / best if best not in (None, 0.0) else None
        return best / value if best is not None and value > 0 else None

    @abstractmethod
    def describe(self, value: float) -> str:
        """The verdict's message for an accepted certificate, e.g. `cut 12`."""

    def check_certificate(self, instance: InstanceT, certificate: bytes, meta: Mapping[str, Any]) -> CheckResult:
        try:
            vector, claimed = self.read_vector(instance, certificate)
            value = self.vector_value(instance, vector, claimed)
            c.claim_check(claimed, value)
        except c.Reject as rej:
            return rej.result()
        reward = self.reward(value, meta)
        return CheckResult(Status.OK, value=value, claimed=claimed, reward=reward, message=self.describe(value))
