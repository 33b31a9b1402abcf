"""Explain sample workspaces (release layout: original/ and revised/ with docs, data, src/formulation.tex,
logs/, solver_records/) and their rubrics. Solver records come from HiGHS; each reported dual is the
objective change per unit increase of the row's right-hand side (HiGHS' native sign in the model's
sense), checked here against a finite difference."""

from __future__ import annotations

import json
from pathlib import Path

import make_demo as md
import models

BAKERY_TEX = r"""
\begin{align*}
\max\ & \sum_{p} \text{profit}_p x_p \\
\text{s.t.}\ & \sum_p \text{oven}_p x_p \le \text{oven\_hours\_available} && (\text{oven})\\
& \sum_p \text{labour}_p x_p \le \text{labour\_hours\_available} && (\text{labour})\\
& 0 \le x_p \le \text{Max\_Demand}_p
\end{align*}
"""


def records(folder: Path, name: str, names: list[str], rows: list[str], senses: list[str], result, lp=None) -> None:
    status, obj, x, row_dual, col_dual = result
    sol = {
        "solver": "highs",
        "model_name": name,
        "status": status,
        "objective_value": obj,
        "variables": {n: {"value": v, "reduced_cost": rc} for n, v, rc in zip(names, x, col_dual)},
        "constraints": {r: {"sense": s, "dual_value": d} for r, s, d in zip(rows, senses, row_dual)},
    }
    md.write(folder / "solver_records" / f"{name}.solution.json", json.dumps(sol, indent=2))
    out = f"Status: {status}\nOBJECTIVE_VALUE: {obj}"
    md.write(folder / "logs" / "solver_output.log", out)
    md.write(
        folder / "logs" / "execution_record.json",
        json.dumps(
            {
                "returncode": 0,
                "timed_out": False,
                "objective_value": obj,
                "stdout": out + "\n",
                "stderr": "",
                "error": None,
            },
            indent=2,
        ),
    )


def bakery_slacks(folder: Path, x) -> dict[str, float]:
    p = models.read_params(folder / "data" / "general_parameters.csv")
    rows = models.read_table(folder / "data" / "table_1.csv")
    return {
        "oven": p["oven_hours_available"] - sum(float(r["Oven_Hours_per_Batch"]) * v for r, v in zip(rows, x)),
        "labour": p["labour_hours_available"] - sum(float(r["Labour_Hours_per_Batch"]) * v for r, v in zip(rows, x)),
    }


def main(ws: Path, ref: Path) -> None:
    folder = ws / "explain_workspaces" / "instance_101"
    names = ["x_Bread", "x_Croissant", "x_Baguette", "x_Muffin"]
    for part, doc, excl in (
        ("original", md.BAKERY_DOC, None),
        (
            "revised",
            md.BAKERY_DOC + "\nRevised rule: in a week the bakery bakes either Baguette or Muffin, never both.\n",
            ("Baguette", "Muffin"),
        ),
    ):
        sub = folder / part
        md.bakery_ws(sub, revised_doc=doc)
        md.write(
            sub / "src" / "formulation.tex",
            BAKERY_TEX + ("\n% plus: x_Baguette <= 40 y, x_Muffin <= 50 (1 - y), y binary\n" if excl else ""),
        )
        result = models.bakery(sub, exclusive=excl)
        status, obj, x, row_dual, col_dual = result
        if excl is None:
            # finite-difference check of the labour dual's sign and size
            md.BAKERY_PARAMS[1][1] += 1
            md.bakery_ws(md._TMP / "fd")
            md.BAKERY_PARAMS[1][1] -= 1
            bumped = models.bakery(md._TMP / "fd")[1]
            assert abs((bumped - obj) - row_dual[1]) < 1e-6, (bumped - obj, row_dual[1])
            records(sub, "bakery", names, ["oven", "labour"], ["<=", "<="], result)
        else:
            records(
                sub,
                "bakery_exclusive",
                names + ["bake_baguette"],
                ["oven", "labour", "excl_baguette", "excl_muffin"],
                ["<=", "<=", "<=", "<="],
                (status, obj, x, [None] * len(row_dual), [None] * len(col_dual)),
            )
        slack = bakery_slacks(sub, x[:4])
        md.write(sub / "solver_records" / "slacks.json", json.dumps(slack, indent=2))
    orig = json.loads((folder / "original" / "solver_records" / "bakery.solution.json").read_text())
    rev = json.loads((folder / "revised" / "solver_records" / "bakery_exclusive.solution.json").read_text())
    question = (
        "Why does the revised plan earn less than the original one? Name the binding resource of the original plan, "
        "its shadow price from the solver records, and the variables and constraints the revision adds; "
        "quantify the profit change."
    )
    md.write(
        folder / "metadata.json",
        json.dumps(
            {
                "instance_id": "OR_explain_101",
                "instance_number": 101,
                "source_revise_instance": "Demo_Bakery_revise_business",
                "domain": "Production_Planning",
                "difficulty_level": "Easy",
                "explain_task": {"dimension": "Sensitivity", "domain": "Production_Planning", "question": question},
            },
            indent=2,
        ),
    )
    o, r = orig["objective_value"], rev["objective_value"]
    labour_dual = orig["constraints"]["labour"]["dual_value"]
    rubric = {
        "workspace_id": "or_space_101_explain",
        "instance_id": "OR_explain_101",
        "instance_number": 101,
        "source_revise_instance": "Demo_Bakery_revise_business",
        "domain": "Production_Planning",
        "difficulty_level": "Easy",
        "dimension": "Sensitivity",
        "question": question,
        "checklist": [
            {
                "criterion_id": "c1",
                "checklist_type": "exact_match",
                "criterion": "Names the added binary, the exclusion constraints and the binding resource",
                "target_entities": ["bake_baguette", "excl_baguette", "excl_muffin", "labour"],
            },
            {
                "criterion_id": "c2",
                "checklist_type": "exact_match",
                "criterion": "Cites both objective values and the labour shadow price",
                "target_entities": [f"{o:g}", f"{r:g}", f"{labour_dual:g}"],
            },
            {
                "criterion_id": "c3",
                "checklist_type": "llm_boolean_judgment",
                "criterion": "Explains that labour is the binding resource in the original plan (oven has slack) and interprets its shadow price as profit per extra labour hour.",
                "instruction_for_judge": "Score 1 only if the answer says labour binds, the oven does not, and gives the shadow price as marginal profit per labour hour.",
            },
            {
                "criterion_id": "c4",
                "checklist_type": "llm_boolean_judgment",
                "criterion": "Explains that the exclusion forces one of Baguette/Muffin to zero and quantifies the profit loss.",
                "instruction_for_judge": f"Score 1 only if the answer states the loss {o - r:g} (from {o:g} to {r:g}) and attributes it to the mutual exclusion.",
            },
        ],
        "expected_short_answer": (
            f"Originally labour binds (160 h used, shadow price {labour_dual:g} per hour) while the oven has "
            f"slack; profit is {o:g}. The revision adds binary bake_baguette with excl_baguette and "
            f"excl_muffin, so only one of Baguette/Muffin is baked and profit falls to {r:g} "
            f"(a loss of {o - r:g})."
        ),
    }
    md.write(ref / "evaluation" / "explain_evaluation" / "rubrics.jsonl", json.dumps(rubric))
    good = (
        f"In the original plan (solver_records/bakery.solution.json) profit is {o:g}: labour is the binding resource "
        f"(dual_value {labour_dual:g}, i.e. each extra labour hour adds {labour_dual:g} profit) while the oven keeps "
        f"{json.loads((folder / 'original' / 'solver_records' / 'slacks.json').read_text())['oven']:g} hours of slack. "
        f"The revision adds the binary bake_baguette and the constraints excl_baguette and excl_muffin, so Baguette "
        f"or Muffin must be zero; the revised profit is {r:g}, a loss of {o - r:g}."
    )
    bad = (
        f"The oven is the bottleneck with a shadow price of 17.5 per hour, and the revised profit is {r:g} because "
        f"the bakery stops baking Bread."
    )
    md.write(ws.parent / "answers.jsonl", json.dumps({"workspace_id": "or_space_101_explain", "answer": good}))
    md.write(
        ws.parent / "answers_hallucinated.jsonl", json.dumps({"workspace_id": "or_space_101_explain", "answer": bad})
    )
