"""SAT on DIMACS CNF (including SATLIB files that end with a `%` line and a `0` line).

Instance: `c` comment lines, one header `p cnf <variables> <clauses>`, then clauses as integer
literals each terminated by `0` (clauses may span lines). Parsing stops at a line starting with
`%` (SATLIB's trailer). The clause count must equal the header's. A candidate gets a copy without
the trailer (`candidate_copy`: what standard DIMACS parsers read; cadical and minisat refuse it).

Certificate: SAT-competition output, or MiniSat's result file (`minisat IN OUT` writes `SAT` and
the model's literals ending in 0, `UNSAT` or `INDET`: read as the same answers). Exit codes 10 and
20 (`answer_exit_codes`) are SATISFIABLE and UNSATISFIABLE, as SAT solvers exit; the runner takes
them as normal exits when the certificate states that answer.
SAT-competition output: `c` lines are comments; exactly one `s` line:
`s SATISFIABLE`, `s UNSATISFIABLE` or `s UNKNOWN`; for SATISFIABLE, `v` lines holding literals
and a final `0`. A variable left out of the `v` lines is unassigned: the model must satisfy every
clause with the literals it lists. Kind `solve`: value 1.0 when solved, else 0.0.
`s UNSATISFIABLE` on an instance labelled SAT is `certificate_failed`. Otherwise this module's
verdict is the `trusted` rule: solved when the task's metadata labels the instance `label: UNSAT`,
`ok` but not solved when unlabelled. The runner then applies the task's `unsat_proof`
(`tcsexam.runner.solver.drat.judge_unsat`, docs/proofs.md#unsat-answers-drat-proofs): under `required` (the default) an UNSAT
claim is solved only with a DRAT proof the checker verified, labelled or not, and
`certificate_failed` without one; under `trusted` this verdict stands, labelled as trusted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, SimpleNamespace
from typing import Any, cast

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems import _common as c
from tcsexam.problems import _twin as tw
from tcsexam.problems.base import CheckResult, Direction, Kind
from tcsexam.problems.solver_base import InstanceFile, SolverProblem
from tcsexam.records import Status

_COMMENT = re.compile(rb"(?m)^[ \t]*c[^\n]*")
_TRAILER = re.compile(rb"(?m)^[ \t]*%")
#: SATLIB's trailer in a raw file: a line starting with `%` that is not inside a comment line
_RAW_TRAILER = re.compile(rb"(?m)^[ \t]*%")
_HEADER = re.compile(rb"(?m)^[ \t]*p[ \t]+cnf[ \t]+(\S+)[ \t]+(\S+)[ \t]*\r?$")
_ANY_P = re.compile(rb"(?m)^[ \t]*p\b")


@dataclass(frozen=True, eq=False)
class CnfInstance:
    nvars: int
    nclauses: int
    var: np.ndarray  #: |literal| of every literal, clause after clause (int32)
    positive: np.ndarray  #: literal > 0 (bool)
    sign: np.ndarray  #: +1 / -1 per literal (int8), compared with a model's value
    starts: np.ndarray  #: offset of each non-empty clause's first literal
    nonempty: np.ndarray  #: indices of the non-empty clauses
    lengths: np.ndarray  #: literals per clause
    path: Path | None = None

    def satisfied(self, value: np.ndarray) -> np.ndarray:
        """Per clause: does a literal hold under value (1 true, -1 false, 0 unassigned)?"""
        true = value[self.var] == self.sign
        out = np.zeros(self.nclauses, dtype=bool)
        if self.starts.size:
            out[self.nonempty] = np.logical_or.reduceat(true, self.starts)
        return out

    def clause(self, k: int) -> list[int]:
        start = int(self.lengths[:k].sum())
        end = start + int(self.lengths[k])
        v = self.var[start:end]
        return [int(x) if p else -int(x) for x, p in zip(v, self.positive[start:end])]


def parse_cnf_bytes(data: bytes, path: Path | str = "<cnf>") -> CnfInstance:
    text = _COMMENT.sub(b"", data)
    trailer = _TRAILER.search(text)
    if trailer:
        text = text[: trailer.start()]
    headers = _ANY_P.findall(text)
    if len(headers) != 1:
        what = "no 'p cnf' header" if not headers else f"{len(headers)} 'p' lines"
        raise InputError(f"{path}: {what}; expected exactly one 'p cnf <variables> <clauses>'")
    match = _HEADER.search(text)
    first_p = match or _ANY_P.search(text)  # one 'p' line (checked above)
    header_line = text[: first_p.start() if first_p else 0].count(b"\n") + 1
    if not match:
        raise InputError(f"{path}: line {header_line}: header must be 'p cnf <variables> <clauses>'")
    counts = c.ints_or_none([match.group(1), match.group(2)])
    if counts is None or counts[0] < 0 or counts[1] < 0:
        raise InputError(f"{path}: line {header_line}: header counts must be non-negative integers")
    nvars, nclauses = int(counts[0]), int(counts[1])
    if text[: match.start()].strip():
        raise InputError(f"{path}: line {header_line}: clauses before the 'p cnf' header")
    body = text[match.end() :]
    lits = c.fast_ints(body)
    if lits is None:
        tokens = body.split()
        lits = c.ints_or_none(tokens)
        if lits is None:
            i = c.first_bad_int(tokens)
            line = header_line + c.line_of_token(body, i) - 1
            raise InputError(f"{path}: line {line}: {c.show(tokens[i])} is not an integer literal")
    if lits.size and lits[-1] != 0:
        lits = np.append(lits, 0)  # a last clause without its terminating 0 is accepted
    zeros = np.flatnonzero(lits == 0)
    if zeros.size != nclauses:
        raise InputError(f"{path}: header says {nclauses} clauses but the file holds {zeros.size}")
    var = np.abs(lits)
    out = var > nvars
    if out.any():
        i = int(np.argmax(out))
        line = header_line + c.line_of_token(body, i) - 1
        raise InputError(f"{path}: line {line}: literal {int(lits[i])} outside 1..{nvars}")
    bounds = np.concatenate(([-1], zeros))
    lengths = np.diff(bounds) - 1
    keep = lits != 0
    kept = lits[keep]
    offsets = np.zeros(nclauses, dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    nonempty = np.flatnonzero(lengths > 0)
    return CnfInstance(
        nvars,
        nclauses,
        var[keep].astype(np.int32),
        kept > 0,
        np.where(kept > 0, 1, -1).astype(np.int8),
        offsets[nonempty],
        nonempty,
        lengths,
        Path(path),
    )


def without_trailer(data: bytes) -> tuple[bytes, str] | None:
    """`data` without SATLIB's trailer (the `%` line and everything after it, e.g. "%\\n0\\n"),
    which Debian's cadical and minisat refuse as a parse error; None when there is none."""
    match = _RAW_TRAILER.search(data)
    if match is None:
        return None
    cut = data[: match.start()]
    if cut and not cut.endswith(b"\n"):
        cut += b"\n"
    return cut, f"SATLIB trailer removed (the '%' line and the {len(data) - match.start()} bytes from it on)"


def _answered(answer: str, solved: bool, message: str) -> CheckResult:
    """An `ok` result of a solve problem: value and reward 1.0 when solved, else 0.0."""
    score = 1.0 if solved else 0.0
    return CheckResult(Status.OK, value=score, solved=solved, claimed=answer, reward=score, message=message)


def twin(inst: CnfInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
    """The formula with its variables permuted (v becomes perm[v - 1] + 1), a random set of them
    flipped in polarity, its clauses in a shuffled order and each clause's literals shuffled; no
    comment, no trailer. A model of the original, relabelled and flipped the same way, is a model
    of the twin and back, so satisfiability (the label) is kept. Map: {"perm", "flip"}."""
    perm = rng.permutation(inst.nvars)
    flip = rng.random(inst.nvars) < 0.5
    clause_pos = rng.permutation(inst.nclauses)  # clause k goes to position clause_pos[k]
    clause_of = np.repeat(np.arange(inst.nclauses), inst.lengths)
    lits = tw.signed_relabel(inst.var.astype(np.int64), inst.positive, perm, flip)
    new_clause = clause_pos[clause_of]
    order = tw.within_clause_shuffle(rng, new_clause)
    body = tw.clause_text(None, new_clause[order], lits[order], inst.nclauses)
    mapping = {"perm": tw.perm_list(perm), "flip": [bool(x) for x in flip]}
    return tw.Twin(f"p cnf {inst.nvars} {inst.nclauses}\n" + body, mapping)


def translate(mapping: dict, certificate: bytes) -> bytes:
    """SAT-competition output on the twin as output on the original (the answer kept, each `v`
    literal mapped back); output that cannot be read is returned unchanged."""
    stand_in = SimpleNamespace(nvars=len(mapping["perm"]))
    try:
        # the parse reads the instance's variable count only: a stand-in of the original's
        answer, lits = Sat().parse_certificate(cast(CnfInstance, stand_in), certificate)
    except c.Reject:
        return certificate
    if lits is None:
        return f"s {_WORDS[answer]}\n".encode()
    try:
        orig = tw.literals_back(lits, mapping)
    except ValueError:
        return certificate
    return ("s SATISFIABLE\nv " + " ".join(map(str, orig.tolist())) + " 0\n").encode()


#: MiniSat's result file (`minisat IN OUT`, also glucose's): its first line -> the competition answer
MINISAT_ANSWERS = {b"SAT": "SAT", b"UNSAT": "UNSAT", b"INDET": "UNKNOWN"}
_WORDS = {"SAT": "SATISFIABLE", "UNSAT": "UNSATISFIABLE", "UNKNOWN": "UNKNOWN"}


def _minisat_form(data: bytes) -> tuple[bytes, bytes] | None:
    """(first line, the rest) when `data` is a MiniSat result file (first line SAT, UNSAT or INDET)."""
    body = data.lstrip()
    first, _, rest = body.partition(b"\n")
    first = first.strip()
    return (first, rest) if first in MINISAT_ANSWERS else None


class Sat(SolverProblem[CnfInstance]):
    kind = Kind.SOLVE
    direction = Direction.MAXIMIZE
    instance_file = InstanceFile("CNF", ".cnf", parse_cnf_bytes, entries="nvars")
    certificate_format = (
        "SAT-competition output: 's SATISFIABLE' + 'v ... 0' lines, or 's UNSATISFIABLE'; "
        "or MiniSat's result file: 'SAT' + literals ending in 0, 'UNSAT' or 'INDET'"
    )
    answer_exit_codes = MappingProxyType({10: "SATISFIABLE", 20: "UNSATISFIABLE"})

    def stated_answer(self, data: bytes) -> str | None:
        minisat = _minisat_form(data)
        if minisat is not None:
            return _WORDS[MINISAT_ANSWERS[minisat[0]]]
        return c.stated_answer(data, len(data))

    def _minisat_certificate(self, inst: CnfInstance, first: bytes, rest: bytes) -> tuple[str, np.ndarray | None]:
        """MiniSat's result file: `SAT` then the model's literals ending in 0; `UNSAT`; `INDET`."""
        answer = MINISAT_ANSWERS[first]
        tokens = rest.split()
        if answer != "SAT":
            if tokens:
                raise c.invalid(f"literals after {first.decode()!r} (MiniSat's result file)", answer)
            return answer, None
        if not tokens:
            raise c.invalid("'SAT' without the model's literals (MiniSat's result file)", answer)
        lits = c.certificate_ints(tokens, answer, "literal")
        if lits[-1] != 0:
            raise c.invalid("the model's literals must end with 0 (MiniSat's result file)", answer)
        lits = lits[:-1]
        if (lits == 0).any():
            raise c.invalid("a 0 before the end of the model's literals", answer)
        return answer, lits

    def candidate_copy(self, data: bytes) -> tuple[bytes, str] | None:
        return without_trailer(data)

    def parse_certificate(self, inst: CnfInstance, data: bytes) -> tuple[str, np.ndarray | None]:
        """(answer, literals) from SAT-competition output or MiniSat's result file; raises Reject."""
        if len(data) > self.max_certificate_bytes(inst):
            raise c.invalid(
                f"certificate is {len(data)} bytes, more than the {self.max_certificate_bytes(inst)} allowed"
            )
        minisat = _minisat_form(data)
        if minisat is not None:
            return self._minisat_certificate(inst, *minisat)
        answer: str | None = None
        vparts: list[bytes] = []
        for number, line, head, rest in c.competition_lines(data, self.max_certificate_bytes(inst)):
            if head == b"s":
                word = b" ".join(rest.split())
                if answer is not None:
                    raise c.invalid(f"line {number}: a second 's' line", answer)
                if word == b"SATISFIABLE":
                    answer = "SAT"
                elif word == b"UNSATISFIABLE":
                    answer = "UNSAT"
                elif word == b"UNKNOWN":
                    answer = "UNKNOWN"
                else:
                    raise c.invalid(f"line {number}: unknown answer {c.show(word)}")
            elif head == b"v":
                vparts.append(rest)
            else:
                raise c.invalid(f"line {number}: unknown line {c.show(line)}", answer)
        if answer is None:
            raise c.invalid("no 's' line (SATISFIABLE, UNSATISFIABLE or UNKNOWN)")
        if answer != "SAT":
            if vparts:
                raise c.invalid(f"'v' lines after 's {answer}'", answer)
            return answer, None
        joined = b" ".join(vparts)
        lits = c.fast_ints(joined)
        if lits is None or not lits.size:
            tokens = joined.split()
            if not tokens:
                raise c.invalid("'s SATISFIABLE' without 'v' lines", answer)
            lits = c.certificate_ints(tokens, answer, "literal")
        if lits[-1] != 0:
            raise c.invalid("the 'v' lines must end with 0", answer)
        lits = lits[:-1]
        if (lits == 0).any():
            raise c.invalid("a 0 before the end of the 'v' lines", answer)
        return answer, lits

    def check_certificate(self, instance: CnfInstance, certificate: bytes, meta: Mapping[str, Any]) -> CheckResult:
        label = str(meta.get("label", "")).upper() if meta else ""
        try:
            answer, lits = self.parse_certificate(instance, certificate)
            if answer == "UNKNOWN":
                return _answered(answer, False, "s UNKNOWN: not solved")
            if answer == "UNSAT":
                if label == "UNSAT":
                    return _answered(answer, True, "UNSAT claim agrees with the label")
                if label == "SAT":
                    raise c.failed("claims UNSATISFIABLE but the instance is satisfiable", answer)
                return _answered(
                    answer,
                    False,
                    "UNSAT claim not verifiable without a DRAT proof: the instance has no label; not counted as solved",
                )
            assert lits is not None
            used = int(instance.var.max()) if instance.var.size else 0
            value = c.assignment(lits, instance.nvars, used, answer)
            unsat = np.flatnonzero(~instance.satisfied(value))
            if unsat.size:
                k = int(unsat[0])
                shown = " ".join(map(str, instance.clause(k)[:8]))
                raise c.failed(f"{unsat.size} clause(s) falsified, first clause {k + 1}: [{shown}]", answer)
        except c.Reject as rej:
            return rej.result()
        return _answered(answer, True, "model satisfies every clause")

    def make_twin(self, instance: CnfInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
        return twin(instance, rng, name)

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes:
        return translate(mapping, certificate)

    def generate(self, rng: np.random.Generator, size: int) -> str:
        """Uniform random 3-SAT with `size` variables and round(4.26 * size) clauses."""
        n = max(3, int(size))
        m = int(round(4.26 * n))
        lines = [f"c uniform random 3-SAT, {n} variables, {m} clauses", f"p cnf {n} {m}"]
        for _ in range(m):
            vs = rng.choice(n, size=3, replace=False) + 1
            signs = rng.choice(np.array([-1, 1]), size=3)
            lines.append(" ".join(str(int(x)) for x in vs * signs) + " 0")
        return "\n".join(lines) + "\n"
