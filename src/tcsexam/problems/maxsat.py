"""Weighted (partial) MaxSAT on WCNF files, in both forms:

* current (MaxSAT Evaluation 2022+): `c` comments, hard clauses `h <lits> 0`, soft clauses
  `<weight> <lits> 0`, no `p` line; the variables are 1..(largest index used).
* old: a header `p wcnf <variables> <clauses> [<top>]`, then `<weight> <lits> 0` per clause; a
  clause whose weight is >= top is hard (without top every clause is soft). `p cnf` files read as
  unweighted MaxSAT (every clause soft, weight 1).

Certificate (MaxSAT Evaluation output): `c` comments; at most one `s` line (`s OPTIMUM FOUND`,
`s SATISFIABLE`, `s UNSATISFIABLE`, `s UNKNOWN`); `o <cost>` lines (the last is the claimed cost);
`v` lines with either one 0/1 string (one character per variable) or a list of literals (a trailing
0 allowed). A variable not listed is unassigned and satisfies no literal. Value: the total weight of
the falsified soft clauses (minimize); a falsified hard clause is `certificate_failed`.
Reward: (optimum + 1) / (cost + 1) when the task gives `optimum`.
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
from tcsexam.problems.base import CheckResult, Direction
from tcsexam.problems.sat import without_trailer
from tcsexam.problems.solver_base import InstanceFile, SolverProblem
from tcsexam.records import Status

_COMMENT = re.compile(rb"(?m)^[ \t]*c(?:[ \t][^\n]*)?\r?$")
_PLINE = re.compile(rb"(?m)^[ \t]*p[ \t]+(wcnf|cnf)\b([^\n]*)$")
_BITS = re.compile(rb"^[01]+$")
WEIGHT_LIMIT = 2**62  #: soft weights must stay below this (their sum is int64)


@dataclass(frozen=True, eq=False)
class Clauses:
    var: np.ndarray
    positive: np.ndarray
    clause_of: np.ndarray
    count: int


@dataclass(frozen=True, eq=False)
class WcnfInstance:
    nvars: int
    hard: Clauses
    soft: Clauses
    weights: np.ndarray  #: int64 weight of each soft clause
    form: str  #: "new" (h lines) or "old" (p wcnf)
    path: Path | None = None

    @property
    def used_vars(self) -> int:
        return max([int(x.var.max()) for x in (self.hard, self.soft) if x.var.size] or [0])

    @property
    def total_soft_weight(self) -> int:
        return int(self.weights.sum())


def _pack(clauses: list[list[int]]) -> Clauses:
    lengths = np.fromiter((len(x) for x in clauses), dtype=np.int64, count=len(clauses))
    flat = np.fromiter((lit for cl in clauses for lit in cl), dtype=np.int64, count=int(lengths.sum()))
    return Clauses(np.abs(flat), flat > 0, np.repeat(np.arange(len(clauses)), lengths), len(clauses))


def parse_wcnf_bytes(data: bytes, path: Path | str = "<wcnf>") -> WcnfInstance:
    text = _COMMENT.sub(b"", data)
    headers = _PLINE.findall(text)
    if len(headers) > 1:
        raise InputError(f"{path}: more than one 'p' line")
    declared_vars = declared_clauses = None
    top: int | None = None
    form = "new"
    unweighted = False
    match = _PLINE.search(text)  # the one 'p' line (None: none)
    if match:
        line = text[: match.start()].count(b"\n") + 1
        kind, rest = match.group(1), match.group(2).split()
        try:
            nums = [int(x) for x in rest]
        except ValueError:
            raise InputError(f"{path}: line {line}: 'p {kind.decode()}' needs integer counts") from None
        if kind == b"wcnf" and len(nums) not in (2, 3) or kind == b"cnf" and len(nums) != 2:
            raise InputError(f"{path}: line {line}: header must be 'p wcnf <vars> <clauses> [<top>]'")
        declared_vars, declared_clauses = nums[0], nums[1]
        top = nums[2] if len(nums) == 3 else None
        unweighted = kind == b"cnf"
        form = "old"
        if text[: match.start()].strip():
            raise InputError(f"{path}: line {line}: clauses before the 'p' line")
        body_start = match.end()
        offset = line
    else:
        body_start, offset = 0, 1
    body = text[body_start:]
    hard: list[list[int]] = []
    soft: list[list[int]] = []
    weights: list[int] = []
    for number, raw in enumerate(body.split(b"\n"), start=offset):
        parts = raw.split()
        if not parts:
            continue
        where = f"{path}: line {number}"
        if parts[0] == b"%":
            break
        if unweighted:
            head, lits_tok = None, parts
        else:
            head, lits_tok = parts[0], parts[1:]
        if not lits_tok or lits_tok[-1] != b"0":
            raise InputError(f"{where}: a clause must end with 0")
        if len(lits_tok[-1]) > 20 or max(map(len, lits_tok)) > 20:
            raise InputError(f"{where}: literal out of range")
        try:
            lits = [int(t) for t in lits_tok[:-1]]
        except ValueError:
            raise InputError(f"{where}: literals must be integers") from None
        if 0 in lits:
            raise InputError(f"{where}: a 0 inside the clause")
        if head is None:
            soft.append(lits)
            weights.append(1)
            continue
        if head == b"h" and form == "new":
            hard.append(lits)
            continue
        try:
            weight = int(head)
        except ValueError:
            raise InputError(f"{where}: clause weight {c.show(head)} is not 'h' or a positive integer") from None
        if weight < 1:
            raise InputError(f"{where}: clause weight must be positive")
        if top is not None and weight >= top:
            hard.append(lits)
        else:
            if weight >= WEIGHT_LIMIT:
                raise InputError(f"{where}: soft weight {weight} is too large")
            soft.append(lits)
            weights.append(weight)
    hard_c, soft_c = _pack(hard), _pack(soft)
    used = max([int(x.var.max()) for x in (hard_c, soft_c) if x.var.size] or [0])
    if declared_vars is not None:
        if used > declared_vars:
            raise InputError(f"{path}: variable {used} exceeds the header's {declared_vars}")
        if declared_clauses != len(hard) + len(soft):
            raise InputError(
                f"{path}: header says {declared_clauses} clauses but the file holds {len(hard) + len(soft)}"
            )
        nvars = declared_vars
    else:
        nvars = used
    if not soft:
        raise InputError(f"{path}: no soft clauses")
    w = np.array(weights, dtype=np.int64)
    if int(w.sum()) >= WEIGHT_LIMIT:
        raise InputError(f"{path}: the soft weights sum to more than 2^62")
    return WcnfInstance(nvars, hard_c, soft_c, w, form, Path(str(path)))


def falsified(cl: Clauses, value: np.ndarray) -> np.ndarray:
    """Boolean mask of the clauses no literal of which is true under value (1, -1, 0 = unset)."""
    lit_value = value[cl.var]
    true = np.where(cl.positive, lit_value == 1, lit_value == -1)
    none_true: np.ndarray = np.bincount(cl.clause_of[true], minlength=cl.count) == 0
    return none_true


def twin(inst: WcnfInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
    """The instance with its variables permuted and a random set of them flipped in polarity, hard
    and soft clauses together in one shuffled order, each clause's literals shuffled, every soft
    weight kept with its clause; no comment. An assignment of the original, relabelled and flipped
    the same way, satisfies the same clauses of the twin, so the optimum cost is kept. The form is
    kept: `h` lines (new), or `p wcnf <vars> <clauses> <top>` with top = the soft weights' sum + 1
    (old; a `p cnf` file is written as old-form WCNF with weights 1). Map: {"perm", "flip", "nvars"}."""
    n = inst.nvars
    perm = rng.permutation(n)
    flip = rng.random(n) < 0.5
    total = inst.hard.count + inst.soft.count
    pos = rng.permutation(total)  # hard clause k goes to pos[k], soft clause k to pos[hard + k]
    top = inst.total_soft_weight + 1
    heads = np.empty(total, dtype=object)
    heads[pos[: inst.hard.count]] = "h" if inst.form == "new" else str(top)
    heads[pos[inst.hard.count :]] = inst.weights.astype(str).tolist()
    var = np.concatenate([inst.hard.var, inst.soft.var]).astype(np.int64)
    positive = np.concatenate([inst.hard.positive, inst.soft.positive])
    clause_of = np.concatenate([inst.hard.clause_of, inst.soft.clause_of + inst.hard.count])
    new_clause = pos[clause_of] if clause_of.size else clause_of
    lits = tw.signed_relabel(var, positive, perm, flip) if var.size else var
    order = tw.within_clause_shuffle(rng, new_clause)
    body = tw.clause_text(heads, new_clause[order], lits[order], total)
    header = f"p wcnf {n} {total} {top}\n" if inst.form == "old" else ""
    # the twin's variable count: declared (old form), else its largest index used
    twin_nvars = n if inst.form == "old" else (int(np.abs(lits).max()) if lits.size else 0)
    mapping = {"perm": tw.perm_list(perm), "flip": [bool(x) for x in flip], "nvars": n, "twin_nvars": twin_nvars}
    return tw.Twin(header + body, mapping)


def translate(mapping: dict, certificate: bytes) -> bytes:
    """MaxSAT Evaluation output on the twin as output on the original: the `s` and `o` lines kept,
    the assignment (0/1 string or literals) mapped back and written as literals. The twin of a
    new-form file may use fewer variables than the original (its largest index can be an unused
    variable's image): a 0/1 string is read against the twin's own variable count."""
    perm = np.asarray(mapping["perm"], dtype=np.int64)
    twin_vars = int(perm.max()) + 1 if perm.size else 0
    twin_used = mapping.get("twin_nvars", twin_vars)
    stand_in = SimpleNamespace(nvars=int(twin_used), used_vars=int(twin_used))
    try:
        # the parse reads the instance's variable counts only: a stand-in of the twin's
        answer, claimed, value = MaxSat()._assignment(cast(WcnfInstance, stand_in), certificate)
    except c.Reject:
        return certificate
    value = np.concatenate([value, np.zeros(max(0, twin_vars + 1 - value.size), dtype=value.dtype)])
    assigned = np.flatnonzero(value[1:]) + 1
    twin_lits = np.where(value[assigned] > 0, assigned, -assigned)
    try:
        orig = tw.literals_back(twin_lits.astype(np.int64), mapping)
    except ValueError:
        return certificate
    out = []
    if answer is not None:
        out.append(f"s {answer}")
    if claimed is not None:
        out.append(f"o {c.fmt(claimed)}")
    out.append("v " + " ".join(map(str, orig.tolist())))
    return ("\n".join(out) + "\n").encode()


class MaxSat(SolverProblem[WcnfInstance]):
    direction = Direction.MINIMIZE
    instance_file = InstanceFile("WCNF", ".wcnf", parse_wcnf_bytes, entries="nvars")
    certificate_format = "MaxSAT Evaluation output: 'v' line (0/1 string or literals), optional 'o <cost>'"
    formats = ("new", "old")  #: h-line WCNF (MaxSAT Evaluation 2022 on) and 'p wcnf ... top'
    #: MaxSAT solvers' exit codes (Open-WBO's `StatusCode`, which its descendants keep): 10
    #: SATISFIABLE (a solution, not proven optimal), 20 UNSATISFIABLE, 30 OPTIMUM FOUND, 40 UNKNOWN
    answer_exit_codes = MappingProxyType({10: "SATISFIABLE", 20: "UNSATISFIABLE", 30: "OPTIMUM FOUND", 40: "UNKNOWN"})

    def stated_answer(self, data: bytes) -> str | None:
        return c.stated_answer(data, len(data))

    def candidate_copy(self, data: bytes) -> tuple[bytes, str] | None:
        """A file with SATLIB's `%` trailer (where parsing stops here) is given without it."""
        return without_trailer(data)

    def _assignment(self, inst: WcnfInstance, data: bytes) -> tuple[str | None, float | None, np.ndarray]:
        answer: str | None = None
        claimed: float | None = None
        vparts: list[bytes] = []
        for number, line, head, rest in c.competition_lines(data, self.max_certificate_bytes(inst)):
            if head == b"s":
                if answer is not None:
                    raise c.invalid(f"line {number}: a second 's' line", claimed)
                answer = b" ".join(rest.split()).decode("ascii", "replace")
                if answer not in ("OPTIMUM FOUND", "SATISFIABLE", "UNSATISFIABLE", "UNKNOWN"):
                    raise c.invalid(f"line {number}: unknown answer {c.show(rest.strip())}", claimed)
            elif head == b"o":
                parts = rest.split()
                if len(parts) != 1 or (cost := c.parse_number(parts[0])) is None:
                    raise c.invalid(f"line {number}: 'o' must be followed by one number", claimed)
                claimed = cost
            elif head == b"v":
                vparts.append(rest)
            else:
                raise c.invalid(f"line {number}: unknown line {c.show(line)}", claimed)
        if answer == "UNSATISFIABLE":
            raise c.failed(
                "claims the hard clauses are unsatisfiable; such a claim cannot be verified without a proof", claimed
            )
        if answer == "UNKNOWN" and not vparts:
            raise c.invalid("s UNKNOWN: no solution", claimed)
        tokens = b" ".join(vparts).split()
        if not tokens:
            raise c.invalid("no 'v' line", claimed)
        if len(tokens) == 1 and _BITS.match(tokens[0]) and not (inst.nvars > 1 and tokens[0] == b"0"):
            bits = tokens[0]
            if len(bits) != inst.nvars:
                raise c.failed(f"'v' string has {len(bits)} values, the instance has {inst.nvars} variables", claimed)
            value = np.zeros(inst.nvars + 1, dtype=np.int8)
            value[1:] = np.frombuffer(bits, dtype=np.uint8).astype(np.int8) * 2 - 97
            return answer, claimed, value
        lits = c.certificate_ints(tokens, claimed, "literal")
        if lits[-1] == 0:
            lits = lits[:-1]
        if (lits == 0).any():
            raise c.invalid("a 0 before the end of the 'v' literals", claimed)
        return answer, claimed, c.assignment(lits, inst.nvars, inst.used_vars, claimed)

    def check_certificate(self, instance: WcnfInstance, certificate: bytes, meta: Mapping[str, Any]) -> CheckResult:
        optimum = c.meta_number(meta, "optimum", "optimal", "best_known")
        try:
            answer, claimed, value = self._assignment(instance, certificate)
            bad_hard = np.flatnonzero(falsified(instance.hard, value))
            if bad_hard.size:
                raise c.failed(
                    f"{bad_hard.size} hard clause(s) falsified, first hard clause {int(bad_hard[0]) + 1}", claimed
                )
            cost = float(instance.weights[falsified(instance.soft, value)].sum())
            c.claim_check(claimed, cost)
            if answer == "OPTIMUM FOUND" and optimum is not None and cost > optimum:
                raise c.failed(
                    f"claims OPTIMUM FOUND with cost {c.fmt(cost)} but the known optimum is {c.fmt(optimum)}", claimed
                )
        except c.Reject as rej:
            return rej.result()
        reward = (optimum + 1.0) / (cost + 1.0) if optimum is not None else None
        return CheckResult(Status.OK, value=cost, claimed=claimed, reward=reward, message=f"cost {c.fmt(cost)}")

    def make_twin(self, instance: WcnfInstance, rng: np.random.Generator, name: str = "") -> tw.Twin:
        return twin(instance, rng, name)

    def translate_certificate(self, mapping: dict, certificate: bytes) -> bytes:
        return translate(mapping, certificate)

    def generate_as(self, rng: np.random.Generator, size: int, form: str) -> str:
        return self.generate(rng, size, form=form)

    def generate(self, rng: np.random.Generator, size: int, form: str = "new") -> str:
        """A weighted partial MaxSAT instance on `size` variables with a planted model for the
        hard clauses (always satisfiable): 2*size hard 3-clauses, 3*size soft 1-2-clauses with
        weights 1..9. `form` is "new" (h lines) or "old" (p wcnf with top)."""
        n = max(3, int(size))
        planted = rng.random(n + 1) < 0.5
        hard = []
        for _ in range(2 * n):
            vs = rng.choice(n, size=3, replace=False) + 1
            signs = rng.choice(np.array([-1, 1]), size=3)
            if not any((s > 0) == planted[v] for v, s in zip(vs, signs)):
                signs[0] = -signs[0]
            hard.append([int(v * s) for v, s in zip(vs, signs)])
        soft = []
        for _ in range(3 * n):
            k = int(rng.integers(1, 3))
            vs = rng.choice(n, size=k, replace=False) + 1
            signs = rng.choice(np.array([-1, 1]), size=k)
            soft.append((int(rng.integers(1, 10)), [int(v * s) for v, s in zip(vs, signs)]))
        top = sum(w for w, _ in soft) + 1
        lines = [f"c random weighted partial MaxSAT, {n} variables (tcsexam generate)"]
        if form == "old":
            lines.append(f"p wcnf {n} {len(hard) + len(soft)} {top}")
            lines += [f"{top} " + " ".join(map(str, cl)) + " 0" for cl in hard]
        elif form == "new":
            lines += ["h " + " ".join(map(str, cl)) + " 0" for cl in hard]
        else:
            raise ValueError(f"form must be 'new' or 'old', not {form!r}")
        lines += [f"{w} " + " ".join(map(str, cl)) + " 0" for w, cl in soft]
        return "\n".join(lines) + "\n"
