"""The Snakemake report's leaderboard table and construction / proof figures, drawn from the same
collected data as the site (`collect_run`), so the two never disagree:

- `leaderboard.html`: model, Index with its 95% interval, the four track means, status and its
  reasons, models sorted by Index (incomplete ones last); a self-contained page;
- `constructions.png`: per construction item, each model's score (the checker's original reward)
  with the checker's status marked where it was not ok;
- `proofs.png`: theorem and open-conjecture items x models: complete (1), not complete with the
  checker's partial reward written in, or no verdict;
- `cost.png`: Index against cost (USD) per model with the Pareto front, from index.json's cost
  sections (models with an unknown cost are named below the plot, never drawn at 0).

With cost sections (`tcsexam score --generation`) the leaderboard also gives each model's cost,
what is missing of it, its cost per solved item and whether it is on the Pareto front.
"""

from __future__ import annotations

import io
from html import escape
from pathlib import Path

import numpy as np

from tcsexam.fileio import Json, JsonObject, atomic_write_bytes, atomic_write_text
from tcsexam.suites import BINARY_TRACKS, Track
from tcsexam.view.collect import RunData

REPORT_FILES = ("leaderboard.html", "constructions.png", "proofs.png", "cost.png")
TRACK_LABELS = {
    "theorem": "Theorem",
    "solver": "Solver",
    "construction": "Construction",
    "open_conjecture": "Open conj.",
}


def _f(v: Json, d: int) -> str:
    return "&mdash;" if v is None else f"{v:.{d}f}"


def leaderboard_rows(run: RunData) -> list[JsonObject]:
    """The leaderboard in display order: by Index, highest first; models without one last."""
    return sorted(run.leaderboard, key=lambda r: (r["index"] is None, -(r["index"] or 0.0), r["model"]))


def _usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


def _cost_cells(r: JsonObject, front: list[str]) -> str:
    cost = r.get("cost")
    if not isinstance(cost, dict):
        return '<td class="n">&mdash;</td><td></td><td class="n">&mdash;</td><td></td>'
    missing = cost.get("cost_missing") or {}
    said = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in missing.items() if v)
    return (
        f'<td class="n">{_usd(cost.get("cost_usd"))}</td><td>{escape(said)}</td>'
        f'<td class="n">{_usd(cost.get("cost_per_solved_item")) if cost.get("cost_usd") is not None else "unknown"}</td>'
        f"<td>{'yes' if r['model'] in front else ''}</td>"
    )


def leaderboard_html(run: RunData, site: Path | None = None) -> str:
    tracks = run.meta["tracks"]
    head = "".join(f"<th>{TRACK_LABELS[t]}</th>" for t in tracks)
    cost = run.cost or {}
    with_cost = run.cost is not None and cost.get("scored")
    front = cost.get("pareto_front", []) if with_cost else []
    if with_cost:
        head += "<th>Cost</th><th>Cost missing</th><th>Cost per solved item</th><th>Pareto front</th>"
    body = []
    for rank, r in enumerate(leaderboard_rows(run), start=1):
        ci = r.get("index_ci95")
        reasons = "; ".join(
            f"{i.get('reason', 'issue')}: {i.get('item') or ''} {i.get('message', '')}".strip()
            for i in r["issues"]
            if isinstance(i, dict)
        )
        cells = "".join(f'<td class="n">{_f(r["track_means"].get(t), 3)}</td>' for t in tracks)
        if with_cost:
            cells += _cost_cells(r, front)
        body.append(
            f"<tr><td>{rank if r['index'] is not None else ''}</td><td>{escape(r['model'])}</td>"
            f'<td class="n"><b>{_f(r["index"], 2)}</b></td>'
            f'<td class="n">{"[" + _f(ci[0], 2) + ", " + _f(ci[1], 2) + "]" if ci else ""}</td>{cells}'
            f'<td class="s {escape(str(r["status"]))}">{escape(str(r["status"]))}</td><td>{escape(reasons)}</td></tr>'
        )
    meta = run.meta
    explorer = ""
    if site is not None:
        index = (Path(site) / "index.html").resolve()
        explorer = f' (<a href="{escape(index.as_uri())}" target="_blank">{escape(str(index))}</a>)'
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Leaderboard {escape(meta["title"])}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 16px; color: #1b1f24; }}
table {{ border-collapse: collapse; }} th, td {{ border-bottom: 1px solid #e4e7ec; padding: 5px 10px; text-align: left; }}
th {{ background: #f0f2f5; font-size: 12px; }} td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.s {{ font-weight: 600; }} .complete {{ color: #166534; }} .provisional {{ color: #92400e; }} .incomplete {{ color: #991b1b; }}
p {{ color: #667085; }}
</style></head><body>
<h2>Leaderboard: {escape(meta["title"])}</h2>
<p>Reference {escape(str(meta.get("reference_id")))}; Index = 30 Theorem + 30 Solver + 30 Construction + 10 Open
conjecture; 95% bootstrap intervals. Run status: {escape(str(meta.get("status")))}. The same numbers as index.json and
the results explorer{explorer}.{_cost_note(run) if with_cost else ""}</p>
<table id="leaderboard"><thead><tr><th>#</th><th>Model</th><th>Index</th><th>95% interval</th>{head}<th>Status</th>
<th>Reasons</th></tr></thead><tbody>
{"".join(body)}
</tbody></table></body></html>
"""


def _cost_note(run: RunData) -> str:
    bars = ", ".join(f"{TRACK_LABELS.get(t, t)} {v:g}" for t, v in ((run.cost or {}).get("solved_at") or {}).items())
    return (
        " Cost: what the adopted attempts' generations cost (unknown when an attempt has no generation record or no"
        f" price: never free); an item is solved when its task mean reaches {escape(bars)}; the Pareto front holds"
        " the models no other model beats on both Index and cost."
    )


def cost_figure(plt, run: RunData):
    """Index against cost per model, the Pareto front joined; unknown costs named, not drawn."""
    front = (run.cost or {}).get("pareto_front") or []
    known: list[tuple[JsonObject, Json]] = []  # (leaderboard row, its cost)
    unknown: list[tuple[JsonObject, Json]] = []
    for r in leaderboard_rows(run):
        cost = (r.get("cost") or {}).get("cost_usd")
        (known if cost is not None and r["index"] is not None else unknown).append((r, cost))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if not known:
        ax.text(
            0.5, 0.5, "no model has both an Index and a known cost", ha="center", va="center", transform=ax.transAxes
        )
        ax.set_axis_off()
    else:
        for r, cost in known:
            on = r["model"] in front
            ax.scatter([cost], [r["index"]], color="#2563eb" if on else "#98a2b3", zorder=3)
            ax.annotate(r["model"], (cost, r["index"]), textcoords="offset points", xytext=(5, 5), fontsize=8)
        line = sorted((c, r["index"]) for r, c in known if r["model"] in front)
        if len(line) > 1:
            ax.plot([c for c, _ in line], [i for _, i in line], "--", color="#2563eb", label="Pareto front")
            ax.legend(fontsize=8)
        costs = [c for _, c in known]
        if min(costs) > 0 and max(costs) / min(costs) > 20:
            ax.set_xscale("log")
        ax.margins(x=0.15, y=0.15)  # room for the labels
        ax.set_xlabel("cost of the adopted attempts (USD)")
        ax.set_ylabel("Index")
        ax.grid(alpha=0.3)
    if unknown:
        names = ", ".join(r["model"] for r, _ in unknown)
        fig.text(0.01, 0.01, f"not drawn (no Index or cost unknown): {names}", fontsize=7, color="#667085")
    ax.set_title(f"Index against cost ({run.meta['title']})", fontsize=10)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _items(run: RunData, tracks: tuple[str, ...]) -> tuple[list[str], list[str], dict[tuple[str, str], list]]:
    """(items, models, (item, model) -> that model's attempts of the item)."""
    items: list[str] = []
    cells: dict[tuple[str, str], list] = {}
    for it in run.items:
        if it["track"] not in tracks:
            continue
        if it["item"] not in items:
            items.append(it["item"])
        cells.setdefault((it["item"], it["model"]), []).append(it)
    models = [r["model"] for r in leaderboard_rows(run)] or sorted({m for _, m in cells})
    return items, models, cells


def constructions_figure(plt, run: RunData):
    items, models, cells = _items(run, ("construction",))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.9 * len(items) * max(1, len(models)) / 3), 4.2))
    if not items:
        ax.text(0.5, 0.5, "no construction attempts in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    width = 0.8 / max(1, len(models))
    x = np.arange(len(items))
    colors = plt.get_cmap("tab10")
    for j, model in enumerate(models):
        ys, marks = [], []
        for item in items:
            atts = cells.get((item, model), [])
            scores = [a["score"] for a in atts if a["score"] is not None]
            ys.append(float(np.mean(scores)) if scores else 0.0)
            status = [((a.get("checker") or {}).get("status") or a.get("score_status")) for a in atts]
            marks.append(next((s for s in status if s not in ("ok", "valid", "judged", None)), ""))
        pos = x - 0.4 + width * (j + 0.5)
        ax.bar(pos, ys, width, label=model, color=colors(j % 10))
        for px, py, mk in zip(pos, ys, marks):
            if mk:
                ax.text(px, py + 0.02, mk.replace("_", " "), rotation=90, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x)
    ax.set_xticklabels([i.replace("construction-", "") for i in items], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("score (checker's original reward)")
    ax.set_title(f"Constructions: score per item and model ({run.meta['title']})")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def proofs_figure(plt, run: RunData):
    from matplotlib.colors import ListedColormap

    items, models, cells = _items(run, BINARY_TRACKS)
    fig, ax = plt.subplots(figsize=(max(6.0, 4.0 + 1.7 * len(models)), max(3.0, 1.2 + 0.34 * len(items))))
    if not items:
        ax.text(0.5, 0.5, "no theorem or open-conjecture attempts in this run", ha="center", va="center")
        ax.set_axis_off()
        return fig
    grid = np.full((len(items), len(models)), 0, dtype=int)  # 0 no verdict, 1 not complete, 2 complete
    text = [["" for _ in models] for _ in items]
    for i, item in enumerate(items):
        for j, model in enumerate(models):
            atts = cells.get((item, model), [])
            if not atts:
                continue
            complete = sum(1 for a in atts if a["score"] == 1.0)
            grid[i, j] = 2 if complete == len(atts) else 1
            given = [(a.get("checker") or {}).get("original_reward") for a in atts]
            rewards = [r for r in given if isinstance(r, (int, float))]
            done = "resolved" if atts[0]["track"] == Track.OPEN_CONJECTURE else "proved"
            label = f"{complete}/{len(atts)} {done}" if len(atts) > 1 else (done if complete else "0")
            if not complete and rewards:
                label += f"  (partial {max(rewards):.2f})"
            text[i][j] = label
    cmap = ListedColormap(["#eeeeee", "#fde68a", "#86efac"])
    ax.imshow(grid, cmap=cmap, vmin=0, vmax=2, aspect="auto")
    for i in range(len(items)):
        for j in range(len(models)):
            ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, fontsize=8)
    track_of = {it["item"]: it["track"] for it in run.items}
    ax.set_yticks(range(len(items)))
    ax.set_yticklabels([f"{'T' if track_of[i] == 'theorem' else 'O'}  {i}" for i in items], fontsize=7)
    ax.set_title(
        "Proofs: theorem (T) and open-conjecture (O) verdicts (1 = complete; partial credit scores 0)", fontsize=9
    )
    fig.tight_layout()
    return fig


def write_report(run: RunData, folder: str | Path, site: str | Path | None = None) -> list[Path]:
    """Write REPORT_FILES into `folder`; `site`: the explorer's folder the leaderboard links."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / name for name in REPORT_FILES]
    atomic_write_text(out[0], leaderboard_html(run, Path(site) if site is not None else None))
    for path, make in zip(out[1:], (constructions_figure, proofs_figure, cost_figure)):
        fig = make(plt, run)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        plt.close(fig)
        atomic_write_bytes(path, buf.getvalue())
    return out
