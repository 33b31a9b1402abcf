"""Rebuild references/instances/<task>/ and config/tasks/<task>.yaml from ../shared/data.

Run from the repository root: `.venv/bin/python references/instances/assemble.py [SHARED_DATA]`.
Copies the instance files byte for byte and writes each task file with its limits and per-instance
metadata (best-known values, labels, optima). Generated MaxSAT instances are made with the
package's seeded generator (fixed seeds), so a rerun reproduces every byte.
"""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "data"
INST = ROOT / "references" / "instances"
TASKS = ROOT / "config" / "tasks"

#: wall limit of the Lite tasks whose solvers search until the limit (MaxCut, TSP, colouring):
#: long enough that a job's fixed start-up (~1.5 s for Python and Ray) is a small share of its
#: solver time, short enough that the bundled default finishes in about 3 minutes on 2 cores.
#: SAT (2 s) and MaxSAT (3 s) instances are solved exactly well within their limits.
LITE_ANYTIME_WALL_S = 5

HEADER = (
    "# Solver-track task (format: src/tcsexam/tasks.py; problems: docs/problems.md).\n"
    "# Written by references/instances/assemble.py from ../shared/data (see\n"
    "# references/instances/PROVENANCE.md); edit the script, not this file.\n"
)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def write_task(
    task_id: str,
    problem: str,
    kind: str,
    direction: str,
    limits: dict,
    instances: list[dict],
    description: str,
    instance_dir: str | None = None,
    header: str = HEADER,
    anytime: bool = False,
) -> None:
    doc = {
        "id": task_id,
        "problem": problem,
        "kind": kind,
        "direction": direction,
        "description": description,
        "limits": limits,
        # an UNSAT answer counts only with a verified DRAT proof (src/tcsexam/runner/drat.py)
        **({"unsat_proof": "required"} if problem == "sat" else {}),
        "instance_dir": instance_dir or f"references/instances/{task_id}",
        "instances": instances,
    }
    if anytime:  # certificates written during the run are traced (src/tcsexam/runner/anytime.py)
        doc = {**{k: v for k, v in doc.items() if k != "instance_dir" and k != "instances"}, "anytime": True,
               "instance_dir": doc["instance_dir"], "instances": instances}  # fmt: skip
    text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
    (TASKS / f"{task_id}.yaml").write_text(header + text)


def copy(src: Path, task_id: str, name: str | None = None) -> str:
    dest_dir = INST / task_id
    dest_dir.mkdir(parents=True, exist_ok=True)
    name = name or src.name
    shutil.copyfile(src, dest_dir / name)
    return name


def maxcut() -> None:
    table = rows(SHARED / "maxcut" / "gset" / "best_known.csv")
    lite, large = [], []
    for r in table:
        entry = {
            "name": r["instance"],
            "file": None,
            "n": int(r["n"]),
            "m": int(r["m"]),
            "best_known": int(r["best_known"]),
        }
        (lite if int(r["n"]) == 800 else large).append(entry)
    for task_id, entries, limits, desc in (
        (
            "maxcut-mqlib",
            lite,
            {"wall_s": LITE_ANYTIME_WALL_S, "mem_mb": 1024},
            "MaxCut on the 800-vertex G-set graphs (MQLib/rudy format); reward = cut / best known",
        ),
        (
            "maxcut-gset-large",
            large,
            {"wall_s": 10, "mem_mb": 2048},
            "MaxCut on the G-set graphs with 1,000 to 20,000 vertices; reward = cut / best known",
        ),
    ):
        for e in entries:
            e["file"] = copy(SHARED / "maxcut" / "gset" / f"{e['name']}.txt", task_id)
        # the Lite MaxCut task is traced (anytime), so the bundled default shows score-against-limit curves
        write_task(task_id, "maxcut", "objective", "maximize", limits, entries, desc, anytime=task_id == "maxcut-mqlib")


def sat() -> None:
    table = {r["instance"]: r for r in rows(SHARED / "sat" / "labels.csv")}
    # a mix of sizes and both answers; uf50-011 and uf100-011 lack SATLIB's '%' trailer
    names = [
        "uf50-01",
        "uf50-02",
        "uf50-011",
        "uf75-01",
        "uf75-02",
        "uf75-03",
        "uf100-01",
        "uf100-02",
        "uf100-03",
        "uf100-011",
        "uuf50-01",
        "uuf50-02",
        "uuf75-01",
        "uuf75-02",
        "uuf100-01",
        "uuf100-02",
    ]
    entries = []
    for name in names:
        r = table[name]
        entries.append(
            {
                "name": name,
                "file": copy(SHARED / "sat" / f"{name}.cnf", "sat-satlib"),
                "label": r["expected"],
                "variables": int(r["variables"]),
                "clauses": int(r["clauses"]),
            }
        )
    write_task(
        "sat-satlib",
        "sat",
        "solve",
        "maximize",
        {"wall_s": 2, "mem_mb": 1024},
        entries,
        "SATLIB uniform random 3-SAT (uf/uuf 50-100 variables); solved = verified model "
        "or UNSAT with a verified DRAT proof",
    )


def tsp() -> None:
    table = rows(SHARED / "tsp" / "optimal.csv")
    lite, large = [], []
    for r in table:
        entry = {
            "name": r["instance"],
            "file": None,
            "dimension": int(r["dimension"]),
            "edge_weight_type": r["edge_weight_type"],
            "optimal": int(r["optimal"]),
        }
        (lite if int(r["dimension"]) <= 76 else large).append(entry)
    for task_id, entries, limits, desc in (
        (
            "tsp-tsplib",
            lite,
            {"wall_s": LITE_ANYTIME_WALL_S, "mem_mb": 1024},
            "Symmetric TSPLIB instances with 14 to 76 cities; reward = optimal / length",
        ),
        (
            "tsp-tsplib-large",
            large,
            {"wall_s": 10, "mem_mb": 2048},
            "Symmetric TSPLIB instances with 96 to 130 cities; reward = optimal / length",
        ),
    ):
        for e in entries:
            e["file"] = copy(SHARED / "tsp" / f"{e['name']}.tsp", task_id)
        write_task(task_id, "tsp", "objective", "minimize", limits, entries, desc)


def coloring() -> None:
    entries = []
    for r in rows(SHARED / "coloring" / "known.csv"):
        name = r["instance"]
        entries.append(
            {
                "name": name,
                "file": copy(SHARED / "coloring" / f"{name}.col", "coloring-dimacs"),
                "n": int(r["n"]),
                "m": int(r["m"]),
                "chromatic": int(r["chromatic_or_best"]),
            }
        )
    write_task(
        "coloring-dimacs",
        "coloring",
        "objective",
        "minimize",
        {"wall_s": LITE_ANYTIME_WALL_S, "mem_mb": 1024},
        entries,
        "DIMACS graph colouring (Trick's collection); reward = chromatic number / colours",
    )


#: generated MaxSAT instances: (form, variables, seed); optima computed exactly with RC2
GENERATED_MAXSAT = [
    ("old", 30, 101),
    ("old", 40, 102),
    ("old", 50, 103),
    ("old", 45, 105),
    ("new", 30, 201),
    ("new", 40, 202),
    ("new", 50, 203),
    ("new", 45, 205),
]


def maxsat() -> None:
    import numpy as np
    from pysat.examples.rc2 import RC2
    from pysat.formula import WCNF

    sys.path.insert(0, str(ROOT / "src"))
    from tcsexam.problems import get_problem

    problem = get_problem("maxsat")
    task_id = "maxsat-wcnf"
    entries = []
    for r in rows(SHARED / "maxsat" / "optima.csv"):
        name = r["instance"].removesuffix(".wcnf")
        entries.append(
            {
                "name": name,
                "file": copy(SHARED / "maxsat" / r["instance"], task_id),
                "format": "new",
                "optimum": int(r["optimal_cost"]),
                "optimum_source": "shared data (RC2 and LSU agree)",
            }
        )
    for form, size, seed in GENERATED_MAXSAT:
        name = f"gen-{form}-n{size}-s{seed}"
        text = problem.generate(np.random.default_rng(seed), size, form=form)
        path = INST / task_id / f"{name}.wcnf"
        path.write_text(text)
        with RC2(WCNF(from_file=str(path))) as rc2:
            if rc2.compute() is None:
                raise SystemExit(f"{path}: generated instance has unsatisfiable hard clauses")
            cost = rc2.cost
        entries.append(
            {
                "name": name,
                "file": path.name,
                "format": form,
                "optimum": int(cost),
                "optimum_source": "RC2 (exact) at assembly",
            }
        )
    write_task(
        task_id,
        "maxsat",
        "objective",
        "minimize",
        {"wall_s": 3, "mem_mb": 1024},
        entries,
        "Weighted partial MaxSAT (WCNF, old 'p wcnf' and new 'h' forms); reward = (optimum + 1) / (cost + 1)",
    )


# ---------------------------------------------------------------------------------------------
# generated Full families (not committed: `tcsexam generate --task <id>` or the workflow's
# generate_instances rule writes them, checked against the sha256 recorded here)

#: task id -> (problem, kind, direction, limits, sizes, instances per size, seed base, description).
#: Instance i (0-based) of size n has seed = base + 1000 * n + i and index 1, so
#: `tcsexam generate --problem P --size n --seed S` writes exactly that file. Why these sizes:
#: docs/suites.md ("Full: the generated families").
FAMILIES = {
    "sat-random3": (
        "sat",
        "solve",
        "maximize",
        {"wall_s": 3, "mem_mb": 1024},
        [50, 75, 100, 125, 150, 175, 200, 225],
        70,
        1_000_000,
        "Uniform random 3-SAT at the phase transition (4.26 clauses per variable), 50 to 225 "
        "variables, labelled SAT/UNSAT at assembly; solved = verified model or UNSAT with a verified DRAT proof",
    ),
    "maxcut-random": (
        "maxcut",
        "objective",
        "maximize",
        {"wall_s": 3, "mem_mb": 1024},
        [100, 200, 300, 400, 500],
        80,
        2_000_000,
        "MaxCut on random graphs (about 4 edges per vertex, weights +-1), 100 to 500 vertices",
    ),
    "tsp-random": (
        "tsp",
        "objective",
        "minimize",
        {"wall_s": 3, "mem_mb": 1024},
        [25, 50, 75, 100, 150, 200],
        60,
        3_000_000,
        "Random uniform EUC_2D TSP, 25 to 200 cities",
    ),
    "coloring-random": (
        "coloring",
        "objective",
        "minimize",
        {"wall_s": 3, "mem_mb": 1024},
        [50, 100, 150, 200],
        80,
        4_000_000,
        "Graph colouring of G(n, 0.1) random graphs, 50 to 200 vertices",
    ),
    "maxsat-random": (
        "maxsat",
        "objective",
        "minimize",
        {"wall_s": 3, "mem_mb": 1024},
        [20, 30, 40, 50],
        50,
        5_000_000,
        "Random weighted partial MaxSAT with planted hard clauses, 20 to 50 variables, old and new "
        "WCNF forms alternating; optimum computed exactly with RC2 at assembly",
    ),
    "tsp-random-large": (
        "tsp",
        "objective",
        "minimize",
        {"wall_s": 4, "mem_mb": 1024},
        [1000, 2000, 4000, 6000, 8000, 10000, 12000, 15000],
        8,
        6_000_000,
        "Random uniform EUC_2D TSP, 1,000 to 15,000 cities: the larger ones exceed what the "
        "reference solver can certify within the limits, so the reference build leaves them unscored",
    ),
}


def generated() -> None:
    import hashlib

    from pysat.examples.rc2 import RC2
    from pysat.formula import WCNF
    from pysat.solvers import Cadical195

    sys.path.insert(0, str(ROOT / "src"))
    import tempfile

    from tcsexam.problems import get_problem
    from tcsexam.problems.generate import generate_text, generated_name

    only = set(sys.argv[3:])
    for task_id, (pname, kind, direction, limits, sizes, per_size, base, desc) in FAMILIES.items():
        if only and task_id not in only:
            continue
        problem = get_problem(pname)
        entries = []
        for n in sizes:
            for i in range(per_size):
                seed = base + 1000 * n + i
                form = ("new", "old")[i % 2] if pname == "maxsat" else "new"
                text = generate_text(problem, n, seed, 1, form)
                file = generated_name(problem, n, seed, 1, form)
                entry = {"name": file.rsplit(".", 1)[0], "file": file}
                entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
                gen = {"size": n, "seed": seed}
                if pname == "maxsat":
                    gen["format"] = form
                entry["generate"] = gen
                if pname == "sat":
                    clauses = [
                        [int(t) for t in line.split()[:-1]]
                        for line in text.splitlines()
                        if line and line[0] not in "cp"
                    ]
                    with Cadical195(bootstrap_with=clauses) as solver:
                        entry["label"] = "SAT" if solver.solve() else "UNSAT"
                elif pname == "maxsat":
                    with tempfile.NamedTemporaryFile("w", suffix=".wcnf") as fh:
                        fh.write(text)
                        fh.flush()
                        with RC2(WCNF(from_file=fh.name)) as rc2:
                            if rc2.compute() is None:
                                raise SystemExit(f"{file}: hard clauses unsatisfiable")
                            entry["optimum"] = int(rc2.cost)
                entries.append(entry)
        doc_limits = dict(limits)
        write_task(
            task_id,
            pname,
            kind,
            direction,
            doc_limits,
            entries,
            desc,
            instance_dir=f"references/instances/generated/{task_id}",
            header=GENERATED_HEADER,
        )
        print(f"{task_id}: {len(entries)} generated instances")


GENERATED_HEADER = (
    "# Solver-track task (format: src/tcsexam/tasks.py; problems: docs/problems.md) of the Full\n"
    "# suite. Its instances are generated, not committed: `tcsexam generate --task <id>` (or the\n"
    "# workflow's generate_instances rule) writes them and checks each against the sha256 recorded\n"
    "# here; `tcsexam run` checks them again before use. Written by references/instances/assemble.py\n"
    "# (FAMILIES: generator, sizes, seeds); edit the script, not this file.\n"
)


STEPS = {"maxcut": maxcut, "sat": sat, "tsp": tsp, "coloring": coloring, "maxsat": maxsat}

if __name__ == "__main__":
    TASKS.mkdir(parents=True, exist_ok=True)
    if sys.argv[2:3] == ["generated"]:
        generated()
    else:
        for step in sys.argv[2:] or STEPS:
            STEPS[step]()
