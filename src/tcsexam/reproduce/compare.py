"""`tcsexam compare BASELINE CANDIDATE`: did a run reproduce another one, and if not, why?

Each argument is a run directory (`results/<suite>/<protocol>`: index.json, attempts.csv, the
solver records and scores, manifest.json). The comparison has four parts:

- `inputs`: every input that differs, by name (suite, solver_protocol, reference, task_limits,
  instances, task_files, proof_statements, candidates, verdict_files, proofs, tcsexam_version,
  software, machine, execution, models), each with the tasks / models / fields concerned;
- `models`: per model present in both runs the Index delta, per track and per task the delta of
  the means, each with a paired bootstrap 95% interval (scoring/bootstrap.py: instances resampled
  within Solver tasks, attempts within tasks, the same draws for both runs);
- `instances`: per model, task and attempt the instances whose status changed (`ok -> timeout`)
  and those whose value changed;
- `proofs`: the proofs the pipeline checked (the manifests' `proofs`) whose verdict differs, per
  model, item and attempt with the fields that changed (`PROOF_COMPARED`: status, resolution,
  checker version, statement and proof digests, axioms, ...) or present in one run only;
- `verdict`:
    `incomparable`  the runs measured different things: suite, Solver protocol, reference (id or
                    file), the instance set (names or file contents), a task's limits or a proof
                    item's statement (its statement_sha256) differ, or no model is in both runs
                    (`reasons` names which);
    `identical`     every score (attempt table, per-instance scores, task and track means, Index)
                    is equal bit for bit;
    `differs`       some delta's interval excludes 0 (or a model is complete in one run and not in
                    the other): `reasons` names the model and the index / track / task;
    `reproduced`    every delta's interval contains 0.
  A candidate, verdict file, proof verdict, software or machine that differs does not make runs
  incomparable: it is named in `inputs` and its effect is measured by the deltas (a weakened
  candidate `differs` on its own task). Proof verdicts that differ are also named in `reasons`
  whatever the verdict (a proof that times out in one run and crashes in the other scores 0 in
  both: the scores are identical, the proofs are not).

Exit codes (cli): 0 identical / reproduced, 3 differs, 4 incomparable.
"""

from __future__ import annotations

import math
from collections import Counter
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.fileio import Json, JsonObject
from tcsexam.reproduce.compare_inputs import compare_inputs, incomparable_reasons, proof_change_text
from tcsexam.reproduce.compare_run import Run, load_run, outcomes
from tcsexam.reproduce.compare_speed import machine_speed
from tcsexam.scoring.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    METHOD,
    TaskScores,
    aggregate,
    collect_scores,
    intervals,
    task_replicates,
)
from tcsexam.suites import TRACKS, load_suite

SCHEMA_VERSION = 1


class Verdict(StrEnum):
    """What a comparison concludes (the module's docstring says when)."""

    IDENTICAL = "identical"
    REPRODUCED = "reproduced"
    DIFFERS = "differs"
    INCOMPARABLE = "incomparable"


VERDICTS = tuple(v.value for v in Verdict)
EXIT_CODES = {Verdict.IDENTICAL: 0, Verdict.REPRODUCED: 0, Verdict.DIFFERS: 3, Verdict.INCOMPARABLE: 4}


# ---------------------------------------------------------------------------------------------
# scores


def _same(a: Json, b: Json) -> bool:
    """Bit-for-bit equality of two JSON numbers (or both null)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b) and math.copysign(1, float(a)) == math.copysign(1, float(b))
    return bool(a == b)


def scores_identical(base: Run, cand: Run) -> tuple[bool, list[str]]:
    """Whether every score is equal bit for bit; the first differences found, named."""
    diffs: list[str] = []
    if set(base.models) != set(cand.models):
        diffs.append("model set")
    for model in sorted(set(base.models) & set(cand.models)):
        mb, mc = base.index["models"][model], cand.index["models"][model]
        if not _same(mb.get("index"), mc.get("index")) or mb.get("status") != mc.get("status"):
            diffs.append(f"{model}: index")
        for key in ("track_means", "task_means"):
            vb, vc = mb.get(key) or {}, mc.get(key) or {}
            for k in sorted(set(vb) | set(vc)):
                if not _same(vb.get(k), vc.get(k)):
                    diffs.append(f"{model}: {key[:-6]} {k}")

    def table(run: Run) -> dict[tuple, tuple]:
        t = run.table
        return {
            (m, tr, it, a): (s, st, ad)
            for m, tr, it, a, s, st, ad in zip(
                t["model"], t["track"], t["item"], t["attempt"], t["score"], t["score_status"], t["adoption_status"]
            )
        }

    tb, tc = table(base), table(cand)
    for row_key in sorted(set(tb) | set(tc)):
        rb, rc = tb.get(row_key), tc.get(row_key)
        if rb is None or rc is None or rb[1:] != rc[1:] or not _same_cell(rb[0], rc[0]):
            diffs.append(f"attempt row {','.join(row_key)}")
    for run_key in sorted(set(base.relative) | set(cand.relative)):
        sb = [i.get("score") for i in (base.relative.get(run_key) or {}).get("instances", [])]
        sc = [i.get("score") for i in (cand.relative.get(run_key) or {}).get("instances", [])]
        if len(sb) != len(sc) or not all(_same(x, y) for x, y in zip(sb, sc)):
            diffs.append(f"instance scores {'/'.join(run_key)}")
    return not diffs, diffs


def _same_cell(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return _same(float(a), float(b))
    except ValueError:
        return False


def instance_changes(base: Run, cand: Run) -> tuple[JsonObject, dict[str, int]]:
    """Per model, task and attempt: status changes and value changes of the instances."""
    out: JsonObject = {}
    transitions: Counter = Counter()
    keys_b = set(base.relative) | set(base.records)
    keys_c = set(cand.relative) | set(cand.records)
    for key in sorted(keys_b & keys_c):
        model, task, attempt = key
        ob, oc = outcomes(base, key) or [], outcomes(cand, key) or []
        if [(o.get("instance"), o.get("status"), o.get("value")) for o in ob] == [
            (o.get("instance"), o.get("status"), o.get("value")) for o in oc
        ]:
            continue  # the common case of a reproduced attempt
        rb = {str(o.get("instance")): o for o in ob}
        rc = {str(o.get("instance")): o for o in oc}
        status_changes, value_changes = [], []
        for name, a in rb.items():
            b = rc.get(name)
            if b is None:
                continue
            sa, sb = a.get("status"), b.get("status")
            if sa != sb:
                change = f"{sa} -> {sb}"
                transitions[change] += 1
                entry = {"instance": name, "baseline": sa, "candidate": sb, "change": change}
                if isinstance(a.get("score"), (int, float)) and isinstance(b.get("score"), (int, float)):
                    entry["score_delta"] = b["score"] - a["score"]
                status_changes.append(entry)
            elif sa == "ok":
                va, vb = a.get("value"), b.get("value")
                if not _same(va, vb):
                    entry = {"instance": name, "baseline": va, "candidate": vb}
                    if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
                        entry["delta"] = vb - va
                    if isinstance(a.get("score"), (int, float)) and isinstance(b.get("score"), (int, float)):
                        entry["score_delta"] = b["score"] - a["score"]
                    value_changes.append(entry)
        only_b = sorted(set(rb) - set(rc))
        only_c = sorted(set(rc) - set(rb))
        if status_changes or value_changes or only_b or only_c:
            changes: JsonObject = {"status_changes": status_changes, "value_changes": value_changes}
            if only_b:
                changes["only_in_baseline"] = only_b
            if only_c:
                changes["only_in_candidate"] = only_c
            out.setdefault(model, {}).setdefault(task, {})[attempt] = changes
    return out, dict(sorted(transitions.items()))


def _delta_entry(vb: Any, vc: Any, reps: np.ndarray | None) -> JsonObject:
    entry: JsonObject = {"baseline": vb, "candidate": vc}
    if vb is None or vc is None:
        entry.update(delta=None, ci95=None, excludes_zero=(vb is None) != (vc is None))
        return entry
    entry["delta"] = vc - vb
    if reps is None:
        entry.update(ci95=None, excludes_zero=vc != vb)
        return entry
    lo, hi = (float(x) for x in intervals(reps))
    entry["ci95"] = [lo, hi]
    entry["excludes_zero"] = bool(lo > 0 or hi < 0)
    return entry


def model_deltas(
    base: Run, cand: Run, suite, seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES
) -> tuple[JsonObject, list[JsonObject]]:
    """Per common model: Index, track and task deltas with paired bootstrap intervals; and the
    list of deltas whose interval excludes 0 (or whose completeness changed)."""
    scores_b = collect_scores(base.table, suite, relative=base.relative)
    scores_c = collect_scores(cand.table, suite, relative=cand.relative)
    models = [m for m in base.models if m in set(cand.models)]
    reps_b: dict[str, dict[str, np.ndarray]] = {m: {} for m in models}
    reps_c: dict[str, dict[str, np.ndarray]] = {m: {} for m in models}
    for item in suite.items if resamples > 0 else ():  # resamples 0: point deltas only (no intervals)
        tb, tc = scores_b.get(item), scores_c.get(item)
        if tb is None and tc is None:
            continue
        rb, rc = task_replicates([_only(tb, models), _only(tc, models)], seed, resamples)
        for m in models:
            if m in rb:
                reps_b[m][item] = rb[m]
            if m in rc:
                reps_c[m][item] = rc[m]
    out: JsonObject = {}
    flagged: list[JsonObject] = []
    for m in models:
        mb, mc = base.index["models"][m], cand.index["models"][m]
        tmb, tmc = mb.get("task_means") or {}, mc.get("task_means") or {}
        complete_b = {it: tmb.get(it) is not None for it in suite.items}
        complete_c = {it: tmc.get(it) is not None for it in suite.items}
        tracks_b, index_b = aggregate(suite.tracks, reps_b[m], complete_b)
        tracks_c, index_c = aggregate(suite.tracks, reps_c[m], complete_c)

        def diff(x, y):
            return None if x is None or y is None else y - x

        tasks = {}
        for it in suite.items:
            item_b, item_c = reps_b[m].get(it), reps_c[m].get(it)
            delta = (
                item_c - item_b
                if item_b is not None and item_c is not None and complete_b[it] and complete_c[it]
                else None
            )
            tasks[it] = _delta_entry(tmb.get(it), tmc.get(it), delta)
        tracks = {
            t: _delta_entry(
                (mb.get("track_means") or {}).get(t),
                (mc.get("track_means") or {}).get(t),
                diff(tracks_b[t], tracks_c[t]),
            )
            for t in TRACKS
        }
        index = _delta_entry(mb.get("index"), mc.get("index"), diff(index_b, index_c))
        index["status"] = {"baseline": mb.get("status"), "candidate": mc.get("status")}
        out[m] = {"index": index, "tracks": tracks, "tasks": tasks}
        if index["excludes_zero"]:
            flagged.append(_flag(m, "index", "index", index))
        for t, e in tracks.items():
            if e["excludes_zero"]:
                flagged.append(_flag(m, "track", t, e))
        for it, e in tasks.items():
            if e["excludes_zero"]:
                flagged.append(_flag(m, "task", it, e))
    return out, flagged


def _only(t: TaskScores | None, models: list[str]) -> TaskScores | None:
    if t is None:
        return None
    return TaskScores(t.item, t.track, t.instances, {m: a for m, a in t.attempts.items() if m in models})


def _flag(model: str, level: str, name: str, entry: JsonObject) -> JsonObject:
    return {"model": model, "level": level, "name": name, "delta": entry["delta"], "ci95": entry["ci95"]}


def _flag_text(f: JsonObject) -> str:
    where = "Index" if f["level"] == "index" else f"{f['level']} {f['name']}"
    if f["delta"] is None:
        return f"{f['model']}: {where} is complete in one run only"
    lo, hi = f["ci95"] if f["ci95"] else (f["delta"], f["delta"])
    return f"{f['model']}: {where} delta {f['delta']:+.6g} (95% CI [{lo:+.6g}, {hi:+.6g}])"


def compare_runs(
    baseline: str | Path,
    candidate: str | Path,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> JsonObject:
    base, cand = load_run(baseline), load_run(candidate)
    names, differ, notes = compare_inputs(base, cand)
    reasons = incomparable_reasons(differ)
    result: JsonObject = {
        "schema_version": SCHEMA_VERSION,
        "verdict": None,
        "reasons": [],
        "baseline": _describe(base),
        "candidate": _describe(cand),
        "inputs": {"differ": names, "details": differ, "notes": notes},
        "bootstrap": {"method": METHOD, "confidence": 0.95, "resamples": int(resamples), "seed": int(seed)},
        "models": {},
        "differs_on": [],
        "instances": {},
        "status_changes": {},
        "proofs": differ.get("proofs", []),
    }
    if reasons:
        result["verdict"] = Verdict.INCOMPARABLE
        result["reasons"] = reasons
        return result
    suite = load_suite(base.suite)
    identical, diffs = scores_identical(base, cand)
    result["models"], flagged = model_deltas(base, cand, suite, seed, resamples)
    result["instances"], result["status_changes"] = instance_changes(base, cand)
    result["differs_on"] = flagged
    result["machine_speed"] = machine_speed(base, cand, flagged, seed, resamples)  # reproduce/compare_speed.py
    if identical:
        result["verdict"] = Verdict.IDENTICAL
        result["reasons"] = ["every score is equal bit for bit"]
    elif flagged:
        result["verdict"] = Verdict.DIFFERS
        result["reasons"] = [_flag_text(f) for f in flagged]
    else:
        result["verdict"] = Verdict.REPRODUCED
        result["reasons"] = [
            f"scores differ ({len(diffs)} place(s), e.g. {diffs[0]}) but every delta's 95% interval contains 0"
        ]
    if result["proofs"]:
        n = len(result["proofs"])
        shown = "; ".join(proof_change_text(c) for c in result["proofs"][:5])
        result["reasons"].append(f"{n} proof verdict(s) differ: {shown}" + ("; ..." if n > 5 else ""))
    return result


def _describe(run: Run) -> JsonObject:
    return {
        "path": str(run.path),
        "suite": run.suite,
        "solver_protocol": run.protocol,
        "solver_reference_id": run.reference_id,
        "models": run.models,
        "manifest": run.manifest is not None,
    }
