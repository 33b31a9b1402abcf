"""Read one run directory (`results/<suite>/<protocol>`) into the plain data the explorer shows.

Everything comes from the files the pipeline wrote, read as they are:

- index.json -> the leaderboard (Index, its interval, track means and intervals, status, issues);
- attempts.csv -> every attempt row (score, adoption and score status, note);
- solver/<model>/<task>/<attempt>/records.json (or records/*.json of an unfinished attempt) and
  relative.json -> one row per record with the reference mean and scale, z and Phi beside the
  record's own fields (status, A, wall and CPU time, memory, termination, message, stderr tail,
  anytime trace), links to the record file, its certificate (when one was kept) and the run log;
- construction/<model>/<item>/<attempt>/{records.json, checker.json}, tracks/<model>/rows.json and
  the checker verdict files the manifest names -> the construction / proof attempts with their
  checker verdicts;
- manifest.json -> provenance; .set-aside/ and records failing their digest -> issues;
- an OR-Space results folder (objectives.json, explain.json per run and condition) when given;
- generation.csv (the attempt table's cost companion) and index.json's cost sections -> Index
  against cost, the Pareto front, each attempt's tokens, cost and a link to its transcript.

A file that exists but is not what it should be raises `InputError` naming it; a file that does
not exist yet (a run in progress) is simply absent from the view.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcsexam import __version__
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_csv, read_json
from tcsexam.layout import ResultsLayout, attempt_files
from tcsexam.records.digest import digest_problem
from tcsexam.records.key import find_key
from tcsexam.scoring.generation import GENERATION_TABLE
from tcsexam.suites import TRACKS, Track, load_suite
from tcsexam.view.cost import collect_cost
from tcsexam.view.orspace import collect_orspace

#: the per-record columns of a task's data file, in order
RECORD_COLUMNS = (
    "model",
    "attempt",
    "instance",
    "status",
    "A",
    "solved",
    "claimed",
    "reward",
    "mu",
    "scale",
    "z",
    "score",
    "wall_s",
    "cpu_s",
    "peak_mem_mb",
    "exit_code",
    "signal",
    "termination",
    "message",
    "stderr",
    "trace",
    "sandbox",
    "limiter",
    "record",
    "certificate",
    "eligible",
    "digest_ok",
)
#: how much of a candidate's stderr the view keeps per record
STDERR_CHARS = 2000
#: where a run keeps each final certificate: <attempt>/certificates/<instance>.txt (tcsexam.runner.solver.execute)
CERTIFICATE_DIR = "certificates"


@dataclass
class TaskData:
    task: str
    track: str
    rows: list[list[Any]] = field(default_factory=list)
    summary: JsonObject = field(default_factory=dict)


@dataclass
class RunData:
    path: Path
    meta: JsonObject
    leaderboard: list[JsonObject]
    tasks: list[TaskData]
    items: list[JsonObject]
    orspace: list[JsonObject]
    provenance: JsonObject | None
    issues: list[JsonObject]
    cost: JsonObject | None = None

    def summary(self) -> JsonObject:
        """The run's data without the per-record rows (what data/run.js holds)."""
        return {
            "meta": self.meta,
            "leaderboard": self.leaderboard,
            "tasks": [t.summary for t in self.tasks],
            "items": self.items,
            "orspace": self.orspace,
            "provenance": self.provenance,
            "issues": self.issues,
            "cost": self.cost,
        }


def _finite(x: Json) -> Json:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _rel(target: Path, base: Path) -> str:
    """A link from the site folder `base` to `target` (POSIX separators, URL-safe enough for file://)."""
    return Path(os.path.relpath(target, base)).as_posix()


def _read_table(path: Path) -> list[dict[str, str]]:
    header, body = read_csv(path, "attempt table")
    if not header:
        raise InputError(f"{path}: attempt table is empty")
    return [dict(zip(header, row + [""] * (len(header) - len(row)))) for row in body]


def _float(cell: str) -> float | None:
    try:
        v = float(cell)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _stderr_of(record: JsonObject) -> str:
    """The candidate's stderr tail: the record's own `stderr_tail` (kept in `extra`), else what the
    verdict quoted of it in the message ("...; stderr: ...")."""
    extra = record.get("extra") or {}
    tail = extra.get("stderr_tail") if isinstance(extra, dict) else None
    if not tail:
        tail = record.get("stderr_tail")
    if not tail:
        message = str(record.get("message") or "")
        _, sep, rest = message.partition("stderr: ")
        tail = rest if sep else ""
    return str(tail)[-STDERR_CHARS:]


def _attempt_records(attempt_dir: Path) -> tuple[list[JsonObject], Path | None]:
    """The records of one attempt: records.json when it exists, else the per-instance files of an
    attempt still running (each its own file)."""
    final = attempt_dir / "records.json"
    if final.is_file():
        data = read_json(final, "records file")
        if not isinstance(data, list):
            raise InputError(f"{final}: a records file must be a JSON list of instance records")
        return [r for r in data if isinstance(r, dict)], final
    out = []
    folder = attempt_dir / "records"
    if folder.is_dir():
        for f in sorted(folder.glob("*.json")):
            data = read_json(f, "instance record")
            if isinstance(data, dict):
                out.append(data)
    return out, None


class _Digests:
    """Checks records against their digest under the results tree's key (when there is one)."""

    def __init__(self, run_dir: Path):
        try:
            self.key = find_key(run_dir)
        except (InputError, OSError):
            self.key = None

    def problem(self, record: JsonObject) -> str | None:
        if self.key is None or "digest" not in record:
            return None

        return digest_problem(record, self.key)


def _relative(adir: Path) -> JsonObject | None:
    path = adir / "relative.json"
    if not path.is_file():
        return None
    relative = read_json(path, "solver-score output")
    if not isinstance(relative, dict):
        raise InputError(f"{path}: a solver-score output must be a JSON object")
    return relative


def _certificates(adir: Path) -> dict[str, Path]:
    """instance -> its kept certificate (<attempt>/certificates/<instance>[.ext]), when there are any."""
    folder = adir / CERTIFICATE_DIR
    if not folder.is_dir():
        return {}
    return {f.name.removesuffix(".txt"): f for f in sorted(folder.iterdir()) if f.is_file()}


def _record_row(model: str, attempt: str, r: JsonObject, s: JsonObject, links: tuple, flags: tuple) -> list:
    """One row of RECORD_COLUMNS: the record `r`, its score entry `s`, (record, certificate) links,
    (eligible, digest_ok). The hot loop of a Full run's build: plain lookups only."""
    get, sget = r.get, s.get
    claimed = get("claimed")
    trace = get("trace")
    message = get("message") or ""
    extra = get("extra")
    stderr = (extra.get("stderr_tail") if isinstance(extra, dict) else None) or ""
    if not stderr and "stderr: " in message:
        stderr = _stderr_of(r)
    return [
        model,
        attempt,
        str(get("instance")),
        str(get("status")),
        _finite(get("A")),
        get("solved"),
        claimed if isinstance(claimed, (int, float, str)) else None,
        _finite(get("reward")),
        _finite(sget("mu")),
        _finite(sget("scale")),
        _finite(sget("z")),
        _finite(sget("score")),
        get("wall_s"),
        get("cpu_s"),
        get("peak_mem_mb"),
        get("exit_code"),
        get("signal"),
        get("termination"),
        str(message),
        str(stderr)[-STDERR_CHARS:],
        trace if isinstance(trace, list) else None,
        get("sandbox"),
        get("limiter"),
        links[0],
        links[1],
        flags[0],
        flags[1],
    ]


def _attempt(td: TaskData, key: tuple[str, str, str], adir: Path, site: Path, digests, issues: list) -> tuple:
    """Append one attempt's rows to `td`; (its status counts, relative.json or None, records.json or None)."""
    model, task, attempt = key
    relative = _relative(adir)
    by_instance = {}
    if relative:
        by_instance = {str(i.get("instance")): i for i in relative.get("instances", []) if isinstance(i, dict)}
    records, records_file = _attempt_records(adir)
    certs = _certificates(adir)
    counts: Counter = Counter()
    seen = set()
    # the record files, listed once (a stat per record would cost more than the rest of the row)
    files = set(os.listdir(adir / "records")) if (adir / "records").is_dir() else set()
    prefix = _rel(adir / "records", site) + "/"
    for r in records:
        name = str(r.get("instance"))
        seen.add(name)
        counts[str(r.get("status"))] += 1
        problem = digests.problem(r) if digests is not None else None
        if problem:
            issues.append(
                {
                    "kind": "record_digest",
                    "model": model,
                    "task": task,
                    "attempt": attempt,
                    "instance": name,
                    "message": f"record fails its digest ({problem}): set aside and redone, never scored",
                }
            )
        cert = certs.get(name)
        links = (prefix + name + ".json" if name + ".json" in files else None, _rel(cert, site) if cert else None)
        flags = ((name in by_instance) if relative else None, (problem is None) if digests is not None else None)
        td.rows.append(_record_row(model, attempt, r, by_instance.get(name, {}), links, flags))
    # instances the score knows but no record file holds
    for name, s in by_instance.items():
        if name not in seen:
            counts[str(s.get("status"))] += 1
            r = {"instance": name, "status": s.get("status"), "A": s.get("value")}
            r["message"] = "(no record file: from the solver-score output)"
            td.rows.append(_record_row(model, attempt, r, s, (None, None), (True, True)))
    return counts, relative, records_file


def _solver_tasks(
    layout: ResultsLayout, site: Path, table: list[dict[str, str]], suite, issues: list[JsonObject], verify: bool
) -> list[TaskData]:
    rows_by = {(r["model"], r["item"], r["attempt"]): r for r in table if r.get("track") == Track.SOLVER}
    found = {(m, t, a) for m, t, a, _ in attempt_files(layout.solver_dir, "relative.json")}
    found |= {(m, t, a) for m, t, a, _ in attempt_files(layout.solver_dir, "records.json")}
    found |= {(m, t, a) for m, t, a, _ in attempt_files(layout.solver_dir, "records")}
    keys = sorted(found | set(rows_by))
    order = list(suite.tracks.get("solver", [])) if suite is not None else []
    names = sorted({t for _, t, _ in keys}, key=lambda t: (order.index(t) if t in order else len(order), t))
    digests = _Digests(layout.root) if verify else None
    tasks = []
    for task in names:
        td = TaskData(task, "solver")
        counts: Counter = Counter()
        models: JsonObject = {}
        meta: JsonObject = {}
        for key in (k for k in keys if k[1] == task):
            model, _, attempt = key
            adir = layout.attempt_dir(*key)
            a_counts, relative, records_file = _attempt(td, key, adir, site, digests, issues)
            for k in ("reference_id", "kind", "direction", "n_eligible"):
                if relative and relative.get(k) is not None:
                    meta.setdefault(k, relative[k])
            counts.update(a_counts)
            row = rows_by.get(key, {})
            entry = models.setdefault(model, {"mean": None, "attempts": {}})
            entry["attempts"][attempt] = {
                "relative_score": relative.get("relative_score") if relative else _float(row.get("score", "")),
                "score_status": row.get("score_status") or ("not_finished" if records_file is None else None),
                "adoption_status": row.get("adoption_status"),
                "note": row.get("note", ""),
                "status_counts": dict(sorted(a_counts.items())),
                "n": sum(a_counts.values()),
                "unscored": list(relative.get("unscored_instances", [])) if relative else [],
                "run_log": _rel(adir / "run.log", site) if (adir / "run.log").is_file() else None,
            }
        td.summary = {
            "task": task,
            "track": "solver",
            **meta,
            "status_counts": dict(sorted(counts.items())),
            "n_records": len(td.rows),
            "models": models,
        }
        tasks.append(td)
    return tasks


def _verdict_root(run_dir: Path, manifest: JsonObject | None) -> Path | None:
    """Where the checker verdict files are: the manifest's sources, relative to the current folder
    or to a folder above the run (the workflow's root)."""
    spec = ((manifest or {}).get("sources") or {}).get("verdicts_dir")
    if not spec:
        return None
    p = Path(spec)
    if p.is_absolute():
        return p if p.is_dir() else None
    for base in [Path.cwd(), *run_dir.resolve().parents]:
        if (base / p).is_dir():
            return base / p
    return None


def _items(
    layout: ResultsLayout, site: Path, table: list[dict[str, str]], manifest: JsonObject | None
) -> list[JsonObject]:
    """Every non-solver attempt row with what its checker said."""
    verdict_root = _verdict_root(layout.root, manifest)
    out = []
    for r in table:
        track = r.get("track")
        if track == Track.SOLVER:
            continue
        model, item, attempt = r.get("model", ""), r.get("item", ""), r.get("attempt", "")
        entry: JsonObject = {
            "model": model,
            "track": track,
            "item": item,
            "attempt": attempt,
            "score": _float(r.get("score", "")),
            "adoption_status": r.get("adoption_status"),
            "score_status": r.get("score_status"),
            "score_type": r.get("score_type"),
            "note": r.get("note", ""),
            "source": None,
            "checker": None,
            "record": None,
            "links": {},
        }
        cdir = layout.construction_attempt_dir(model, item, attempt)
        if track == Track.CONSTRUCTION and (cdir / "checker.json").is_file():
            checker = read_json(cdir / "checker.json", "construction checker output")
            entry["source"] = "pipeline"
            entry["checker"] = checker if isinstance(checker, dict) else None
            records, _ = _attempt_records(cdir)
            if records:
                rec = dict(records[0])
                rec["stderr"] = _stderr_of(rec)
                rec.pop("digest", None)
                entry["record"] = rec
            for name in ("checker.json", "records.json", "run.log"):
                if (cdir / name).is_file():
                    entry["links"][name] = _rel(cdir / name, site)
        elif verdict_root is not None:
            vfile = verdict_root / model / item / f"{attempt}.json"
            if vfile.is_file():
                verdict = read_json(vfile, "checker verdict")
                entry["source"] = "verdict file"
                entry["checker"] = verdict if isinstance(verdict, dict) else None
                entry["links"]["verdict"] = _rel(vfile, site)
        out.append(entry)
    return out


def _provenance(manifest: JsonObject | None) -> JsonObject | None:
    """The manifest without its per-instance digests (those stay in the file; the view links it)."""
    if manifest is None:
        return None
    out = dict(manifest)
    tasks = {}
    for name, t in (manifest.get("tasks") or {}).items():
        if isinstance(t, dict):
            inst = t.get("instances") or {}
            tasks[name] = {**{k: v for k, v in t.items() if k != "instances"}, "n_instances": len(inst)}
    out["tasks"] = tasks
    return out


def _set_aside(layout: ResultsLayout) -> list[JsonObject]:
    root = layout.set_aside_dir
    if not root.is_dir():
        return []
    out = []
    for stamp in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(str(f.relative_to(stamp)) for f in stamp.rglob("*") if f.is_file())
        out.append(
            {
                "kind": "set_aside",
                "message": f"{len(files)} derived file(s) set aside at {stamp.name} (damaged or stale; rebuilt)",
                "files": files[:200],
            }
        )
    return out


def resolve_run(path: str | os.PathLike) -> Path:
    """The run directory `path` names: itself when it holds a run (index.json, attempts.csv or
    solver/), else the one results/<suite>/<protocol> below it (a results folder with one run)."""
    p = Path(path)
    if not p.is_dir():
        raise InputError(f"{p}: run directory not found (expected results/<suite>/<protocol>)")
    layout = ResultsLayout(p)
    if layout.index.is_file() or layout.attempts_csv.is_file() or layout.solver_dir.is_dir():
        return p
    runs = sorted(f.parent for f in p.glob("*/*/index.json") if f.parent.parent.name != "reference")
    if len(runs) == 1:
        return runs[0]
    if runs:
        names = ", ".join(str(r) for r in runs)
        raise InputError(f"{p}: holds {len(runs)} runs ({names}): name one (results/<suite>/<protocol>)")
    raise InputError(f"{p}: no index.json, attempts.csv or solver results: not a run directory")


def _leaderboard(index: JsonObject | None) -> tuple[list[JsonObject], list[JsonObject]]:
    """index.json's models as leaderboard rows, and the issues it lists (per model and the run's)."""
    issues: list[JsonObject] = []
    leaderboard = []
    for name, m in ((index or {}).get("models") or {}).items():
        leaderboard.append(
            {
                "model": name,
                "status": m.get("status"),
                "index": m.get("index"),
                "index_ci95": m.get("index_ci95"),
                "track_means": m.get("track_means") or {},
                "track_ci95": m.get("track_ci95") or {},
                "task_means": m.get("task_means") or {},
                "coverage": m.get("coverage") or {},
                "attempts": m.get("attempts") or {},
                "issues": m.get("issues") or [],
                "cost": m.get("cost"),
            }
        )
        for issue in m.get("issues") or []:
            if isinstance(issue, dict):
                issues.append({"kind": issue.get("reason") or "issue", **issue, "model": name})
    for issue in (index or {}).get("issues") or []:
        if isinstance(issue, dict):
            issues.append({"kind": issue.get("reason") or "issue", **issue})
    for warning in (index or {}).get("warnings") or []:
        text = warning if isinstance(warning, str) else (warning or {}).get("message", str(warning))
        issues.append({"kind": "warning", "message": str(text)})
    if index is not None and index.get("solver_reference_verified") is False:
        if not any(i.get("kind") == "reference_unverified" for i in issues):
            issues.append({"kind": "reference_unverified", "message": "the Solver reference was not verified"})
    if index is None:
        issues.append({"kind": "no_index", "message": "no index.json yet: the run has not been scored"})
    elif index.get("status") != "complete":
        issues.append({"kind": "run_status", "message": f"the run's Index is {index.get('status')}"})
    return leaderboard, issues


def collect_run(
    run_dir: str | os.PathLike,
    site_dir: str | os.PathLike,
    *,
    orspace_dir: str | os.PathLike | None = None,
    verify_records: bool = False,
) -> RunData:
    """The explorer's data of one run; links are relative to `site_dir` (where the site goes).
    `verify_records`: check every record against its digest (the scorer already refuses records
    that fail it; this names each one as an issue, at about twice the build time)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise InputError(f"{run}: run directory not found (expected results/<suite>/<protocol>)")
    layout = ResultsLayout(run)
    site = Path(site_dir).resolve()
    run_abs = run.resolve()
    layout_abs = ResultsLayout(run_abs)
    index = None
    if layout.index.is_file():
        index = read_json(layout.index, "index file")
        if not isinstance(index, dict) or not isinstance(index.get("models"), dict):
            raise InputError(f"{layout.index}: not an index.json (no 'models' object)")
    table = _read_table(layout.attempts_csv) if layout.attempts_csv.is_file() else []
    manifest = None
    if layout.manifest.is_file():
        manifest = read_json(layout.manifest, "manifest")
        if not isinstance(manifest, dict):
            raise InputError(f"{layout.manifest}: a manifest must be a JSON object")
    if index is None and not table and not layout.solver_dir.is_dir():
        raise InputError(f"{run}: no index.json, attempts.csv or solver results: not a run directory")
    suite_id = (index or {}).get("suite") or run.parent.name
    suite = None
    try:
        suite = load_suite(suite_id)
    except (InputError, OSError):
        suite = None
    leaderboard, issues = _leaderboard(index)
    tasks = _solver_tasks(layout_abs, site, table, suite, issues, verify_records)
    for td in tasks:
        for lb in leaderboard:
            if lb["model"] in td.summary["models"]:
                td.summary["models"][lb["model"]]["mean"] = lb["task_means"].get(td.task)
    items = _items(layout_abs, site, table, manifest)
    issues.extend(_set_aside(layout_abs))
    orspace = collect_orspace(Path(orspace_dir).resolve() if orspace_dir else None, site)
    meta = {
        "path": str(run_abs),
        "title": f"{suite_id} / {(index or {}).get('solver_protocol') or run.name}",
        "suite": suite_id,
        "solver_protocol": (index or {}).get("solver_protocol") or run.name,
        "reference_id": (index or {}).get("solver_reference_id"),
        "metric_id": (index or {}).get("metric_id"),
        "status": (index or {}).get("status"),
        "reference_verified": (index or {}).get("solver_reference_verified"),
        "weights": (index or {}).get("weights"),
        "bootstrap": (index or {}).get("bootstrap"),
        "tracks": list(TRACKS),
        "suite_items": dict(suite.tracks) if suite is not None else {},
        "view_version": __version__,
        "n_records": sum(len(t.rows) for t in tasks),
        "records_verified": verify_records,
        "links": {
            name: _rel(run_abs / name, site)
            for name in ("index.json", "attempts.csv", "manifest.json", "cohort.json", GENERATION_TABLE)
            if (run_abs / name).is_file()
        },
    }
    cost = collect_cost(run_abs, site, index)
    return RunData(run_abs, meta, leaderboard, tasks, items, orspace, _provenance(manifest), issues, cost)
