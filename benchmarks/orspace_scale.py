"""OR-Space at release scale: staging (with the leakage audit) of every release workspace under every
stage condition, the audit on its own, and scoring (score-objectives of oracle-based predictions,
explain-score without a judge) per condition. Prints times and ratios against baselines run in the
same process; asserts nothing.

usage: .venv/bin/python benchmarks/orspace_scale.py [--release ../shared/data/orspace] [--quick]

Baselines: staging against a plain `shutil.copytree` of the same workspaces; the audit against
reading every staged file's bytes; scoring has no baseline (its absolute time is printed).
--quick: only the two interfaces under the default view and context.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import tempfile
import time
from pathlib import Path

from tcsexam.orspace import leakage
from tcsexam.orspace.conditions import CONTEXTS, INTERFACES, VIEWS, Condition
from tcsexam.orspace.explain import score_explain
from tcsexam.orspace.objectives import score_objectives
from tcsexam.orspace.release import discover_workspaces, load_release, load_rubrics
from tcsexam.orspace.stage import stage, staged_texts


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def audit_only(out: Path, manifest: dict, secrets: leakage.Secrets) -> int:
    """The audit of a staged folder again (its files read back, as stage audits them)."""
    return sum(
        len(leakage.audit_texts(wid, staged_texts(out, wid, entry), secrets)["leaks"])
        for wid, entry in manifest["workspaces"].items()
    )


def read_all(out: Path) -> int:
    return sum(len(p.read_bytes()) for p in out.rglob("*") if p.is_file())


def predictions(release) -> dict:
    """Oracle objectives for even instance numbers, 2% off for odd ones (half pass)."""
    out = {}
    for wid, row in release.oracle.items():
        value = row.reference_objective * (1.0 if row.instance_number % 2 == 0 else 1.02)
        out[wid] = {"workspace_id": wid, "status": "Optimal", "objective": value}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--release", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "orspace"
    )
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    release_root = args.release.resolve()
    found = discover_workspaces(release_root)
    release = load_release(release_root)
    rubrics = load_rubrics(release_root / "evaluation" / "explain_evaluation" / "rubrics.jsonl")
    preds = predictions(release)
    answers = {w: f"The objective is {r['expected_short_answer'][:200]}" for w, r in rubrics.items()}
    secrets = leakage.Secrets(release_root)
    if args.quick:
        conditions = [Condition(interface=i) for i in INTERFACES]
    else:
        conditions = [Condition(v, i, c) for v, i, c in itertools.product(VIEWS, INTERFACES, CONTEXTS)]
    print(f"release {release_root}: {len(found)} workspaces, {len(conditions)} conditions")
    totals = {"stage": 0.0, "copy": 0.0, "audit": 0.0, "read": 0.0, "score": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for k, cond in enumerate(conditions):
            out = tmp / f"s{k}"
            t_stage, manifest = timed(lambda: stage(release_root, out, condition=cond))  # noqa: B023
            t_copy, _ = timed(lambda: [shutil.copytree(p, tmp / f"c{k}" / w) for w, p in found.items()])  # noqa: B023
            t_audit, hits = timed(lambda: audit_only(out, manifest, secrets))  # noqa: B023
            t_read, _ = timed(lambda: read_all(out))  # noqa: B023
            t_score, (obj, ex) = timed(
                lambda: (score_objectives(release, preds), score_explain(rubrics, answers, judge=None))
            )
            assert hits == 0 and obj["n"] == len(release.oracle) and ex["n"] == len(rubrics)
            coincident = sum(len(w["audit"]["coincident"]) for w in manifest["workspaces"].values())
            print(
                f"{cond.slug:34s} stage {t_stage:6.2f} s ({t_stage / t_copy:4.1f}x copytree {t_copy:5.2f} s)  "
                f"audit {t_audit:5.2f} s ({t_audit / t_read:5.1f}x reading {t_read:4.2f} s)  "
                f"score {t_score:5.2f} s  pass@1 {obj['pass_at_1']:.3f}  coincident {coincident}"
            )
            for name, value in zip(totals, (t_stage, t_copy, t_audit, t_read, t_score)):
                totals[name] += value
            shutil.rmtree(out)
            shutil.rmtree(tmp / f"c{k}")
    print(
        json.dumps(
            {
                "conditions": len(conditions),
                "workspaces": len(found),
                **{f"{k}_s": round(v, 2) for k, v in totals.items()},
                "stage_vs_copytree": round(totals["stage"] / totals["copy"], 2),
                "audit_vs_reading": round(totals["audit"] / totals["read"], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
