"""The structured result a Build/Revise program may write, and how status and objective are derived
from a program's output.

**Result file** (preferred). The harness sets `ORSPACE_RESULT_FILE` to a path; the program writes
one JSON object there:

```json
{"status": "Optimal", "objective": 219816.0,
 "sol_status": 1,            # optional: PuLP's prob.sol_status (1 = optimal solution found)
 "model_status": "Optimal",  # optional: HiGHS' model status string
 "proven_optimal": true}     # optional: the solver's own optimality flag
```

**Release-style stdout** (fallback): the last `OBJECTIVE_VALUE: <float>` line and the last status
line (`Status: Optimal`, `OBJECTIVE_STATUS: Optimal`, `STATUS: ...`). A program that prints an
objective line, exits 0 and prints no status line is taken as Optimal (the release's legacy
programs print only `OBJECTIVE_VALUE`); the record says so (`status_source`).

**Optimality comes from the solver's own flag.** PuLP 3.x reports `LpStatus` "Optimal" for a
time-limited MIP that found a solution without proving it (`sol_status == 2`,
LpSolutionIntegerFeasible): such a result is `Not Optimal`. Likewise `proven_optimal: false`, a
HiGHS `model_status` other than Optimal, or a solver log line saying the run stopped on a limit
(CBC `Result - Stopped on time limit`, HiGHS `Model status : Time limit reached`, Gurobi `Time limit
reached`, COPT `MIP status : stopped (time limit reached)`) overrides a
claimed Optimal.

`pulp_result(prob)` and `highs_result(h)` build the object from a solved model (using those flags,
and normalising nothing else); `write_result(result)` writes it where the harness asked. This module
imports only the standard library.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the annotations only: at run time this module imports the standard library alone
    from tcsexam.fileio import JsonObject

RESULT_ENV = "ORSPACE_RESULT_FILE"
NOT_OPTIMAL = "Not Optimal"

_OBJECTIVE_LINE = re.compile(r"^\s*OBJECTIVE_VALUE\s*[:=]\s*(\S+)\s*$", re.MULTILINE)
_STATUS_LINE = re.compile(
    r"^\s*(?:OBJECTIVE_STATUS|SOLVER_STATUS|STATUS|Status)\s*[:=]\s*(.+?)\s*$",
    re.MULTILINE,
)
_STOPPED = re.compile(
    r"(Result - Stopped on (?:time|iterations|nodes|solutions)|Stopped on iterations or time"  # CBC
    r"|Model\s+status\s*:\s*(?:Time limit reached|Iteration limit reached|Solution limit reached)"  # HiGHS
    r"|^(?:Time|Node|Solution|Iteration|Work|Memory) limit reached\s*$"  # Gurobi
    r"|MIP status\s*:\s*stopped \((?:time|node) limit reached\))",  # COPT
    re.IGNORECASE | re.MULTILINE,
)


#: a status the program wrote as its solver's numeric code: `2`, `status 2`, `gurobi status 2`
_STATUS_CODE = re.compile(r"^(?:(?:gurobi|copt|highs|cbc|pulp)\s+)?(?:status\s*(?:code)?\s*)?(-?\d+)$", re.IGNORECASE)
#: solver -> its status codes' names (gurobipy GRB.Status, coptpy COPT status, HiGHS
#: HighsModelStatus, PuLP's LpStatus for CBC): a program that reports `m.Status` as a number
NATIVE_STATUS_CODES = {
    "gurobi": dict(
        enumerate(
            (
                "",
                "LOADED",
                "OPTIMAL",
                "INFEASIBLE",
                "INF_OR_UNBD",
                "UNBOUNDED",
                "CUTOFF",
                "ITERATION_LIMIT",
                "NODE_LIMIT",
                "TIME_LIMIT",
                "SOLUTION_LIMIT",
                "INTERRUPTED",
                "NUMERIC",
                "SUBOPTIMAL",
                "INPROGRESS",
                "USER_OBJ_LIMIT",
                "WORK_LIMIT",
                "MEM_LIMIT",
            )
        )
    ),
    "copt": {
        0: "UNSTARTED",
        1: "OPTIMAL",
        2: "INFEASIBLE",
        3: "UNBOUNDED",
        4: "INF_OR_UNB",
        5: "NUMERICAL",
        6: "NODELIMIT",
        8: "TIMEOUT",
        9: "UNFINISHED",
        10: "INTERRUPTED",
    },
    "highs": dict(
        enumerate(
            (
                "Not Set",
                "Load error",
                "Model error",
                "Presolve error",
                "Solve error",
                "Postsolve error",
                "Empty",
                "Optimal",
                "Infeasible",
                "Primal infeasible or unbounded",
                "Unbounded",
                "Bound on objective reached",
                "Target for objective reached",
                "Time limit reached",
                "Iteration limit reached",
                "Unknown",
                "Solution limit reached",
                "Interrupted by user",
                "Memory limit reached",
                "Interrupted by HiGHS",
            )
        )
    ),
    "cbc": {1: "Optimal", 0: "Not Solved", -1: "Infeasible", -2: "Unbounded", -3: "Undefined"},
}


def native_status(status: str, solver: str | None) -> tuple[str, str]:
    """(status, note): a status given as the solver's numeric code (`2`, `gurobi status 3`) named
    by the code table of the solver the submission used; any other status as it is."""
    match = _STATUS_CODE.match(status.strip())
    names = NATIVE_STATUS_CODES.get(solver or "")
    if match is None or names is None or int(match.group(1)) not in names:
        return status, ""
    name = names[int(match.group(1))]
    return name, f"{solver} status code {match.group(1)} is {name}"


def pulp_result(prob: Any) -> JsonObject:
    """The result object of a solved PuLP problem; Optimal only when sol_status says so."""
    import pulp

    status = pulp.LpStatus[prob.status]
    sol_status = getattr(prob, "sol_status", None)
    proven = status == "Optimal" and sol_status in (None, pulp.LpSolutionOptimal)
    objective = pulp.value(prob.objective) if prob.objective is not None else None
    return {
        "status": "Optimal" if proven else (NOT_OPTIMAL if status == "Optimal" else status),
        "objective": objective,
        "sol_status": sol_status,
        "proven_optimal": proven,
        "solver_status": status,
    }


def highs_result(h: Any) -> JsonObject:
    """The result object of a solved highspy.Highs model."""
    model_status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    objective = info.objective_function_value if model_status == "Optimal" else None
    return {
        "status": "Optimal" if model_status == "Optimal" else model_status,
        "objective": objective,
        "model_status": model_status,
        "proven_optimal": model_status == "Optimal",
    }


def write_result(result: JsonObject, path: str | None = None) -> str:
    """Write the result object to `path`, $ORSPACE_RESULT_FILE, or ./result.json."""
    path = path or os.environ.get(RESULT_ENV) or "result.json"
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(tmp, path)
    return path


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def derive(result_text: str | None, stdout: str, exit_ok: bool, solver: str | None = None) -> JsonObject:
    """Status, objective and where they came from (`solver`: the one the submission used, which
    names a status given as its numeric code, `native_status`).

    Returns {"status": str | None, "objective": float | None, "status_source": str,
    "note": str}. `status` None means the program reported nothing usable.
    """
    note = ""
    if result_text is not None:
        try:
            data = json.loads(result_text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            status = data.get("status")
            status = str(status).strip() if status is not None else None
            if status:
                status, note = native_status(status, solver)
            objective = _number(data.get("objective"))
            if status and status.lower() == "optimal":
                sol_status = data.get("sol_status")
                model_status = data.get("model_status")
                if data.get("proven_optimal") is False:
                    status, note = NOT_OPTIMAL, "proven_optimal is false"
                elif sol_status is not None and sol_status != 1:
                    status, note = NOT_OPTIMAL, f"PuLP sol_status {sol_status} (solution found, optimality not proven)"
                elif model_status is not None and str(model_status).strip().lower() != "optimal":
                    status, note = NOT_OPTIMAL, f"HiGHS model status {model_status}"
                elif _STOPPED.search(stdout):
                    status, note = NOT_OPTIMAL, "solver log: stopped on a limit"
            return {"status": status, "objective": objective, "status_source": "result_file", "note": note}
        note = "result file is not a JSON object; using stdout"
    objectives = _OBJECTIVE_LINE.findall(stdout)
    statuses = _STATUS_LINE.findall(stdout)
    objective = _number(objectives[-1]) if objectives else None
    if objectives and objective is None:
        note = (note + "; " if note else "") + f"OBJECTIVE_VALUE {objectives[-1]!r} is not a number"
    if statuses:
        status, source = statuses[-1].strip(), "stdout_status_line"
        status, code_note = native_status(status, solver)
        note = "; ".join(n for n in (note, code_note) if n)
    elif objective is not None and exit_ok:
        status, source = "Optimal", "objective_line_only"
    else:
        return {"status": None, "objective": objective, "status_source": "none", "note": note}
    if status.lower() == "optimal" and _STOPPED.search(stdout):
        status, note = NOT_OPTIMAL, "solver log: stopped on a limit"
    return {"status": status, "objective": objective, "status_source": source, "note": note}
