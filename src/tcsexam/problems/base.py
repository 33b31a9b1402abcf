"""The interface every problem module implements (one module per problem in this package).

A problem parses its instance format, checks a certificate against a parsed instance, and
recomputes the value from the certificate alone: a claimed value is only compared, never trusted.
`tests/unit/problems/test_conformance.py` is the shared suite every module must pass.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from tcsexam.problems._twin import Twin
from tcsexam.records import Status


class Kind(StrEnum):
    """What a Solver task asks: the best objective value, or a yes/no answer (SAT)."""

    OBJECTIVE = "objective"
    SOLVE = "solve"


class Direction(StrEnum):
    """Whether a larger or a smaller objective value is better (a problem's, a task's)."""

    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"


#: what a solver claimed its answer's value or verdict was (None: it claimed nothing)
Claimed = float | str | None


@dataclass(frozen=True)
class CheckResult:
    """A checker's verdict on one certificate.

    status: `ok`, `invalid` (missing or unparseable certificate) or `certificate_failed`
    (parsed but wrong). value: the objective recomputed from the certificate (objective problems)
    or 1.0/0.0 (solve problems), None unless ok. solved: the verified solved indicator (solve
    problems). claimed: what the solver claimed, if it claimed anything. reward: the task's
    original checker reward (e.g. cut / best known), separate from the value.
    """

    status: Status
    value: float | None = None
    solved: bool | None = None
    claimed: Claimed = None
    reward: float | None = None
    message: str = ""

    @classmethod
    def invalid(cls, message: str, claimed: Claimed = None) -> CheckResult:
        return cls(Status.INVALID, message=message, claimed=claimed)

    @classmethod
    def failed(cls, message: str, claimed: Claimed = None) -> CheckResult:
        return cls(Status.CERTIFICATE_FAILED, message=message, claimed=claimed)


#: a problem's parsed instance (`Problem.parse_instance`), what its checker reads
InstanceT = TypeVar("InstanceT")


class Problem(ABC, Generic[InstanceT]):
    """One optimisation or decision problem: instance format, certificate format, checker."""

    name: ClassVar[str]  #: short id, e.g. "maxcut": by default the name of the class's module
    kind: ClassVar[str]  #: "objective" or "solve"
    direction: ClassVar[Direction]
    instance_suffix: ClassVar[str]  #: file suffix of generated instances, e.g. ".txt"
    certificate_format: ClassVar[str]  #: one line describing what the solver writes

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__module__.rsplit(".", 1)[-1]

    @abstractmethod
    def parse_instance(self, path: Path) -> InstanceT:
        """Parse an instance file; raise `InputError` naming the file and line on bad input."""

    @abstractmethod
    def check_certificate(self, instance: InstanceT, certificate: bytes, meta: Mapping[str, Any]) -> CheckResult:
        """Check certificate bytes against a parsed instance. Never raises on any certificate.

        `meta` holds the task's per-instance metadata (labels, best-known values) used for
        solve labels and the original checker reward.
        """

    @abstractmethod
    def generate(self, rng: np.random.Generator, size: int) -> str:
        """A seeded random instance of roughly `size` (vertices, variables, cities) as text."""

    #: the instance formats `generate_as` writes, the default first. A problem with more than one
    #: names the format in its generated files' names (`maxsat-old-n40-s1-1.wcnf`).
    formats: ClassVar[tuple[str, ...]] = ("new",)

    def generate_as(self, rng: np.random.Generator, size: int, form: str) -> str:
        """`generate` in instance format `form` (one of `formats`; a problem with several overrides this)."""
        return self.generate(rng, size)

    def format_tag(self, form: str) -> str:
        """What a generated file's name says of its format: `-<form>` where there is a choice."""
        return f"-{form}" if len(self.formats) > 1 else ""


@runtime_checkable
class Twinnable(Protocol):
    """A problem with twins (`tcsexam.twins`, the Solver problems): a twin of a parsed instance,
    and a certificate written on a twin translated back onto the original."""

    def make_twin(self, instance: Any, rng: np.random.Generator, name: str = "") -> Twin: ...

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes: ...
