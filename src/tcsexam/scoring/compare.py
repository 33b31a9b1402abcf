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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import read_json
from tcsexam.layout import ResultsLayout
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
from tcsexam.scoring.compare_speed import machine_speed
from tcsexam.suites import TRACKS

SCHEMA_VERSION = 1
VERDICTS = ("identical", "reproduced", "differs", "incomparable")
EXIT_CODES = {"identical": 0, "reproduced": 0, "differs": 3, "incomparable": 4}
INCOMPARABLE_INPUTS = (
    "suite",
    "solver_protocol",
    "reference",
    "instances",
    "task_limits",
    "proof_statements",
    "models_in_common",
)
#: the fields of a proof verdict (the manifest's `proofs`, tcsexam.provenance.manifest.PROOF_FIELDS)
#: compared between runs; its wall time, reason text, sandbox and limiter are not (the execution
#: section names those)
PROOF_COMPARED = ("status", "complete", "resolution", "checker", "checker_version", "statement_sha256",
                  "proof_sha256", "theorem", "axioms")  # fmt: skip


@dataclass
class Run:
    path: Path
    index: dict[str, Any]
    table: Any  #: the attempt table (pandas, strings)
    manifest: dict[str, Any] | None
    relative: dict[tuple[str, str, str], dict[str, Any]]  #: (model, task, attempt) -> relative.json
    records: dict[tuple[str, str, str], list[dict[str, Any]]]  #: (model, task, attempt) -> records.json

    @property
    def suite(self) -> str:
        return str(self.index.get("suite"))

    @property
    def protocol(self) -> str:
        return str(self.index.get("solver_protocol"))

    @property
    def reference_id(self) -> str:
        return str(self.index.get("solver_reference_id"))

    @property
    def models(self) -> list[str]:
        return list(self.index.get("models", {}))


def load_run(path: str | Path, solver_files: bool = True) -> Run:
    """A run directory; `solver_files=False` leaves the per-instance outputs unread (point deltas)."""
    from tcsexam.scoring.index import read_attempts

    path = Path(path)
    if not path.is_dir():
        raise InputError(f"{path}: run directory not found (expected results/<suite>/<protocol>)")
    layout = ResultsLayout(path)
    index_path = layout.index
    if not index_path.is_file():
        raise InputError(f"{path}: no index.json: not a finished evaluation")
    index = read_json(index_path, "index file")
    if not isinstance(index, dict) or not isinstance(index.get("models"), dict):
        raise InputError(f"{index_path}: not an index.json (no 'models' object)")
    table = read_attempts(layout.attempts_csv)
    manifest = None
    if layout.manifest.is_file():
        manifest = read_json(layout.manifest, "manifest")
        if not isinstance(manifest, dict):
            raise InputError(f"{layout.manifest}: a manifest must be a JSON object")
    relative: dict[tuple[str, str, str], dict[str, Any]] = {}
    records: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    if solver_files:
        for model, task, attempt, f in layout.solver_files("relative.json"):
            data = read_json(f, "solver-score output")
            if isinstance(data, dict) and data.get("relative_score") is not None:  # not a refusal
                relative[(model, task, attempt)] = data
        # the solver-score output holds every eligible instance's status and value; the records are
        # read only for attempts that have none (scoring refused or not run)
        for model, task, attempt, f in layout.solver_files("records.json"):
            key = (model, task, attempt)
            if key in relative:
                continue
            data = read_json(f, "records file")
            if isinstance(data, list):
                records[key] = [_outcome(r) for r in data if isinstance(r, dict)]
    return Run(path, index, table, manifest, relative, records)


def _outcome(record: dict[str, Any]) -> dict[str, Any]:
    value = record.get("A")
    if value is None:
        value = record.get("solved")
    return {"instance": str(record.get("instance")), "status": record.get("status"), "value": value}


def outcomes(run: Run, key: tuple[str, str, str]) -> list[dict[str, Any]] | None:
    """Instance outcomes {instance, status, value[, score]} of one attempt (None: none known)."""
    if key in run.relative:
        data = run.relative[key]
        out = [i for i in data.get("instances", []) if isinstance(i, dict)]
        return out
    return run.records.get(key)


# ---------------------------------------------------------------------------------------------
# inputs


def _leaf_changes(base: dict, cand: dict, inner: str, value: Callable[[Any], Any], either: bool = False) -> list[dict]:
    """The leaves of two {model: {name: {attempt: leaf}}} manifest sections whose `value` differs,
    as {"model", inner, "attempt", "baseline", "candidate"} in sorted order. Models present in both
    runs; names and attempts present in both, or in either when `either` (a missing leaf is None)."""
    keys = (lambda x, y: set(x) | set(y)) if either else (lambda x, y: set(x) & set(y))
    out = []
    for model in sorted(set(base) & set(cand)):
        for name in sorted(keys(base[model], cand[model])):
            ab, ac = base[model].get(name, {}), cand[model].get(name, {})
            for attempt in sorted(keys(ab, ac)):
                vb, vc = value(ab.get(attempt)), value(ac.get(attempt))
                if vb != vc:
                    out.append({"model": model, inner: name, "attempt": attempt, "baseline": vb, "candidate": vc})
    return out


def _manifest_section(run: Run, key: str) -> Any:
    return (run.manifest or {}).get(key)


def _short(h: Any) -> str:
    return str(h)[:12] if isinstance(h, str) else str(h)


def compare_inputs(base: Run, cand: Run) -> tuple[list[str], dict[str, Any], list[str]]:
    """(names of differing inputs, details per name, notes) between two runs."""
    differ: dict[str, Any] = {}
    _run_differences(base, cand, differ)
    notes = [
        f"{name} {run.path} has no manifest.json: limits, instance files, candidates, verdict files, "
        "software and machine cannot be compared (write one with `tcsexam manifest RUN_DIR`)"
        for name, run in (("baseline", base), ("candidate", cand))
        if run.manifest is None
    ]
    _task_differences(base, cand, differ)
    _provenance_differences(base, cand, differ)
    return list(differ), differ, notes


def _changed_fields(b: dict, c: dict, keys) -> dict[str, dict[str, Any]]:
    """{key: {baseline, candidate}} for each of `keys` whose values differ."""
    return {k: {"baseline": b.get(k), "candidate": c.get(k)} for k in keys if b.get(k) != c.get(k)}


def _run_differences(base: Run, cand: Run, differ: dict[str, Any]) -> None:
    """Suite, protocol, reference (id, file hash) and models."""
    if base.suite != cand.suite:
        differ["suite"] = {"baseline": base.suite, "candidate": cand.suite}
    if base.protocol != cand.protocol:
        differ["solver_protocol"] = {"baseline": base.protocol, "candidate": cand.protocol}
    ref_b, ref_c = _manifest_section(base, "reference") or {}, _manifest_section(cand, "reference") or {}
    ref_diff = {}
    if base.reference_id != cand.reference_id:
        ref_diff["id"] = {"baseline": base.reference_id, "candidate": cand.reference_id}
    if ref_b.get("sha256") and ref_c.get("sha256") and ref_b["sha256"] != ref_c["sha256"]:
        ref_diff["sha256"] = {"baseline": ref_b["sha256"], "candidate": ref_c["sha256"]}
    if ref_diff:
        differ["reference"] = ref_diff
    models_b, models_c = set(base.models), set(cand.models)
    if models_b != models_c:
        differ["models"] = {
            "only_in_baseline": sorted(models_b - models_c),
            "only_in_candidate": sorted(models_c - models_b),
        }
    if not models_b & models_c:
        differ["models_in_common"] = {"baseline": sorted(models_b), "candidate": sorted(models_c)}


def _task_differences(base: Run, cand: Run, differ: dict[str, Any]) -> None:
    """Solver tasks: instance names and hashes, limits, task files."""
    tasks_b, tasks_c = _manifest_section(base, "tasks"), _manifest_section(cand, "tasks")
    inst_names_b = _instance_names(base)
    inst_names_c = _instance_names(cand)
    instances: dict[str, Any] = {}
    for task in sorted(set(inst_names_b) | set(inst_names_c)):
        nb, nc = inst_names_b.get(task), inst_names_c.get(task)
        entry: dict[str, Any] = {}
        if nb is None or nc is None:
            entry["task"] = "only in " + ("candidate" if nb is None else "baseline")
        else:
            if set(nb) - set(nc):
                entry["only_in_baseline"] = sorted(set(nb) - set(nc))
            if set(nc) - set(nb):
                entry["only_in_candidate"] = sorted(set(nc) - set(nb))
        if entry:
            instances[task] = entry
    limits: dict[str, Any] = {}
    task_files: dict[str, Any] = {}
    if isinstance(tasks_b, dict) and isinstance(tasks_c, dict):
        for task in sorted(set(tasks_b) & set(tasks_c)):
            tb, tc = tasks_b[task] or {}, tasks_c[task] or {}
            lb, lc = tb.get("limits") or {}, tc.get("limits") or {}
            changed = _changed_fields(lb, lc, sorted(set(lb) | set(lc)))
            if changed:
                limits[task] = changed
            if tb.get("sha256") != tc.get("sha256"):
                task_files[task] = {"baseline": tb.get("sha256"), "candidate": tc.get("sha256")}
            ib, ic = tb.get("instances") or {}, tc.get("instances") or {}
            changed_files = sorted(n for n in set(ib) & set(ic) if ib[n] != ic[n])
            if changed_files:
                instances.setdefault(task, {})["file_changed"] = changed_files
    for name, found in (("instances", instances), ("task_limits", limits), ("task_files", task_files)):
        if found:
            differ[name] = found


def _provenance_differences(base: Run, cand: Run, differ: dict[str, Any]) -> None:
    """Candidates, verdict files, tcsexam version, software, machine, execution."""
    cands_b, cands_c = _manifest_section(base, "candidates"), _manifest_section(cand, "candidates")
    if isinstance(cands_b, dict) and isinstance(cands_c, dict):
        changed = _leaf_changes(cands_b, cands_c, "task", lambda entry: (entry or {}).get("candidate_hash"))
        if changed:
            differ["candidates"] = changed
    ver_b, ver_c = _manifest_section(base, "verdicts"), _manifest_section(cand, "verdicts")
    if isinstance(ver_b, dict) and isinstance(ver_c, dict):
        changed = _leaf_changes(ver_b, ver_c, "item", lambda sha256: sha256, either=True)
        if changed:
            differ["verdict_files"] = changed
    proofs_b, proofs_c = _manifest_section(base, "proofs"), _manifest_section(cand, "proofs")
    if isinstance(proofs_b, dict) and isinstance(proofs_c, dict):
        changed = proof_changes(proofs_b, proofs_c)
        if changed:
            differ["proofs"] = changed
        statements = statement_changes(proofs_b, proofs_c)
        if statements:
            differ["proof_statements"] = statements
    tb, tc = _manifest_section(base, "tcsexam"), _manifest_section(cand, "tcsexam")
    if isinstance(tb, dict) and isinstance(tc, dict):
        fields = _changed_fields(tb, tc, ("version", "git_commit", "git_dirty"))
        if fields:
            differ["tcsexam_version"] = fields
    for section in ("software", "machine", "execution"):
        sb, sc = _manifest_section(base, section), _manifest_section(cand, section)
        if isinstance(sb, dict) and isinstance(sc, dict):
            fields = _changed_fields(sb, sc, sorted(set(sb) | set(sc)))
            if fields:
                differ[section] = fields


def proof_changes(base: dict, cand: dict) -> list[dict[str, Any]]:
    """The proof verdicts of two manifests' `proofs` sections ({model: {item: {attempt: entry}}})
    that differ on a `PROOF_COMPARED` field, for the models of both runs: {"model", "item",
    "attempt", "fields": {field: {baseline, candidate}}}; a proof checked in one run only has
    `only_in` instead of `fields`."""

    def fields(entry: Any) -> dict[str, Any] | None:
        return {k: entry.get(k) for k in PROOF_COMPARED} if isinstance(entry, dict) else None

    out = []
    for change in _leaf_changes(base, cand, "item", fields, either=True):
        fb, fc = change.pop("baseline"), change.pop("candidate")
        if fb is None or fc is None:
            change["only_in"] = "baseline" if fc is None else "candidate"
        else:
            change["fields"] = _changed_fields(fb, fc, PROOF_COMPARED)
        out.append(change)
    return out


def statement_changes(base: dict, cand: dict) -> dict[str, Any]:
    """Proof items checked in both runs whose statement digests differ: item -> {baseline,
    candidate} (sorted digests over every model and attempt). Another statement is another task."""

    def digests(section: dict) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for items in section.values():
            for item, attempts in (items or {}).items():
                for entry in (attempts or {}).values():
                    if isinstance(entry, dict) and entry.get("statement_sha256"):
                        out.setdefault(item, set()).add(str(entry["statement_sha256"]))
        return out

    db, dc = digests(base), digests(cand)
    return {
        item: {"baseline": sorted(db[item]), "candidate": sorted(dc[item])}
        for item in sorted(set(db) & set(dc))
        if db[item] != dc[item]
    }


def proof_change_text(change: dict[str, Any]) -> str:
    where = f"{change['model']}/{change['item']}/{change['attempt']}"
    if "only_in" in change:
        return f"proof {where} checked in the {change['only_in']} only"
    bits = []
    for k, v in change["fields"].items():
        b, c = v["baseline"], v["candidate"]
        if k.endswith("sha256"):
            b, c = f"{_short(b)}...", f"{_short(c)}..."
        bits.append(f"{k} {b} -> {c}")
    return f"proof {where}: " + ", ".join(bits)


def _instance_names(run: Run) -> dict[str, list[str]]:
    """Solver task -> instance names of the run (the manifest's, else the solver-score outputs')."""
    tasks = _manifest_section(run, "tasks")
    if isinstance(tasks, dict):
        return {t: sorted((v or {}).get("instances") or {}) for t, v in tasks.items()}
    out: dict[str, set[str]] = {}
    for (_m, task, _a), data in run.relative.items():
        names = {str(i.get("instance")) for i in data.get("instances", []) if isinstance(i, dict)}
        names |= {str(n) for n in data.get("unscored_instances", [])}
        out.setdefault(task, set()).update(names)
    return {t: sorted(v) for t, v in out.items()}


def incomparable_reasons(differ: dict[str, Any]) -> list[str]:
    reasons = []
    for key in INCOMPARABLE_INPUTS:
        if key not in differ:
            continue
        d = differ[key]
        if key == "suite":
            reasons.append(f"suite: {d['baseline']} vs {d['candidate']}")
        elif key == "solver_protocol":
            reasons.append(f"solver protocol: {d['baseline']} vs {d['candidate']}")
        elif key == "reference":
            parts = [
                f"{k} {v['baseline']} vs {v['candidate']}"
                if k == "id"
                else f"{k} {_short(v['baseline'])}... vs {_short(v['candidate'])}..."
                for k, v in d.items()
            ]
            reasons.append("reference: " + ", ".join(parts))
        elif key == "instances":
            for task, entry in d.items():
                bits = []
                for k, v in entry.items():
                    bits.append(f"{k.replace('_', ' ')} {', '.join(v) if isinstance(v, list) else v}")
                reasons.append(f"instance set of {task}: " + "; ".join(bits))
        elif key == "task_limits":
            for task, fields in d.items():
                bits = [f"{k} {v['baseline']} -> {v['candidate']}" for k, v in fields.items()]
                reasons.append(f"limits of {task}: " + ", ".join(bits))
        elif key == "proof_statements":
            for item, v in d.items():
                b = ", ".join(f"{_short(x)}..." for x in v["baseline"])
                c = ", ".join(f"{_short(x)}..." for x in v["candidate"])
                reasons.append(f"statement of {item}: statement_sha256 {b} vs {c}")
        elif key == "models_in_common":
            reasons.append("no model is in both runs")
    return reasons


# ---------------------------------------------------------------------------------------------
# scores


def _same(a: Any, b: Any) -> bool:
    """Bit-for-bit equality of two JSON numbers (or both null)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return float(a) == float(b) and math.copysign(1, float(a)) == math.copysign(1, float(b))
    return a == b


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
    for key in sorted(set(tb) | set(tc)):
        rb, rc = tb.get(key), tc.get(key)
        if rb is None or rc is None or rb[1:] != rc[1:] or not _same_cell(rb[0], rc[0]):
            diffs.append(f"attempt row {','.join(key)}")
    for key in sorted(set(base.relative) | set(cand.relative)):
        sb = [i.get("score") for i in (base.relative.get(key) or {}).get("instances", [])]
        sc = [i.get("score") for i in (cand.relative.get(key) or {}).get("instances", [])]
        if len(sb) != len(sc) or not all(_same(x, y) for x, y in zip(sb, sc)):
            diffs.append(f"instance scores {'/'.join(key)}")
    return not diffs, diffs


def _same_cell(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return _same(float(a), float(b))
    except ValueError:
        return False


def instance_changes(base: Run, cand: Run) -> tuple[dict[str, Any], dict[str, int]]:
    """Per model, task and attempt: status changes and value changes of the instances."""
    out: dict[str, Any] = {}
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
            entry: dict[str, Any] = {"status_changes": status_changes, "value_changes": value_changes}
            if only_b:
                entry["only_in_baseline"] = only_b
            if only_c:
                entry["only_in_candidate"] = only_c
            out.setdefault(model, {}).setdefault(task, {})[attempt] = entry
    return out, dict(sorted(transitions.items()))


def _delta_entry(vb: Any, vc: Any, reps: np.ndarray | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"baseline": vb, "candidate": vc}
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
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
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
    out: dict[str, Any] = {}
    flagged: list[dict[str, Any]] = []
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
            rb, rc = reps_b[m].get(it), reps_c[m].get(it)
            reps = rc - rb if rb is not None and rc is not None and complete_b[it] and complete_c[it] else None
            tasks[it] = _delta_entry(tmb.get(it), tmc.get(it), reps)
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


def _flag(model: str, level: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "level": level, "name": name, "delta": entry["delta"], "ci95": entry["ci95"]}


def _flag_text(f: dict[str, Any]) -> str:
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
) -> dict[str, Any]:
    from tcsexam.suites import load_suite

    base, cand = load_run(baseline), load_run(candidate)
    names, differ, notes = compare_inputs(base, cand)
    reasons = incomparable_reasons(differ)
    result: dict[str, Any] = {
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
        result["verdict"] = "incomparable"
        result["reasons"] = reasons
        return result
    suite = load_suite(base.suite)
    identical, diffs = scores_identical(base, cand)
    result["models"], flagged = model_deltas(base, cand, suite, seed, resamples)
    result["instances"], result["status_changes"] = instance_changes(base, cand)
    result["differs_on"] = flagged
    result["machine_speed"] = machine_speed(base, cand, flagged, seed, resamples)  # scoring/compare_speed.py
    if identical:
        result["verdict"] = "identical"
        result["reasons"] = ["every score is equal bit for bit"]
    elif flagged:
        result["verdict"] = "differs"
        result["reasons"] = [_flag_text(f) for f in flagged]
    else:
        result["verdict"] = "reproduced"
        result["reasons"] = [
            f"scores differ ({len(diffs)} place(s), e.g. {diffs[0]}) but every delta's 95% interval contains 0"
        ]
    if result["proofs"]:
        n = len(result["proofs"])
        shown = "; ".join(proof_change_text(c) for c in result["proofs"][:5])
        result["reasons"].append(f"{n} proof verdict(s) differ: {shown}" + ("; ..." if n > 5 else ""))
    return result


def _describe(run: Run) -> dict[str, Any]:
    return {
        "path": str(run.path),
        "suite": run.suite,
        "solver_protocol": run.protocol,
        "solver_reference_id": run.reference_id,
        "models": run.models,
        "manifest": run.manifest is not None,
    }
