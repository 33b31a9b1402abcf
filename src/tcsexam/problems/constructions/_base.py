"""What every construction problem shares: the parameter file, the certificate grammar, the reward.

Parameter file (the instance): a YAML mapping with a `parameters:` mapping, e.g. the task file
`config/tasks/construction-cap-set-f3-dim8.yaml` itself (`parameters: {dim: 8}`).

Certificate grammar: lines of whitespace-separated numbers; blank lines and lines whose first
non-blank character is `#` are ignored. A token that is not a number (or a file that is empty,
not text, or too large) is `invalid`; an object that parses but breaks a rule of its kind (wrong
count or width, out of range, a repeat, the forbidden pattern) is `certificate_failed`.

Reward (the construction track's original task reward; v the verified value, b the task's
`baseline`, r its `reference`): maximize `max(0, (v - b) / (r - b))`, minimize
`max(0, (b - v) / (b - r))`. A value beyond the reference scores above 1; a rejected
certificate (`invalid`, `certificate_failed`) scores 0.
"""

from __future__ import annotations

import math
import re
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import yaml

from tcsexam.errors import InputError
from tcsexam.problems._common import Reject, failed, fast_ints, invalid, meta_number, read_instance_bytes, show
from tcsexam.problems.base import CheckResult, Direction, Kind, Problem
from tcsexam.records import Status

#: bytes every certificate may use beyond its kind's own allowance (comments, spacing)
SLACK_BYTES = 64 * 1024
MAX_TOKEN = 40  #: significant digits of an integer token (more is out of range), characters of a real
#: an integer token: ASCII digits with an optional sign (Python's int() would also take `1_0`)
INT_TOKEN = re.compile(rb"[+-]?[0-9]+\Z")
#: a real token: decimal digits, an optional point and exponent (float() would also take `1_0`, `nan`)
REAL_TOKEN = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


@dataclass(frozen=True)
class Params:
    """A construction's parameters (as read from the parameter file) and where they came from."""

    values: dict[str, int]
    source: str

    def __getitem__(self, key: str) -> int:
        return self.values[key]


def reward(direction: str, value: float, baseline: float, reference: float) -> float:
    """The original construction reward: 0 at or below the baseline, 1 at the reference, above 1
    beyond it (the spec's above-reference credit)."""
    if direction == Direction.MAXIMIZE:
        gained = (value - baseline) / (reference - baseline)
    else:
        gained = (baseline - value) / (baseline - reference)
    return max(0.0, float(gained))


class ConstructionProblem(Problem[Params]):
    """A construction kind: parameters, an exact checker of the object, the value it scores."""

    kind: ClassVar[str] = Kind.OBJECTIVE
    instance_suffix: ClassVar[str] = ".yaml"
    #: the parameters: name -> (smallest, largest) allowed integer
    parameter_ranges: ClassVar[dict[str, tuple[int, int]]]
    #: the checker's identity, kept with every verdict (bumped when what it accepts changes)
    checker_version: ClassVar[str] = "2"

    # ---- the parameter file ---------------------------------------------------------------

    def parse_instance(self, path: Path) -> Params:
        data = read_instance_bytes(path, self.name)
        try:
            doc = yaml.safe_load(data.decode("utf-8"))
        except (UnicodeDecodeError, yaml.YAMLError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise InputError(f"{path}: not a YAML parameter file: {first}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("parameters"), dict):
            raise InputError(f"{path}: a {self.name} parameter file needs a 'parameters:' mapping")
        raw = doc["parameters"]
        values: dict[str, int] = {}
        for key, (low, high) in self.parameter_ranges.items():
            got = raw.get(key)
            if not isinstance(got, int) or isinstance(got, bool) or not low <= got <= high:
                raise InputError(f"{path}: parameters.{key} must be an integer in [{low}, {high}], not {got!r}")
            values[key] = got
        unknown = sorted(set(map(str, raw)) - set(self.parameter_ranges))
        if unknown:
            raise InputError(f"{path}: unknown parameter {unknown[0]!r} for {self.name}")
        self.check_parameters(values, str(path))
        return Params(values, str(path))

    def check_parameters(self, values: dict[str, int], where: str) -> None:
        """Relations between parameters a range cannot say (InputError naming `where`)."""

    def generate(self, rng: np.random.Generator, size: int) -> str:
        lines = [f"# a seeded {self.name} parameter file", "parameters:"]
        for key, value in self.random_parameters(rng, size).items():
            lines.append(f"  {key}: {value}")
        return "\n".join(lines) + "\n"

    def random_parameters(self, rng: np.random.Generator, size: int) -> dict[str, int]:
        """Parameters of a seeded instance of roughly `size` (within `parameter_ranges`); by default
        each parameter uniform over its whole range (kinds whose range is small)."""
        return {key: int(rng.integers(low, high + 1)) for key, (low, high) in self.parameter_ranges.items()}

    # ---- the certificate ------------------------------------------------------------------

    @abstractmethod
    def max_bytes(self, params: Params) -> int:
        """The size cap of a certificate for these parameters (larger ones are `invalid`)."""

    @abstractmethod
    def verify(self, params: Params, data: bytes) -> float:
        """The value of the object in `data`; raises `Reject` (invalid / certificate_failed)."""

    def check_certificate(self, instance: Params, certificate: bytes, meta: Mapping[str, Any]) -> CheckResult:
        """The verdict; with the task's baseline and reference the reward too: the rule's value
        for a verified object, 0.0 for a rejected one (an invalid certificate scores 0)."""
        baseline = meta_number(meta, "baseline")
        reference = meta_number(meta, "reference")
        scored = baseline is not None and reference is not None and baseline != reference
        cap = self.max_bytes(instance)
        if len(certificate) > cap:
            rejected = CheckResult.invalid(f"certificate is {len(certificate)} bytes, more than the {cap} allowed")
            return replace(rejected, reward=0.0 if scored else None)
        try:
            value = float(self.verify(instance, certificate))
        except Reject as rej:
            return replace(rej.result(), reward=0.0 if scored else None)
        got = (
            reward(self.direction, value, baseline, reference)
            if scored and baseline is not None and reference is not None
            else None
        )
        return CheckResult(Status.OK, value=value, reward=got)


def checker_id(problem: ConstructionProblem) -> str:
    """The checker's identity kept with every verdict: `tcsexam <kind> checker v<version>`."""
    return f"tcsexam {problem.name} checker v{problem.checker_version}"


# ---- certificate reading ---------------------------------------------------------------------


def content_lines(data: bytes) -> list[tuple[int, bytes]]:
    """(line number, stripped line) of every line that is not blank or a `#` comment; `invalid`
    for an empty certificate or one that is not ASCII text."""
    try:
        data.decode("ascii")
    except UnicodeDecodeError:
        raise invalid("certificate is not ASCII text") from None
    if b"\x00" in data:
        raise invalid("certificate contains a NUL byte")
    lines = []
    for number, raw in enumerate(data.splitlines(), start=1):
        line = raw.strip()
        if line and not line.startswith(b"#"):
            lines.append((number, line))
    if not lines:
        raise invalid("empty certificate (no object)")
    return lines


def _line_ints(number: int, line: bytes) -> list[int]:
    out = []
    for tok in line.split():
        if not INT_TOKEN.match(tok):
            raise invalid(f"line {number}: {show(tok)} is not an integer")
        if len(tok.lstrip(b"+-").lstrip(b"0")) > MAX_TOKEN:
            raise failed(f"line {number}: entry {show(tok)} is out of range")
        out.append(int(tok))
    return out


def int_rows(data: bytes, width: int, what: str) -> tuple[np.ndarray, list[int]]:
    """The certificate as an (N, width) int64 array (one row per content line) and the line
    numbers; `invalid` on a non-integer, `certificate_failed` on a row of another width or an
    entry beyond int64 (exactness is never given up for range)."""
    lines = content_lines(data)
    body = b"\n".join(line for _, line in lines)
    numbers = [n for n, _ in lines]
    flat = fast_ints(body)
    counts = np.array([len(line.split()) for _, line in lines])
    if flat is None:
        rows = [_line_ints(n, line) for n, line in lines]
        big = [(n, x) for n, row in zip(numbers, rows) for x in row if not -(2**62) < x < 2**62]
        if big:
            raise failed(f"line {big[0][0]}: entry {big[0][1]} is out of range")
        flat = np.array([x for row in rows for x in row], dtype=np.int64)
    bad = np.flatnonzero(counts != width)
    if bad.size:
        k = int(bad[0])
        raise failed(f"line {numbers[k]}: {what} has {int(counts[k])} entries, expected {width}")
    return flat.reshape(len(lines), width), numbers


def int_list(data: bytes, what: str) -> np.ndarray:
    """Every integer of the certificate in order (lines do not matter)."""
    lines = content_lines(data)
    body = b"\n".join(line for _, line in lines)
    flat = fast_ints(body)
    if flat is None:
        values = [x for n, line in lines for x in _line_ints(n, line)]
        if any(not -(2**62) < x < 2**62 for x in values):
            raise failed(f"a {what} is out of range")
        flat = np.array(values, dtype=np.int64)
    return flat


def float_rows(data: bytes, width: int, what: str) -> np.ndarray:
    """The certificate as an (N, width) float64 array; `invalid` on a token that is not a finite
    number, `certificate_failed` on a row of another width."""
    rows = []
    for number, line in content_lines(data):
        toks = line.split()
        row = []
        for tok in toks:
            if not REAL_TOKEN.match(tok):
                raise invalid(f"line {number}: {show(tok)} is not a number")
            x = float(tok) if len(tok) <= MAX_TOKEN * 2 else math.nan
            if not math.isfinite(x):
                raise invalid(f"line {number}: {show(tok)} is not a finite number")
            row.append(x)
        if len(row) != width:
            raise failed(f"line {number}: {what} has {len(row)} entries, expected {width}")
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def distinct(values: np.ndarray, what: str) -> None:
    """`certificate_failed` naming a value that occurs twice."""
    uniq, counts = np.unique(values, return_counts=True)
    if uniq.size != values.size:
        raise failed(f"{what} {int(uniq[np.argmax(counts > 1)])} occurs more than once")


def in_range(values: np.ndarray, low: int, high: int, what: str) -> None:
    bad = (values < low) | (values > high)
    if bad.any():
        raise failed(f"{what} {int(values.ravel()[np.argmax(bad.ravel())])} is outside [{low}, {high}]")
