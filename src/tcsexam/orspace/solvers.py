"""Which solver a Build/Revise submission used (recorded as `solver` in every record and prediction).

Values: `gurobi`, `copt`, `highs`, `cbc` (PuLP's bundled CBC), several joined by `+` when a
program uses more than one, or `unknown` (no program, or none of the four found). Evidence, first
hit wins:

1. the result file's `solver` key (`result.pulp_result`, `highs_result`, ... set it);
2. the solver's own banner in the program's output (`Gurobi Optimizer version`, `Cardinal
   Optimizer`, `Running HiGHS`, `Welcome to the CBC MILP Solver`);
3. the program's imports (`gurobipy`, `coptpy`, `highspy`, `pulp`; PuLP with `HiGHS`,
   `GUROBI` or `COPT` solver classes counts as that solver, else CBC).
"""

from __future__ import annotations

import hashlib
import json
import re
from enum import StrEnum
from pathlib import Path


class Solver(StrEnum):
    """OR-Space's four solvers; their order is the order a record names several in (`gurobi+highs`)."""

    GUROBI = "gurobi"
    COPT = "copt"
    HIGHS = "highs"
    CBC = "cbc"


SOLVERS = tuple(s.value for s in Solver)
#: the solvers that need a licence file (`tcsexam orspace execute --licence`)
LICENSED = (Solver.GUROBI.value, Solver.COPT.value)
UNKNOWN = "unknown"
_BANNERS = {
    "gurobi": re.compile(r"Gurobi Optimizer version|Set parameter LicenseID|Restricted license - for non-production"),
    "copt": re.compile(r"Cardinal Optimizer|COPT v\d|Copt Version"),
    "highs": re.compile(r"Running HiGHS|HiGHS run time"),
    "cbc": re.compile(r"Welcome to the CBC MILP Solver|Cbc\d{4}I|CBC Status|Result - Optimal solution found"),
}
#: `import a, b as c` (every module of the list) and `from a import ...` (a module may be dotted)
_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+([\w. \t,]+)|from[ \t]+([\w.]+)[ \t]+import\b)", re.MULTILINE)
_SOLVER_MODULES = frozenset({"gurobipy", "coptpy", "highspy", "pulp"})


def _imported(text: str) -> set[str]:
    """The top-level modules of the solver libraries a program imports."""
    found = set()
    for listed, origin in _IMPORT.findall(text):
        for name in [origin] if origin else listed.split(","):
            top = name.strip().split(" ")[0].split(".")[0]
            if top in _SOLVER_MODULES:
                found.add(top)
    return found


_PULP_BACKENDS = {
    "gurobi": re.compile(r"\bGUROBI(?:_CMD)?\b"),
    "copt": re.compile(r"\bCOPT(?:_CMD|_DLL)?\b"),
    "highs": re.compile(r"\bHiGHS(?:_CMD)?\b"),
}
MODULE_SOLVER = {"gurobipy": "gurobi", "coptpy": "copt", "highspy": "highs"}


def _join(found: set[str]) -> str:
    return "+".join(s for s in SOLVERS if s in found) or UNKNOWN


def from_sources(texts: list[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        modules = _imported(text)
        found |= {MODULE_SOLVER[m] for m in modules if m in MODULE_SOLVER}
        if "pulp" in modules:
            backends = {name for name, pattern in _PULP_BACKENDS.items() if pattern.search(text)}
            found |= backends or {"cbc"}
    return found


def detect_solver(result_text: str | None, output: str, src: Path | None) -> str:
    """The solver a submission used, by the evidence order of the module docstring."""
    if result_text:
        try:
            data = json.loads(result_text)
        except ValueError:
            data = None
        named = data.get("solver") if isinstance(data, dict) else None
        if isinstance(named, str) and named.strip().lower() in SOLVERS:
            return named.strip().lower()
    banners = {name for name, pattern in _BANNERS.items() if pattern.search(output)}
    if banners:
        return _join(banners)
    texts = []
    if src is not None and src.is_dir():
        for path in sorted(src.rglob("*.py")):
            try:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
    return _join(from_sources(texts))


#: solver -> the environment variable its library reads a full licence from
LICENCE_ENV = {"gurobi": "GRB_LICENSE_FILE", "copt": "COPT_LICENSE_DIR"}


def licence_mounts(licences: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(environment, read-only paths) that hand full solver licences to a program: Gurobi reads the
    licence file named by GRB_LICENSE_FILE, COPT the folder named by COPT_LICENSE_DIR (a file given
    for COPT means its folder). The files are mounted read-only where they are: never copied into
    the scratch workspace or the results."""
    env, paths = {}, []
    for solver, given in sorted(licences.items()):
        if solver not in LICENCE_ENV:
            raise ValueError(f"no licence setting for solver {solver!r} (choose {', '.join(LICENCE_ENV)})")
        path = Path(given).resolve()
        if not path.exists():
            raise FileNotFoundError(f"{given}: {solver} licence not found")
        if solver == Solver.COPT and path.is_file():
            path = path.parent
        env[LICENCE_ENV[solver]] = str(path)
        paths.append(str(path))
    return env, paths


def licence_digest(licences: dict[str, str]) -> dict[str, str]:
    """solver -> sha256 of its licence file(s), for the record key (never the content itself)."""
    out = {}
    for solver, given in sorted(licences.items()):
        path = Path(given)
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        digest = hashlib.sha256()
        for f in files:
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
        out[solver] = digest.hexdigest()
    return out
