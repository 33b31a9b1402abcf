"""`tcsexam orspace effects`: condition effects of one model (a workflow run).

Input: per condition, its `objectives.json` (score-objectives) and optionally its `explain.json`
(explain-score). Output:

- per condition and mode (build, revise): n, passed, Pass@1 and its 95% interval; the same with the
  disputed items left out and accepting any evidenced answer (`disputed_left_out`,
  `any_evidenced`: when the objectives were scored with --disputes / --audit, else None); the
  failure-mode table (counts and shares of every mode, `none` included);
- per condition: the mean Explain score with the penalty cap it was computed under, its interval,
  and the unfaithful count and share;
- for every two conditions and each mode: the paired difference of Pass@1 (and of the mean Explain
  score) over the workspaces both scored (the same problems), with its 95% interval.

Intervals are the percentile bootstrap of `scoring/bootstrap.py` (`interval`), resampling
workspaces with replacement; the generator of each quantity is `bootstrap.task_rng(seed, item)`
with item `orspace|<model>|<mode>|<condition a>|<condition b>` (b empty for a single condition), so
every number is reproducible from the seed. A paired difference uses one draw for both conditions.
"""

from __future__ import annotations

import itertools
from html import escape

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.orspace.explain import mean_label
from tcsexam.orspace.objectives import RESULT_MODES, failure_table
from tcsexam.orspace.scoring_views import PassRateView
from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, interval, task_rng

SCHEMA_VERSION = 1


def _replicates(values: np.ndarray, item: str, seed: int, resamples: int) -> np.ndarray:
    n = values.shape[-1]
    idx = task_rng(seed, item).integers(0, n, size=(resamples, n))
    means: np.ndarray = values[..., idx].mean(axis=-1)
    return means


def _mean_ci(values: np.ndarray, item: str, seed: int, resamples: int) -> list[float] | None:
    if values.size == 0:
        return None
    return interval(_replicates(values, item, seed, resamples))


def _paired(a: dict[str, float], b: dict[str, float], item: str, seed: int, resamples: int) -> JsonObject:
    common = sorted(set(a) & set(b))
    if not common:
        return {"n": 0, "difference": None, "ci95": None}
    diff = np.array([a[w] - b[w] for w in common], dtype=float)
    return {"n": len(common), "difference": float(diff.mean()), "ci95": _mean_ci(diff, item, seed, resamples)}


def _objective_part(model: str, slug: str, summary: JsonObject, seed: int, resamples: int):
    per_mode, outcomes = {}, {}
    for mode in summary.get("modes", []):
        rows = [r for r in summary["rows"] if r["mode"] == mode]
        passed = np.array([float(r["passed"]) for r in rows])
        per_mode[mode] = {
            "n": len(rows),
            "passed": int(passed.sum()),
            "pass_at_1": float(passed.mean()) if rows else None,
            "ci95": _mean_ci(passed, f"orspace|{model}|{mode}|{slug}|", seed, resamples),
            "failure_table": failure_table(rows),
            **_views(rows, f"orspace|{model}|{mode}|{slug}|", seed, resamples),
        }
        outcomes[mode] = {r["workspace_id"]: float(r["passed"]) for r in rows}
    return per_mode, outcomes


def _views(rows: list[JsonObject], item: str, seed: int, resamples: int) -> JsonObject:
    """Pass@1 with the disputed items left out and accepting any evidenced answer (rows scored
    with --disputes / --audit, `scoring_views`), each with its interval; None without its input."""
    out: JsonObject = {PassRateView.DISPUTED_LEFT_OUT: None, PassRateView.ANY_EVIDENCED: None}
    if rows and all(r.get("disputed") is not None for r in rows):
        kept = np.array([float(r["passed"]) for r in rows if not r["disputed"]])
        out[PassRateView.DISPUTED_LEFT_OUT] = {
            "n": int(kept.size),
            "passed": int(kept.sum()),
            "pass_at_1": float(kept.mean()) if kept.size else None,
            "ci95": _mean_ci(kept, f"{item}disputed_left_out", seed, resamples),
        }
    if rows and all(r.get("passed_any_evidenced") is not None for r in rows):
        ok = np.array([float(r["passed_any_evidenced"]) for r in rows])
        out[PassRateView.ANY_EVIDENCED] = {
            "n": int(ok.size),
            "passed": int(ok.sum()),
            "pass_at_1": float(ok.mean()),
            "ci95": _mean_ci(ok, f"{item}any_evidenced", seed, resamples),
        }
    return out


def _explain_part(model: str, slug: str, summary: JsonObject, seed: int, resamples: int):
    scored = {r["workspace_id"]: float(r["score"]) for r in summary["rows"] if r.get("score") is not None}
    values = np.array(list(scored.values()))
    mean = summary.get("mean_score")
    part = {
        "n": summary["n"],
        "scored": len(scored),
        "complete": summary.get("complete", False),
        "mean_score": mean,
        "penalty_setting": summary["penalty_setting"],
        "penalty_cap": summary["penalty_cap"],
        "mean_score_label": mean_label(mean, summary["penalty_setting"], summary["penalty_cap"]),
        "ci95": _mean_ci(values, f"orspace|{model}|explain|{slug}|", seed, resamples) if mean is not None else None,
        "unfaithful": sum(bool(r.get("unfaithful")) for r in summary["rows"]),
        "unfaithful_share": summary.get("unfaithful_share"),
    }
    return part, scored


def condition_effects(
    model: str,
    objectives: dict[str, JsonObject],
    explain: dict[str, JsonObject] | None = None,
    *,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> JsonObject:
    """The effects document of one model: `objectives` and `explain` map condition slugs to the
    summaries of score-objectives and explain-score."""
    explain = explain or {}
    unknown = sorted(set(explain) - set(objectives))
    if unknown:
        raise InputError(f"explain scores of condition {unknown[0]} without its objectives")
    conditions, outcomes, scores, caps = {}, {}, {}, set()
    for slug in sorted(objectives):
        summary = objectives[slug]
        if summary.get("condition") not in (None, slug):
            raise InputError(f"objectives of condition {slug} were made under condition {summary['condition']}")
        per_mode, outcomes[slug] = _objective_part(model, slug, summary, seed, resamples)
        entry: JsonObject = {"modes": per_mode, "failure_table": failure_table(summary["rows"])}
        if summary.get("attributions") is not None:
            entry["attributions"] = summary["attributions"]
        if slug in explain:
            if explain[slug].get("condition") not in (None, slug):
                raise InputError(f"explain scores of condition {slug} were made under {explain[slug]['condition']}")
            entry["explain"], scores[slug] = _explain_part(model, slug, explain[slug], seed, resamples)
            caps.add(explain[slug]["penalty_cap"])
        conditions[slug] = entry
    if len(caps) > 1:
        raise InputError(f"explain scores of {model} use different penalty caps {sorted(caps)}: not comparable")
    pairs = []
    for a, b in itertools.combinations(sorted(objectives), 2):
        for mode in sorted(set(outcomes[a]) & set(outcomes[b])):
            item = f"orspace|{model}|{mode}|{a}|{b}"
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "mode": mode,
                    "measure": "pass_at_1",
                    **_paired(outcomes[a][mode], outcomes[b][mode], item, seed, resamples),
                }
            )
        if a in scores and b in scores:
            item = f"orspace|{model}|explain|{a}|{b}"
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "mode": "explain",
                    "measure": "mean_score",
                    **_paired(scores[a], scores[b], item, seed, resamples),
                }
            )
    return {
        "schema_version": SCHEMA_VERSION,
        "model": model,
        "bootstrap": {"seed": seed, "resamples": resamples, "method": "percentile, workspaces resampled, paired"},
        "result_modes": list(RESULT_MODES),
        "conditions": conditions,
        "paired_differences": pairs,
    }


def _fmt(value: float | None, ci: list[float] | None = None, pct: bool = True) -> str:
    if value is None:
        return "n/a"
    scale, unit = (100.0, "%") if pct else (1.0, "")
    text = f"{value * scale:.1f}{unit}"
    if ci:
        text += f" [{ci[0] * scale:.1f}, {ci[1] * scale:.1f}]"
    return text


def render_html(doc: JsonObject) -> str:
    """The effects document as one HTML page (the workflow report's OR-Space item)."""
    out = [f"<h2>OR-Space: {escape(doc['model'])}</h2>", "<h3>Pass@1 per mode and condition (95% CI)</h3>"]
    out.append(
        "<table border=1><tr><th>condition</th><th>mode</th><th>n</th><th>Pass@1 as released</th>"
        "<th>disputed items left out (n)</th><th>any evidenced answer</th></tr>"
    )
    for slug, c in doc["conditions"].items():
        for mode, m in c["modes"].items():
            left, any_ok = m.get(PassRateView.DISPUTED_LEFT_OUT), m.get(PassRateView.ANY_EVIDENCED)
            left_cell = f"{_fmt(left['pass_at_1'], left['ci95'])} ({left['n']})" if left else "n/a"
            any_cell = _fmt(any_ok["pass_at_1"], any_ok["ci95"]) if any_ok else "n/a"
            out.append(
                f"<tr><td>{escape(slug)}</td><td>{mode}</td><td>{m['n']}</td><td>{_fmt(m['pass_at_1'], m['ci95'])}</td>"
                f"<td>{left_cell}</td><td>{any_cell}</td></tr>"
            )
    out.append("</table><h3>Failure modes (count, share)</h3><table border=1><tr><th>condition</th>")
    out += [f"<th>{m}</th>" for m in doc["result_modes"]] + ["</tr>"]
    for slug, c in doc["conditions"].items():
        cells = "".join(f"<td>{r['count']} ({_fmt(r['share'])})</td>" for r in c["failure_table"])
        out.append(f"<tr><td>{escape(slug)}</td>{cells}</tr>")
    attributed = {slug: c["attributions"] for slug, c in doc["conditions"].items() if c.get("attributions")}
    if attributed:
        kinds = list(next(iter(attributed.values())))
        out.append("</table><h3>Why results failed (attribution)</h3><table border=1><tr><th>condition</th>")
        out += [f"<th>{escape(k)}</th>" for k in kinds] + ["</tr>"]
        for slug, counts in attributed.items():
            out.append(
                f"<tr><td>{escape(slug)}</td>" + "".join(f"<td>{counts.get(k, 0)}</td>" for k in kinds) + "</tr>"
            )
    out.append("</table><h3>Explain</h3><table border=1><tr><th>condition</th><th>mean score (cap)</th>")
    out.append("<th>95% CI</th><th>unfaithful</th></tr>")
    for slug, c in doc["conditions"].items():
        ex = c.get("explain")
        if ex:
            ci = f"[{ex['ci95'][0]:.2f}, {ex['ci95'][1]:.2f}]" if ex["ci95"] else "n/a"
            out.append(
                f"<tr><td>{escape(slug)}</td><td>{escape(ex['mean_score_label'])}</td><td>{ci}</td>"
                f"<td>{ex['unfaithful']} of {ex['n']}</td></tr>"
            )
    out.append("</table><h3>Paired differences a - b (95% CI)</h3><table border=1>")
    out.append("<tr><th>a</th><th>b</th><th>mode</th><th>n</th><th>difference</th></tr>")
    for p in doc["paired_differences"]:
        pct = p["measure"] == "pass_at_1"
        diff = _fmt(p["difference"], p["ci95"], pct=pct)
        out.append(
            f"<tr><td>{escape(p['a'])}</td><td>{escape(p['b'])}</td><td>{p['mode']}</td><td>{p['n']}</td><td>{diff}</td></tr>"
        )
    out.append("</table>")
    b = doc["bootstrap"]
    out.append(f"<p>Bootstrap: {b['resamples']} resamples, seed {b['seed']} ({escape(b['method'])}).</p>")
    return "<!DOCTYPE html><html><body>\n" + "\n".join(out) + "\n</body></html>\n"
