"""Write the explorer's folder: index.html, assets/, data/run.js and one data file per Solver task.

The data files are JavaScript (`TCSX.run({...})`, `TCSX.task(i, {...})`), loaded by `<script>`
tags: a page opened from file:// cannot fetch() JSON in Chromium, but it may load scripts from its
own folder. A task's records are loaded when a page needs them, so the first page of a Full run
reads only the summary. The folder is built beside its destination and renamed into place: a
failed build leaves the previous site (or none), never half of one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.view.collect import RECORD_COLUMNS, RunData

ASSETS = ("app.js", "style.css")
SITE_SCHEMA_VERSION = 1


def _js(call: str, *args: Any) -> str:
    body = ", ".join(json.dumps(a, separators=(",", ":"), allow_nan=False, default=str) for a in args)
    return f"{call}({body});\n"


def _page(title: str) -> str:
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/style.css">
</head>
<body>
<header id="top">
  <div class="brand"><a href="#/">tcsexam</a> <span id="run-title"></span> <span id="run-status"></span></div>
  <nav id="nav"></nav>
</header>
<main id="main"><p class="loading">Loading&hellip;</p></main>
<footer id="foot"></footer>
<script src="assets/app.js"></script>
<script src="data/run.js"></script>
<script src="data/compare.js"></script>
</body>
</html>
"""


def write_site(run: RunData, output: str | os.PathLike, comparison: JsonObject | None = None) -> Path:
    """Write the site of `run` (with `comparison`, a `tcsexam compare` result whose candidate is
    `run`) to the folder `output`, replacing an earlier site there. Returns index.html's path."""
    out = Path(output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder (the site is a folder)")
    if out.is_dir() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise InputError(f"{out}: a non-empty folder that is not a tcsexam view: refusing to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "assets").mkdir()
        (tmp / "data").mkdir()
        pkg = resources.files("tcsexam.view") / "assets"
        for name in ASSETS:
            (tmp / "assets" / name).write_bytes((pkg / name).read_bytes())
        summary = run.summary()
        summary["schema_version"] = SITE_SCHEMA_VERSION
        summary["columns"] = list(RECORD_COLUMNS)
        summary["compare"] = comparison is not None
        for i, (td, ts) in enumerate(zip(run.tasks, summary["tasks"])):
            ts["file"] = f"data/task-{i:03d}.js"
            ts["id"] = i
            text = _js("TCSX.task", i, {"task": td.task, "rows": td.rows})
            (tmp / "data" / f"task-{i:03d}.js").write_text(text, encoding="utf-8")
        (tmp / "data" / "run.js").write_text(_js("TCSX.run", summary), encoding="utf-8")
        # always written (null without a comparison): a missing script is a console error
        (tmp / "data" / "compare.js").write_text(_js("TCSX.compare", comparison), encoding="utf-8")
        (tmp / "index.html").write_text(_page(f"tcsexam view: {run.meta['title']}"), encoding="utf-8")
        os.chmod(tmp, 0o755)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old.{os.getpid()}")
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out / "index.html"


def comparison_view(result: JsonObject) -> JsonObject:
    """A `tcsexam compare` result with each delta's verdict (identical / within noise / differs) and
    the instance changes flattened, status changes first."""
    out = dict(result)
    deltas = []
    for model, data in (result.get("models") or {}).items():
        entries = [("index", "Index", data.get("index") or {})]
        entries += [("track", t, e) for t, e in (data.get("tracks") or {}).items()]
        entries += [("task", t, e) for t, e in (data.get("tasks") or {}).items()]
        for level, name, e in entries:
            deltas.append({"model": model, "level": level, "name": name, **e, "verdict": delta_verdict(e)})
    out["deltas"] = deltas
    changes = []
    for model, tasks in (result.get("instances") or {}).items():
        for task, attempts in tasks.items():
            for attempt, entry in attempts.items():
                for c in entry.get("status_changes", []):
                    changes.append({"kind": "status", "model": model, "task": task, "attempt": attempt, **c})
                for c in entry.get("value_changes", []):
                    changes.append({"kind": "value", "model": model, "task": task, "attempt": attempt, **c})
                for side in ("only_in_baseline", "only_in_candidate"):
                    for name in entry.get(side, []):
                        changes.append(
                            {"kind": side, "model": model, "task": task, "attempt": attempt, "instance": name}
                        )
    rank = {"status": 0, "only_in_baseline": 1, "only_in_candidate": 1, "value": 2}
    changes.sort(key=lambda c: (rank[c["kind"]], c["model"], c["task"], c["attempt"], c["instance"]))
    out["changes"] = changes
    out.pop("instances", None)
    return out


def delta_verdict(entry: JsonObject) -> str:
    """identical (equal), within noise (a difference whose interval contains 0), differs (the
    interval excludes 0, or the value exists in one run only)."""
    b, c = entry.get("baseline"), entry.get("candidate")
    if b == c:
        return "identical"
    return "differs" if entry.get("excludes_zero") else "within noise"
