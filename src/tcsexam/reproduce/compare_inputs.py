"""The inputs two runs differ in (`tcsexam compare`'s `inputs` part) and which of them make the runs
incomparable: suite, protocol, reference, instance sets, task limits, task files, candidates,
verdict files, checked proofs and their statements, tcsexam version, software, machine, execution."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tcsexam.fileio import Json, JsonObject
from tcsexam.reproduce.compare_run import Run

INCOMPARABLE_INPUTS = (
    "suite",
    "solver_protocol",
    "reference",
    "instances",
    "task_limits",
    "proof_statements",
    "models_in_common",
)
#: the fields of a proof verdict (the manifest's `proofs`, tcsexam.reproduce.manifest.PROOF_FIELDS)
#: compared between runs; its wall time, reason text, sandbox and limiter are not (the execution
#: section names those)
PROOF_COMPARED = (
    "status",
    "complete",
    "resolution",
    "checker",
    "checker_version",
    "statement_sha256",
    "proof_sha256",
    "theorem",
    "axioms",
)


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


def _manifest_section(run: Run, key: str) -> Json:
    return (run.manifest or {}).get(key)


def _short(h: Any) -> str:
    return str(h)[:12] if isinstance(h, str) else str(h)


def compare_inputs(base: Run, cand: Run) -> tuple[list[str], JsonObject, list[str]]:
    """(names of differing inputs, details per name, notes) between two runs."""
    differ: JsonObject = {}
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


def _changed_fields(b: dict, c: dict, keys) -> dict[str, JsonObject]:
    """{key: {baseline, candidate}} for each of `keys` whose values differ."""
    return {k: {"baseline": b.get(k), "candidate": c.get(k)} for k in keys if b.get(k) != c.get(k)}


def _run_differences(base: Run, cand: Run, differ: JsonObject) -> None:
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


def _task_differences(base: Run, cand: Run, differ: JsonObject) -> None:
    """Solver tasks: instance names and hashes, limits, task files."""
    tasks_b, tasks_c = _manifest_section(base, "tasks"), _manifest_section(cand, "tasks")
    inst_names_b = _instance_names(base)
    inst_names_c = _instance_names(cand)
    instances: JsonObject = {}
    for task in sorted(set(inst_names_b) | set(inst_names_c)):
        nb, nc = inst_names_b.get(task), inst_names_c.get(task)
        entry: JsonObject = {}
        if nb is None or nc is None:
            entry["task"] = "only in " + ("candidate" if nb is None else "baseline")
        else:
            if set(nb) - set(nc):
                entry["only_in_baseline"] = sorted(set(nb) - set(nc))
            if set(nc) - set(nb):
                entry["only_in_candidate"] = sorted(set(nc) - set(nb))
        if entry:
            instances[task] = entry
    limits: JsonObject = {}
    task_files: JsonObject = {}
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


def _provenance_differences(base: Run, cand: Run, differ: JsonObject) -> None:
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


def proof_changes(base: dict, cand: dict) -> list[JsonObject]:
    """The proof verdicts of two manifests' `proofs` sections ({model: {item: {attempt: entry}}})
    that differ on a `PROOF_COMPARED` field, for the models of both runs: {"model", "item",
    "attempt", "fields": {field: {baseline, candidate}}}; a proof checked in one run only has
    `only_in` instead of `fields`."""

    def fields(entry: Json) -> JsonObject | None:
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


def statement_changes(base: dict, cand: dict) -> JsonObject:
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


def proof_change_text(change: JsonObject) -> str:
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


def incomparable_reasons(differ: JsonObject) -> list[str]:
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
