"""The page of a comparison (`tcsexam compare --report`, the workflow report's "Comparison" page) and
its plot of the deltas with their 95% intervals (`--plot`)."""

from __future__ import annotations

import html
import io
import json

import numpy as np

from tcsexam.fileio import Json, JsonObject
from tcsexam.reproduce.compare_inputs import proof_change_text
from tcsexam.suites import TRACKS


def _fmt(x: Json) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.6g}"
    return html.escape(str(x))


def _ci(ci: Json) -> str:
    return "n/a" if not ci else f"[{ci[0]:+.4g}, {ci[1]:+.4g}]"


def _bar(entry: JsonObject, scale: float) -> str:
    """An inline SVG: the interval as a line, the delta as a dot, 0 as a grey rule."""
    w, h = 220, 16
    if entry.get("delta") is None or scale <= 0:
        return ""

    def x(v: float) -> float:
        return w / 2 + (v / scale) * (w / 2 - 6)

    lo, hi = entry["ci95"] if entry.get("ci95") else (entry["delta"], entry["delta"])
    color = "#d62728" if entry.get("excludes_zero") else "#1f77b4"
    return (
        f'<svg width="{w}" height="{h}"><line x1="{w / 2}" y1="0" x2="{w / 2}" y2="{h}" stroke="#bbb"/>'
        f'<line x1="{x(lo):.1f}" y1="{h / 2}" x2="{x(hi):.1f}" y2="{h / 2}" stroke="{color}" stroke-width="3"/>'
        f'<circle cx="{x(entry["delta"]):.1f}" cy="{h / 2}" r="3.5" fill="{color}"/></svg>'
    )


def _rows(model: str, data: JsonObject) -> list[tuple[str, JsonObject]]:
    rows = [("Index", data["index"])]
    rows += [(f"track {t}", data["tracks"][t]) for t in TRACKS]
    rows += [(f"task {t}", e) for t, e in data["tasks"].items()]
    return rows


def render_html(result: JsonObject) -> str:
    out = io.StringIO()
    w = out.write
    verdict = result["verdict"]
    color = {"identical": "#2ca02c", "reproduced": "#2ca02c", "differs": "#d62728", "incomparable": "#ff7f0e"}
    w("<!DOCTYPE html><html><head><meta charset='utf-8'><title>tcsexam compare</title><style>")
    w("body{font-family:sans-serif;margin:2em;max-width:70em} table{border-collapse:collapse;margin:1em 0}")
    w("td,th{border:1px solid #ccc;padding:3px 8px;font-size:90%} th{background:#f3f3f3} .flag{color:#d62728}")
    w("</style></head><body>")
    w("<h1>Run comparison</h1>")
    b, c = result["baseline"], result["candidate"]
    w(f"<p>Baseline <code>{_fmt(b['path'])}</code> vs candidate <code>{_fmt(c['path'])}</code> ")
    w(f"({_fmt(b['suite'])} / {_fmt(b['solver_protocol'])}, reference {_fmt(b['solver_reference_id'])}).</p>")
    w(f"<h2 style='color:{color.get(verdict, '#000')}'>Verdict: {_fmt(verdict)}</h2><ul>")
    for reason in result["reasons"]:
        w(f"<li>{_fmt(reason)}</li>")
    w("</ul>")
    bs = result["bootstrap"]
    w(
        f"<p>Intervals: {_fmt(bs['method'])}; {bs['resamples']} resamples, seed {bs['seed']}, "
        f"{int(bs['confidence'] * 100)}% percentile intervals.</p>"
    )
    w("<h2>Inputs that differ</h2>")
    differ = result["inputs"]["differ"]
    if not differ:
        w("<p>none</p>")
    else:
        w("<table><tr><th>input</th><th>details</th></tr>")
        for name in differ:
            detail = json.dumps(result["inputs"]["details"][name], indent=1)
            if len(detail) > 2000:
                detail = detail[:2000] + " ..."
            w(f"<tr><td>{_fmt(name)}</td><td><pre>{html.escape(detail)}</pre></td></tr>")
        w("</table>")
    for note in result["inputs"].get("notes", []):
        w(f"<p><em>{_fmt(note)}</em></p>")
    for model, data in result["models"].items():
        rows = _rows(model, data)
        scale = max(
            [abs(v) for _, e in rows for v in ([e["delta"]] + list(e.get("ci95") or [])) if isinstance(v, (int, float))]
            + [1e-12]
        )
        w(f"<h2>{_fmt(model)}</h2><table><tr><th></th><th>baseline</th><th>candidate</th><th>delta</th>")
        w("<th>95% interval</th><th></th></tr>")
        for label, e in rows:
            cls = " class='flag'" if e.get("excludes_zero") else ""
            w(
                f"<tr{cls}><td>{_fmt(label)}</td><td>{_fmt(e['baseline'])}</td><td>{_fmt(e['candidate'])}</td>"
                f"<td>{_fmt(e['delta'])}</td><td>{_ci(e.get('ci95'))}</td><td>{_bar(e, scale)}</td></tr>"
            )
        w("</table>")
    if result.get("status_changes"):
        w("<h2>Instance status changes</h2><table><tr><th>change</th><th>instances</th></tr>")
        for change, n in result["status_changes"].items():
            w(f"<tr><td>{_fmt(change)}</td><td>{n}</td></tr>")
        w("</table>")
    if result.get("instances"):
        w("<h2>Changed instances</h2><table><tr><th>model</th><th>task</th><th>attempt</th>")
        w("<th>status changes</th><th>value changes</th></tr>")
        for model, tasks in result["instances"].items():
            for task, attempts in tasks.items():
                for attempt, e in attempts.items():
                    sc = ", ".join(f"{x['instance']}: {x['change']}" for x in e["status_changes"][:20])
                    vc = ", ".join(
                        f"{x['instance']}: {_fmt(x['baseline'])} -> {_fmt(x['candidate'])}"
                        for x in e["value_changes"][:20]
                    )
                    w(
                        f"<tr><td>{_fmt(model)}</td><td>{_fmt(task)}</td><td>{_fmt(attempt)}</td>"
                        f"<td>{_fmt(sc)}</td><td>{_fmt(vc)}</td></tr>"
                    )
        w("</table>")
    if result.get("proofs"):
        w("<h2>Proof verdicts that differ</h2><ul>")
        for change in result["proofs"]:
            w(f"<li>{_fmt(proof_change_text(change))}</li>")
        w("</ul>")
    w("</body></html>\n")
    return out.getvalue()


def render_png(result: JsonObject) -> bytes:
    """Index and track deltas per model with their intervals as error bars (PNG bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(result["models"])
    labels = ["Index/100", *TRACKS]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(labels)), 4))
    width = 0.8 / max(1, len(models))
    x = np.arange(len(labels))
    for i, model in enumerate(models):
        data = result["models"][model]
        entries = [data["index"], *(data["tracks"][t] for t in TRACKS)]
        scale = [0.01, 1, 1, 1, 1]  # the Index in hundredths, so it shares the axis with the means
        d, lo, hi = [], [], []
        for e, s in zip(entries, scale):
            delta = e["delta"] if e["delta"] is not None else np.nan
            ci = e.get("ci95") or [delta, delta]
            d.append(delta * s)
            lo.append((delta - ci[0]) * s)
            hi.append((ci[1] - delta) * s)
        pos = x + (i - (len(models) - 1) / 2) * width
        ax.errorbar(pos, d, yerr=[lo, hi], fmt="o", capsize=4, label=model)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(x, labels)
    ax.set_ylabel("candidate - baseline")
    ax.set_title(f"Deltas with 95% paired bootstrap intervals (verdict: {result['verdict']})")
    if models:
        ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
