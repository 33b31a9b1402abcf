"""`tcsexam orspace leaderboard`: the paper's comparisons across models (docs/orspace.md
"Leaderboard across models").

Input: an OR-Space results folder, `<results>/<run>/<condition>/{objectives.json, explain.json}`
(what the workflow writes; each run is one model, or one attempt of one, `<model>.a<k>`). Per run:

- at its headline condition (`--condition`, default `revise-all_filesystem_both`, else the run's
  first): Build and Revise Pass@1 with 95% intervals (also with the disputed items left out and
  accepting any evidenced answer when the objectives carry them), the Explain mean with its
  interval, and the failure attributions (when the objectives were scored with --attribute);
- the interface effect: per mode, Pass@1 under `filesystem` minus under `flat` for every two
  conditions that differ only in interface, paired over the workspaces both scored;
- the legacy-code effect: Revise Pass@1 with the legacy code (`revise-all`) minus without it
  (`revise-model`, formulation only), same interface and context, paired; and `revise-code`
  minus `revise-model` (code instead of formulation) when both exist.

Across runs: Pearson's r between the Explain mean and the Build/Revise Pass@1 (both modes pooled)
at the headline condition, with a bootstrap interval resampling runs (None below 3 runs).

Intervals are `effects`' percentile bootstrap (seeded per quantity by `bootstrap.task_rng`).
"""

from __future__ import annotations

import itertools
from html import escape
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.orspace.conditions import Condition, Interface
from tcsexam.orspace.effects import _mean_ci, _paired, _views
from tcsexam.orspace.release import OBJECTIVE_MODES
from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, interval, task_rng

SCHEMA_VERSION = 1
HEADLINE = Condition().slug
MODES = OBJECTIVE_MODES


def load_results(folder: Path) -> dict[str, dict[str, JsonObject]]:
    """{run: {condition: {"objectives": ..., "explain": ...}}} of a results folder."""
    if not folder.is_dir():
        raise InputError(f"{folder}: OR-Space results folder not found")
    out: dict[str, dict[str, JsonObject]] = {}
    for path in sorted(folder.glob("*/*/objectives.json")) + sorted(folder.glob("*/*/explain.json")):
        run, slug = path.parent.parent.name, path.parent.name
        try:
            Condition.parse(slug)
        except InputError:
            continue  # not a condition folder
        data = read_json(path, "OR-Space result")
        if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
            raise InputError(f"{path}: not an OR-Space summary (no rows)")
        out.setdefault(run, {}).setdefault(slug, {})[path.stem] = data
    return out


def _outcomes(summary: JsonObject, mode: str) -> dict[str, float]:
    return {r["workspace_id"]: float(r["passed"]) for r in summary["rows"] if r.get("mode") == mode}


def _rate(values: dict[str, float], item: str, seed: int, resamples: int) -> JsonObject:
    arr = np.array(list(values.values()), dtype=float)
    return {
        "n": int(arr.size),
        "passed": int(arr.sum()),
        "pass_at_1": float(arr.mean()) if arr.size else None,
        "ci95": _mean_ci(arr, item, seed, resamples),
    }


def _effects(
    run: str, conditions: dict[str, JsonObject], seed: int, resamples: int
) -> tuple[list[JsonObject], list[JsonObject]]:
    parsed = {slug: Condition.parse(slug) for slug in conditions if "objectives" in conditions[slug]}
    interface, legacy = [], []
    for a, b in itertools.permutations(sorted(parsed), 2):
        ca, cb = parsed[a], parsed[b]
        same_rest = (ca.view, ca.context) == (cb.view, cb.context)
        if same_rest and ca.interface == Interface.FILESYSTEM and cb.interface == Interface.FLAT:
            for mode in MODES:
                pa, pb = _outcomes(conditions[a]["objectives"], mode), _outcomes(conditions[b]["objectives"], mode)
                if pa and pb:
                    item = f"orspace-leaderboard|{run}|interface|{mode}|{a}|{b}"
                    interface.append({"a": a, "b": b, "mode": mode, **_paired(pa, pb, item, seed, resamples)})
        same_setting = (ca.interface, ca.context) == (cb.interface, cb.context)
        if same_setting and cb.view == "revise-model" and ca.view in ("revise-all", "revise-code"):
            pa, pb = _outcomes(conditions[a]["objectives"], "revise"), _outcomes(conditions[b]["objectives"], "revise")
            if pa and pb:
                kind = "legacy_code" if ca.view == "revise-all" else "code_instead_of_formulation"
                item = f"orspace-leaderboard|{run}|{kind}|{a}|{b}"
                legacy.append({"a": a, "b": b, "kind": kind, **_paired(pa, pb, item, seed, resamples)})
    return interface, legacy


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def leaderboard(
    results: dict[str, dict[str, JsonObject]],
    *,
    condition: str | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> JsonObject:
    """The leaderboard document of every run in `results` (`load_results`)."""
    if condition is not None:
        Condition.parse(condition)
    rows = []
    for run in sorted(results):
        conditions = results[run]
        with_objectives = sorted(s for s in conditions if "objectives" in conditions[s])
        if not with_objectives:
            continue
        headline = condition or (HEADLINE if HEADLINE in with_objectives else with_objectives[0])
        if headline not in with_objectives:
            raise InputError(f"run {run} has no objectives under condition {headline}")
        objectives = conditions[headline]["objectives"]
        modes = {}
        for mode in MODES:
            outcomes = _outcomes(objectives, mode)
            if outcomes:
                mode_rows = [r for r in objectives["rows"] if r.get("mode") == mode]
                item = f"orspace-leaderboard|{run}|{mode}|{headline}"
                modes[mode] = {**_rate(outcomes, item, seed, resamples), **_views(mode_rows, item, seed, resamples)}
        explain = conditions[headline].get("explain")
        explain_part = None
        if explain is not None:
            scores = np.array([float(r["score"]) for r in explain["rows"] if r.get("score") is not None])
            mean = explain.get("mean_score")
            explain_part = {
                "n": explain.get("n"),
                "scored": int(scores.size),
                "mean_score": mean,
                "penalty_cap": explain.get("penalty_cap"),
                "ci95": _mean_ci(scores, f"orspace-leaderboard|{run}|explain|{headline}", seed, resamples)
                if mean is not None
                else None,
            }
        pooled = [v for mode in MODES for v in _outcomes(objectives, mode).values()]
        interface, legacy = _effects(run, conditions, seed, resamples)
        rows.append(
            {
                "run": run,
                "condition": headline,
                "modes": modes,
                "build_revise_pass_at_1": float(np.mean(pooled)) if pooled else None,
                "explain": explain_part,
                "attributions": objectives.get("attributions"),
                #: of those, what the attribution judge decided (None: no judge asked)
                "attributions_by_judge": (objectives.get("attribution_judge") or {}).get("decided"),
                "interface_effect": interface,
                "legacy_code_effect": legacy,
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "or-space",
        "bootstrap": {"seed": seed, "resamples": resamples, "method": "percentile, workspaces resampled, paired"},
        "runs": rows,
        "explain_vs_build_revise": _correlation(rows, seed, resamples),
    }


def _correlation(rows: list[JsonObject], seed: int, resamples: int) -> JsonObject:
    """Pearson's r across runs of the Explain mean and the pooled Build/Revise Pass@1, with a
    percentile interval resampling runs."""
    pairs = [
        (r["explain"]["mean_score"], r["build_revise_pass_at_1"])
        for r in rows
        if r["explain"] and r["explain"]["mean_score"] is not None and r["build_revise_pass_at_1"] is not None
    ]
    out: JsonObject = {"n_runs": len(pairs), "r": None, "ci95": None}
    if len(pairs) < 3:
        out["note"] = "needs at least 3 runs with both an Explain mean and Build/Revise results"
        return out
    x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    out["r"] = _pearson(x, y)
    idx = task_rng(seed, "orspace-leaderboard|correlation").integers(0, len(pairs), size=(resamples, len(pairs)))
    reps = np.array([_pearson(x[i], y[i]) for i in idx], dtype=float)
    reps = reps[~np.isnan(reps)]
    out["ci95"] = interval(reps) if reps.size else None
    out["resamples_used"] = int(reps.size)  # resamples with a constant side have no r
    return out


def _pct(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.1f}%" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def render_html(doc: JsonObject) -> str:
    """The leaderboard as one HTML page (the report's item)."""
    out = ["<h2>OR-Space leaderboard</h2>", "<table border=1><tr><th>run</th><th>condition</th>"]
    out.append("<th>Build Pass@1</th><th>Revise Pass@1</th><th>Explain mean</th><th>attributions</th></tr>")
    for r in doc["runs"]:
        cells = [_pct(r["modes"][m]["pass_at_1"], r["modes"][m]["ci95"]) if m in r["modes"] else "n/a" for m in MODES]
        ex = r["explain"]
        ex_cell = (
            "n/a"
            if not ex or ex["mean_score"] is None
            else f"{ex['mean_score']:.2f}" + (f" [{ex['ci95'][0]:.2f}, {ex['ci95'][1]:.2f}]" if ex["ci95"] else "")
        )
        attr = ", ".join(f"{k} {v}" for k, v in (r["attributions"] or {}).items() if v) or "n/a"
        judged = ", ".join(f"{k} {v}" for k, v in (r.get("attributions_by_judge") or {}).items() if v)
        attr += f" (by the judge: {judged})" if judged else ""
        out.append(
            f"<tr><td>{escape(r['run'])}</td><td>{escape(r['condition'])}</td><td>{cells[0]}</td><td>{cells[1]}</td>"
            f"<td>{ex_cell}</td><td>{escape(attr)}</td></tr>"
        )
    out.append("</table><h3>Paired effects (a - b, 95% CI)</h3><table border=1>")
    out.append("<tr><th>run</th><th>effect</th><th>mode</th><th>a</th><th>b</th><th>n</th><th>difference</th></tr>")
    for r in doc["runs"]:
        for e in r["interface_effect"]:
            out.append(
                f"<tr><td>{escape(r['run'])}</td><td>interface</td><td>{e['mode']}</td><td>{escape(e['a'])}</td>"
                f"<td>{escape(e['b'])}</td><td>{e['n']}</td><td>{_pct(e['difference'], e['ci95'])}</td></tr>"
            )
        for e in r["legacy_code_effect"]:
            out.append(
                f"<tr><td>{escape(r['run'])}</td><td>{e['kind']}</td><td>revise</td><td>{escape(e['a'])}</td>"
                f"<td>{escape(e['b'])}</td><td>{e['n']}</td><td>{_pct(e['difference'], e['ci95'])}</td></tr>"
            )
    c = doc["explain_vs_build_revise"]
    r_text = (
        "n/a"
        if c["r"] is None
        else f"{c['r']:.3f}" + (f" [{c['ci95'][0]:.3f}, {c['ci95'][1]:.3f}]" if c["ci95"] else "")
    )
    out.append(f"</table><p>Explain vs Build/Revise across {c['n_runs']} runs: Pearson r {r_text}.</p>")
    return "<!DOCTYPE html><html><body>\n" + "\n".join(out) + "\n</body></html>\n"
