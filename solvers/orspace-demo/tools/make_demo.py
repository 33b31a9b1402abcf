"""Writes the bundled OR-Space demo: sample workspaces with submissions (solvers/orspace-demo/) and
their oracle, index and rubrics (references/orspace/). The oracle objectives come from independent
HiGHS models (models.py), not from the submissions. Run from the repository root:

    .venv/bin/python solvers/orspace-demo/tools/make_demo.py
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import models  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "solvers" / "orspace-demo"
WS = DEMO / "Workspace_OR"
REF = ROOT / "references" / "orspace"
PROGRAMS = DEMO / "tools" / "programs"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.strip("\n") + "\n", encoding="utf-8")


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


PARAM_HEADER = ["Parameter_Name", "Value", "Unit", "Context_Description"]

BAKERY_DOC = """
A craft bakery plans one week of production of four products (Bread, Croissant, Baguette, Muffin).
Each batch earns a profit and uses oven time and labour time; the oven and the bakers have a
limited number of hours per week, and no product can be sold beyond its weekly demand. Batches may
be fractional (dough is planned in kilograms). Maximise the weekly profit. The parameter values are
in the CSV files of the data folder.
"""
BAKERY_PARAMS = [
    ["oven_hours_available", 120, "h", "Oven hours available per week"],
    ["labour_hours_available", 160, "h", "Baker hours available per week"],
]
BAKERY_TABLE = (
    ["Product", "Profit_per_Batch", "Oven_Hours_per_Batch", "Labour_Hours_per_Batch", "Max_Demand"],
    [["Bread", 40, 2, 3, 30], ["Croissant", 55, 3, 4, 20], ["Baguette", 30, 1, 2, 40], ["Muffin", 25, 1, 1, 50]],
)

FACILITY_DOC = """
A distributor decides which of its candidate warehouses to open for next quarter. Opening a
warehouse costs a fixed fee and gives a shipping capacity; every customer's demand must be met by
shipments from open warehouses, each unit costing the transport cost of its route. Minimise the
fixed fees plus the transport costs. See the data folder for fees, capacities, costs and demands.
"""
FACILITY_PARAMS = [["transport_cost_multiplier", 1, "", "Scaling of the per-unit route costs"]]
FACILITY_T1 = (
    ["Warehouse", "Fixed_Cost", "Capacity"],
    [["North", 2500, 250], ["South", 2200, 200], ["East", 3100, 300], ["West", 1900, 180]],
)
FACILITY_T2 = (
    ["Warehouse", "C1", "C2", "C3", "C4", "C5"],
    [["North", 4, 6, 9, 11, 7], ["South", 8, 5, 4, 6, 9], ["East", 6, 7, 5, 3, 4], ["West", 10, 4, 7, 8, 12]],
)
FACILITY_T3 = (["Customer", "Demand"], [["C1", 120], ["C2", 90], ["C3", 150], ["C4", 110], ["C5", 80]])

SHIFT_DOC = """
A print shop splits 24 jobs between the day and the night shift. Each job needs a number of units of
three resources (press, cutter, binder), listed in table_1.csv. The day shift should use each
resource as close to its target as possible (general_parameters.csv, day_target_<resource>); the
night shift takes every other job. Minimise the total absolute deviation of the day loads from the
targets.
"""


def bakery_ws(folder: Path, *, revised_doc: str | None = None) -> None:
    write(folder / "docs" / "business_requirement.md", revised_doc or BAKERY_DOC)
    write_csv(folder / "data" / "general_parameters.csv", PARAM_HEADER, BAKERY_PARAMS)
    write_csv(folder / "data" / "table_1.csv", *BAKERY_TABLE)


def facility_ws(folder: Path, *, doc: str = FACILITY_DOC, params=None, table1=None) -> None:
    write(folder / "docs" / "business_requirement.md", doc)
    write_csv(folder / "data" / "general_parameters.csv", PARAM_HEADER, params or FACILITY_PARAMS)
    write_csv(folder / "data" / "table_1.csv", *(table1 or FACILITY_T1))
    write_csv(folder / "data" / "table_2.csv", *FACILITY_T2)
    write_csv(folder / "data" / "table_3.csv", *FACILITY_T3)


def shift_ws(folder: Path) -> None:
    a, targets = models.market_split_data(3, 24, 1)
    write(folder / "docs" / "business_requirement.md", SHIFT_DOC)
    write_csv(
        folder / "data" / "general_parameters.csv",
        PARAM_HEADER,
        [
            [f"day_target_{r}", t, "units", f"Day-shift target load of the {r}"]
            for r, t in zip(["press", "cutter", "binder"], targets)
        ],
    )
    write_csv(
        folder / "data" / "table_1.csv",
        ["Job", "press", "cutter", "binder"],
        [[f"J{j + 1}", a[0][j], a[1][j], a[2][j]] for j in range(24)],
    )


def program(folder: Path, name: str, target: str = "solve.py") -> None:
    (folder / "src").mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / name, folder / "src" / target)


def meta_build(folder: Path, instance_id: str, difficulty: str) -> None:
    write(folder / "metadata.json", json.dumps({"instance_id": instance_id, "difficulty": difficulty}, indent=2))


def meta_revise(folder: Path, instance_id: str, rtype: str, rname: str, desc: str, difficulty: str) -> None:
    write(
        folder / "metadata.json",
        json.dumps(
            {
                "instance_id": f"{instance_id}_revise_business",
                "original_instance_id": instance_id,
                "revise_description": desc,
                "revise_type": rtype,
                "revise_type_name": rname,
                "tolerance": 0.01,
                "metadata": {"difficulty": difficulty, "source_dataset": "tcsexam-demo"},
            },
            indent=2,
        ),
    )


def main() -> None:
    for folder in (WS, REF):
        if folder.exists():
            shutil.rmtree(folder)
    build = WS / "build_workspaces"
    revise = WS / "revise_workspaces"
    oracle_build, oracle_revise, index = [], [], []

    def add_build(number, instance_id, difficulty, ref, make, prog):
        folder = build / f"instance_{number}"
        make(folder)
        meta_build(folder, instance_id, difficulty)
        if prog:
            program(folder, prog)
        wid = f"or_space_{number:03d}_build"
        oracle_build.append([wid, "build", number, instance_id, ref, 0.01])
        index.append(
            [
                wid,
                "build",
                number,
                instance_id,
                f"Workspace_OR/build_workspaces/instance_{number}/metadata.json",
                f"Workspace_OR/build_workspaces/instance_{number}/",
                difficulty,
                "",
                "",
                "",
            ]
        )

    status, bakery_obj, *_ = models.bakery(_tmp_bakery())
    assert status == "Optimal", status
    status, facility_obj, *_ = models.facility(_tmp_facility())
    assert status == "Optimal", status
    add_build(101, "Demo_Bakery", "Easy", bakery_obj, bakery_ws, "bakery_highs.py")  # pass (highspy, result file)
    add_build(
        102, "Demo_Facility", "Medium", facility_obj, facility_ws, "facility_pulp.py"
    )  # pass (PuLP, stdout lines)
    add_build(103, "Demo_Bakery_Infeasible", "Easy", bakery_obj, bakery_ws, "bakery_infeasible.py")
    add_build(104, "Demo_Facility_WrongObjective", "Medium", facility_obj, facility_ws, "facility_no_fixed_cost.py")
    add_build(105, "Demo_Bakery_Crash", "Easy", bakery_obj, bakery_ws, "bakery_crash.py")
    add_build(106, "Demo_Facility_Timeout", "Hard", facility_obj, facility_ws, "facility_bruteforce.py")
    add_build(107, "Demo_Bakery_MissingOutput", "Easy", bakery_obj, bakery_ws, "bakery_silent.py")
    add_build(108, "Demo_Bakery_Unbounded", "Easy", bakery_obj, bakery_ws, "bakery_unbounded.py")

    # Revise
    def add_revise(number, instance_id, rtype, rname, desc, difficulty, ref, make_orig, make_rev, legacy, prog):
        folder = revise / f"instance_{number}"
        make_orig(folder / "original")
        program(folder / "original", legacy, "current_heuristic.py")
        make_rev(folder / "revised")
        if prog:
            program(folder / "revised", prog)
        else:
            (folder / "revised" / "src").mkdir(parents=True, exist_ok=True)
        meta_revise(folder, instance_id, rtype, rname, desc, difficulty)
        wid = f"or_space_{number:03d}_revise"
        oracle_revise.append([wid, "revise", number, f"{instance_id}_revise_business", ref, 0.01])
        index.append(
            [
                wid,
                "revise",
                number,
                f"{instance_id}_revise_business",
                f"Workspace_OR/revise_workspaces/instance_{number}/metadata.json",
                f"Workspace_OR/revise_workspaces/instance_{number}/",
                difficulty,
                instance_id,
                rtype,
                rname,
            ]
        )

    excl_doc = (
        BAKERY_DOC
        + "\nRevised rule: Baguette and Muffin share one proofing cabinet, so in a week the bakery bakes either Baguette or Muffin, never both (Bread and Croissant are unaffected).\n"
    )
    status, excl_obj, *_ = models.bakery(_tmp_bakery(), exclusive=("Baguette", "Muffin"))
    assert status == "Optimal", status
    add_revise(
        101,
        "Demo_Bakery",
        "R1",
        "Mutual Exclusion Constraint",
        "Baguette and Muffin are mutually exclusive within a week.",
        "Medium",
        excl_obj,
        bakery_ws,
        lambda f: bakery_ws(f, revised_doc=excl_doc),
        "bakery_legacy.py",
        "bakery_exclusive_pulp.py",
    )

    cap_params = FACILITY_PARAMS + [["max_utilisation", 0.8, "", "Share of a warehouse's capacity that may be used"]]
    cap_doc = (
        FACILITY_DOC
        + "\nRevised rule: for safety stock, an open warehouse may ship at most max_utilisation of its capacity (general_parameters.csv).\n"
    )
    tmp = _tmp_facility(params=cap_params)
    status, cap_obj, *_ = models.facility(tmp)
    assert status == "Optimal", status
    add_revise(
        102,
        "Demo_Facility",
        "R2",
        "Bound / Conditional Capacity Constraint",
        "An open warehouse may use at most 80% of its capacity.",
        "Medium",
        cap_obj,
        facility_ws,
        lambda f: facility_ws(f, doc=cap_doc, params=cap_params),
        "facility_legacy.py",
        "facility_capped_highs.py",
    )

    tmp = _tmp_shift()
    status, shift_obj, *_ = models.shift_balance(tmp)
    assert status == "Optimal", status
    add_revise(
        103,
        "Demo_Shift",
        "R5",
        "Objective Function Transformation",
        "The objective changes from maximising day-shift load to minimising deviation from targets.",
        "Hard",
        shift_obj,
        shift_ws,
        shift_ws,
        "shift_legacy.py",
        "shift_pulp_nodelimit.py",
    )

    header = [
        "workspace_id",
        "task_type",
        "instance_number",
        "instance_id",
        "reference_objective",
        "relative_tolerance",
    ]
    write_csv(REF / "evaluation" / "build_evaluation" / "reference_objectives.csv", header, oracle_build)
    write_csv(REF / "evaluation" / "revise_evaluation" / "reference_objectives.csv", header, oracle_revise)
    write_csv(
        REF / "supporting_files" / "metadata" / "workspace_index.csv",
        [
            "workspace_id",
            "task_type",
            "instance_number",
            "instance_id",
            "metadata_path",
            "workspace_path",
            "difficulty",
            "original_instance_id",
            "revise_type",
            "revise_type_name",
        ],
        index,
    )
    import make_explain

    make_explain.main(WS, REF)
    print(f"bakery {bakery_obj}, facility {facility_obj}, exclusive {excl_obj}, capped {cap_obj}, shift {shift_obj}")


_TMP = Path("/tmp") / "orspace-demo-models"


def _tmp_bakery() -> Path:
    bakery_ws(_TMP / "bakery")
    return _TMP / "bakery"


def _tmp_facility(params=None) -> Path:
    facility_ws(_TMP / "facility", params=params)
    return _TMP / "facility"


def _tmp_shift() -> Path:
    shift_ws(_TMP / "shift")
    return _TMP / "shift"


if __name__ == "__main__":
    main()
