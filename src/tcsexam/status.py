"""`tcsexam status RESULTS_DIR [--json] [--all] [--watch [SECONDS]]`: where a run stands.

Per suite, protocol, model, task and attempt: records finished / planned, the statuses so far,
infrastructure errors, which jobs run now (their heartbeat is fresh), which stopped without
finishing (killed: the heartbeat went stale, or its process is gone on this host), the
throughput of the running jobs and an ETA for the rest.

It only reads, never locks, and never writes: safe while a run goes on, and from a login node on a
shared file system. What it reads, cheapest first: the workflow's plan (`<tree>/.status/plan.json`,
written at the workflow's start: the attempts planned and their instance counts), each attempt's
`heartbeat.json` (rewritten atomically by its `tcsexam run` every few seconds; tcsexam.runner.
heartbeat), and only where an attempt has no heartbeat (a run of an older version) its
records.json, or else the names in its records/ folder. Half-written temp files (`.*.tmp`) are
never read; a file that does not parse counts as absent.

What it says is what is on disk: a job that failed before it began (no heartbeat, no record, an
ERROR line in its run.log: no sandbox works, a task file's instance missing) is `failed` with
that line, not `waiting`; a job whose heartbeat says finished but whose records.json is gone
counts the record files left and is `damaged`, with what to run (`tcsexam repair`, then the
workflow again). A tree where no job runs shows no throughput and no ETA: it says whether every
planned record is done.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json
from tcsexam.jobfail import reason
from tcsexam.layout import ResultsLayout
from tcsexam.logs import logger
from tcsexam.runner.observers.heartbeat import HEARTBEAT_FORMAT, HEARTBEAT_NAME, duration_text

PLAN_PATH = ResultsLayout(Path(".")).status_plan.parts
#: the version of `.status/plan.json` (`tcsexam.formats`)
PLAN_FORMAT = 1
INFRA = "infrastructure_error"
#: a running heartbeat older than this many of its intervals (and at least STALE_MIN_S) is lost
STALE_INTERVALS = 6
STALE_MIN_S = 60.0


@dataclass
class Attempt:
    suite: str
    protocol: str
    model: str
    task: str
    attempt: str
    state: str  #: running | finished | lost | interrupted | failed | damaged | started | waiting
    planned: int | None = None
    done: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    executed: int = 0
    rate: float | None = None  #: records/s of this job (running jobs)
    eta_s: float | None = None
    host: str | None = None
    pid: int | None = None
    slurm_job_id: str | None = None
    heartbeat_age_s: float | None = None
    source: str = "plan"  #: heartbeat | records.json | records/ | run.log | plan
    note: str | None = None  #: why it failed (its log's ERROR line), or what a damaged one needs

    @property
    def key(self) -> str:
        return f"{self.model}/{self.task}/{self.attempt}"

    @property
    def infrastructure_errors(self) -> int:
        return int(self.statuses.get(INFRA, 0))


# ---- reading, tolerant of a run in progress ---------------------------------------------------


def _read_json(path: Path):
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read())
    except (OSError, ValueError):
        return None


def _count_records(records_dir: Path) -> int:
    try:
        with os.scandir(records_dir) as it:
            return sum(1 for e in it if e.name.endswith(".json") and not e.name.startswith("."))
    except OSError:
        return 0


def _log_error(log: Path) -> str | None:
    """The last ERROR line of a job's log (its time stamp and level left out), None without one."""
    if not log.is_file():
        return None
    try:
        with open(log, "rb") as fh:
            if b" ERROR " not in fh.read()[-65536:]:
                return None
    except OSError:
        return None
    return reason(log)


def _pid_gone(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError, TypeError):
        return False
    return False


def _from_heartbeat(a: Attempt, hb: dict, attempt_dir: Path, now: float, host: str) -> None:
    a.source = "heartbeat"
    a.planned = hb.get("planned") if isinstance(hb.get("planned"), int) else a.planned
    a.done = int(hb.get("done") or 0)
    a.statuses = {str(k): int(v) for k, v in (hb.get("statuses") or {}).items()}
    a.executed = int(hb.get("executed") or 0)
    a.host, a.pid, a.slurm_job_id = hb.get("host"), hb.get("pid"), hb.get("slurm_job_id")
    updated, started = hb.get("updated"), hb.get("started")
    a.heartbeat_age_s = now - updated if isinstance(updated, (int, float)) else None
    state = hb.get("state") or "running"
    if state == "running":
        interval = float(hb.get("interval_s") or 5.0)
        stale = a.heartbeat_age_s is None or a.heartbeat_age_s > max(STALE_MIN_S, STALE_INTERVALS * interval)
        if stale or (a.host == host and _pid_gone(a.pid)):
            state = "lost"
    a.state = state
    if state == "running" and isinstance(started, (int, float)) and isinstance(updated, (int, float)):
        elapsed = updated - started
        if elapsed > 0 and a.executed:
            a.rate = a.executed / elapsed
            if a.planned is not None:
                a.eta_s = max(0, a.planned - a.done) / a.rate
    if state in ("lost", "interrupted", "failed"):
        a.done = max(a.done, _count_records(attempt_dir / "records"))  # what is on disk now


def read_attempt(
    suite: str, protocol: str, model: str, task: str, attempt: str, attempt_dir: Path, planned, now: float, host: str
) -> Attempt:
    a = Attempt(suite, protocol, model, task, attempt, state="waiting", planned=planned)
    hb = _read_json(attempt_dir / HEARTBEAT_NAME)
    if isinstance(hb, dict) and hb.get("format") == HEARTBEAT_FORMAT:
        _from_heartbeat(a, hb, attempt_dir, now, host)
        if a.state == "finished" and not isinstance(_read_json(attempt_dir / "records.json"), list):
            _damaged(a, attempt_dir)
        elif a.state == "failed":
            a.note = _log_error(attempt_dir / "run.log")
        return a
    records = _read_json(attempt_dir / "records.json")
    if isinstance(records, list):
        a.source, a.state = "records.json", "finished"
        a.statuses = dict(Counter(str(r.get("status")) for r in records if isinstance(r, dict)))
        a.done = len(records)
        a.planned = a.planned if a.planned is not None else a.done
        return a
    n = _count_records(attempt_dir / "records")
    if n or (attempt_dir / "records").is_dir():
        a.source, a.state, a.done = "records/", "started", n
    error = _log_error(attempt_dir / "run.log")
    if error is not None:  # it stopped before its heartbeat began: at start (sandbox, task file, ...)
        a.source, a.state, a.note = "run.log" if not n else a.source, "failed", error
    return a


def _damaged(a: Attempt, attempt_dir: Path) -> None:
    """A job whose heartbeat says finished, but whose records.json is gone (removed, or set aside
    by a repair): count the record files that are left, say what brings it back."""
    a.done = _count_records(attempt_dir / "records")
    a.statuses = {}
    a.state = "damaged"
    of = f" of {a.planned:,}" if a.planned is not None else ""
    a.note = (
        f"records.json is gone and {a.done:,}{of} record files are on disk: the tree needs "
        f"`tcsexam repair --records-dir {attempt_dir / 'records'}`, then the workflow again (or the same "
        "`tcsexam run`) to redo what is missing"
    )


def _plan(root: Path) -> dict[tuple[str, str, str], int | None]:
    data = _read_json(root.joinpath(*PLAN_PATH))
    plan = {}
    if isinstance(data, dict):
        for run in data.get("runs") or []:
            try:
                plan[(str(run["model"]), str(run["task"]), str(run["attempt"]))] = run.get("instances")
            except (KeyError, TypeError):
                continue
    return plan


def _subdirs(path: Path) -> list[str]:
    try:
        with os.scandir(path) as it:
            return sorted(e.name for e in it if not e.name.startswith(".") and e.is_dir())
    except OSError:
        return []


def scan_tree(root: Path, suite: str, protocol: str, *, now: float, host: str) -> list[Attempt]:
    """Every attempt of one results tree: those on disk under solver/ and those only planned."""
    plan = _plan(root)
    found: dict[tuple[str, str, str], Attempt] = {}
    solver = root / "solver"
    for model in _subdirs(solver):
        for task in _subdirs(solver / model):
            for att in _subdirs(solver / model / task):
                key = (model, task, att)
                d = solver / model / task / att
                found[key] = read_attempt(suite, protocol, model, task, att, d, plan.get(key), now, host)
    for (model, task, att), n in plan.items():
        if (model, task, att) not in found:
            found[(model, task, att)] = Attempt(suite, protocol, model, task, att, "waiting", planned=n)
    return [found[k] for k in sorted(found)]


def scan_reference(ref_root: Path, *, now: float, host: str) -> list[Attempt]:
    """The reference target's runs: <results>/reference/<id>/<task>/seed<k>/."""
    out = []
    for task in _subdirs(ref_root):
        for seed in _subdirs(ref_root / task):
            if seed.startswith("seed"):
                d = ref_root / task / seed
                out.append(read_attempt("reference", ref_root.name, "reference", task, seed, d, None, now, host))
    return out


def find_trees(results: Path) -> list[tuple[str, str, Path]]:
    """(suite, protocol, root) of each results tree at or under `results` (a results folder, one
    suite's folder or one tree), and ('reference', id, folder) of each reference build."""
    results = Path(results)
    if not results.is_dir():
        raise InputError(f"{results}: no such results folder")

    def is_tree(p: Path) -> bool:
        return (p / "solver").is_dir() or p.joinpath(*PLAN_PATH).is_file()

    if is_tree(results):
        return [(results.parent.name, results.name, results)]
    trees = []
    for level in (results.glob("*"), results.glob("*/*")):
        trees += [(p.parent.name, p.name, p) for p in sorted(level) if p.is_dir() and is_tree(p)]
    for ref in sorted((results / "reference").glob("*")) if results.name != "reference" else []:
        if ref.is_dir():
            trees.append(("reference", ref.name, ref))
    return trees


# ---- summing up -----------------------------------------------------------------------------


def summarize(attempts: list[Attempt]) -> dict:
    planned_known = all(a.planned is not None for a in attempts)
    planned = sum(a.planned or 0 for a in attempts)
    done = sum(a.done for a in attempts)
    statuses: Counter = Counter()
    for a in attempts:
        statuses.update(a.statuses)
    jobs = Counter(a.state for a in attempts)
    running = jobs.get("running", 0)
    rate = sum(a.rate or 0.0 for a in attempts if a.state == "running")
    remaining = max(0, planned - done) if planned_known else None
    eta = None
    if remaining == 0:
        eta = 0.0
    elif remaining is not None and rate > 0:
        eta = remaining / rate
    return {
        "attempts": len(attempts),
        "planned": planned if planned_known else None,
        "done": done,
        "statuses": dict(sorted(statuses.items())),
        "infrastructure_errors": int(statuses.get(INFRA, 0)),
        "jobs": dict(sorted(jobs.items())),
        "throughput_per_s": round(rate, 3) if running else None,  # none: no job runs
        "eta_s": None if eta is None else round(eta, 1),
        "damaged": sum(1 for a in attempts if a.state == "damaged"),
    }


def collect(results: str | os.PathLike) -> dict:
    """The status of every tree under `results`, as `--json` prints it."""
    now, host = time.time(), socket.gethostname()
    out: JsonObject = {"results": str(results), "time": now, "host": host, "trees": []}
    for suite, protocol, root in find_trees(Path(results)):
        if suite == "reference":
            attempts = scan_reference(root, now=now, host=host)
        else:
            attempts = scan_tree(root, suite, protocol, now=now, host=host)
        models: dict[str, list[Attempt]] = {}
        for a in attempts:
            models.setdefault(a.model, []).append(a)
        out["trees"].append(
            {
                "suite": suite,
                "protocol": protocol,
                "root": str(root),
                "total": summarize(attempts),
                "models": {m: summarize(v) for m, v in models.items()},
                "attempts": [dict(asdict(a), infrastructure_errors=a.infrastructure_errors) for a in attempts],
            }
        )
    return out


# ---- text views -----------------------------------------------------------------------------


def _counts(statuses: dict) -> str:
    return " ".join(f"{s}={n:,}" for s, n in statuses.items()) or "-"


def _done(s: dict) -> str:
    if s["planned"] is None:
        return f"{s['done']:,} / ?"
    pct = 100.0 * s["done"] / s["planned"] if s["planned"] else 100.0
    return f"{s['done']:,} / {s['planned']:,} ({pct:.1f}%)"


def _attempt_line(a: dict) -> str:
    done = f"{a['done']:,}/{a['planned']:,}" if a["planned"] is not None else f"{a['done']:,}/?"
    extra = []
    if a["state"] == "running":
        rate = f"{a['rate']:.2f}/s" if a["rate"] else "starting"
        extra.append(f"{rate}, ETA {duration_text(a['eta_s'])}")
    if a["state"] == "lost" and a["heartbeat_age_s"] is not None:
        extra.append(f"no heartbeat for {duration_text(a['heartbeat_age_s'])}")
    if a.get("note"):
        extra.append(a["note"])
    where = a["host"] and f"{a['host']}:{a['pid']}" + (f" job {a['slurm_job_id']}" if a["slurm_job_id"] else "")
    if where:
        extra.append(where)
    key = f"{a['model']}/{a['task']}/{a['attempt']}"
    return f"    {key:<44} {a['state']:<11} {done:>13}  {_counts(a['statuses'])}" + (
        f"  ({'; '.join(extra)})" if extra else ""
    )


def _pace(t: dict) -> str:
    """Throughput and ETA while jobs run; otherwise whether the planned records are all done."""
    if t["jobs"].get("running"):
        return f"throughput {t['throughput_per_s']:.2f} records/s; ETA {duration_text(t['eta_s'])}"
    stopped = sum(n for s, n in t["jobs"].items() if s in ("failed", "lost", "interrupted", "damaged"))
    if t["planned"] is not None and t["done"] >= t["planned"] and not stopped and not t["damaged"]:
        return "finished: every planned record is done"
    left = f"{t['planned'] - t['done']:,} planned record(s) not done" if t["planned"] is not None else "not done"
    return f"no job running; {left}" + (f", {stopped} job(s) stopped" if stopped else "")


def render(status: dict, *, every_attempt: bool = False, compact: bool = False) -> str:
    lines = [
        f"tcsexam status {status['results']} at {time.strftime('%Y-%m-%d %H:%M:%SZ', time.gmtime(status['time']))}"
    ]
    if not status["trees"]:
        lines.append("  no results tree yet")
    for tree in status["trees"]:
        t = tree["total"]
        jobs = ", ".join(f"{n} {s}" for s, n in t["jobs"].items())
        lines.append(f"{tree['suite']}/{tree['protocol']}  ({tree['root']})")
        lines.append(f"  records {_done(t)}  {_counts(t['statuses'])}")
        lines.append(f"  jobs: {jobs or 'none'}; infrastructure errors {t['infrastructure_errors']:,}; {_pace(t)}")
        if t["damaged"]:
            lines.append(f"  NEEDS REPAIR: {t['damaged']} finished job(s) lost their records.json (see below)")
        if not compact:
            for model, s in tree["models"].items():
                lines.append(f"    {model:<24} {_done(s):>26}  {_counts(s['statuses'])}")
        for a in tree["attempts"]:
            show = every_attempt or a["state"] in ("running", "lost", "interrupted", "failed", "damaged")
            show = show or (not compact and a["infrastructure_errors"] > 0)
            if show:
                lines.append(_attempt_line(a))
    return "\n".join(lines)


def main(results: str, *, as_json: bool = False, every_attempt: bool = False, watch: float | None = None) -> int:
    try:
        if watch is None:
            status = collect(results)
            print(json.dumps(status, indent=1) if as_json else render(status, every_attempt=every_attempt))
            return 0
        _watch(results, as_json, every_attempt, watch)
    except BrokenPipeError:  # `tcsexam status ... | head`
        sys.stdout = None  # nothing more to say, not even at exit
    return 0


def _watch(results: str, as_json: bool, every_attempt: bool, watch: float) -> None:
    clear = sys.stdout.isatty() and not as_json
    try:
        while True:
            status = collect(results)
            if as_json:
                print(json.dumps(status), flush=True)
            else:
                text = render(status, every_attempt=every_attempt, compact=True)
                print(("\x1b[H\x1b[2J" if clear else "") + text, flush=True)
            time.sleep(max(0.5, watch))
    except KeyboardInterrupt:
        return


# ---- the workflow's plan and the command ------------------------------------------------------


def write_plan(plan) -> Path | None:
    """Write `<tree>/.status/plan.json` for a workflow `Plan`: every planned Solver attempt and its
    instance count (what `tcsexam status` counts as planned). Called once at the workflow's
    start; a failure is one warning line, never a stopped run."""
    path: Path = plan.layout.status_plan
    try:
        runs = [
            {"model": p.model, "task": p.item, "attempt": p.attempt, "instances": len(plan.instances(p.item))}
            for p in plan.solver_runs()
        ]
        data = {
            "format": PLAN_FORMAT,
            "written": time.time(),
            "suite": plan.suite.id,
            "protocol": plan.protocol,
            "runs": runs,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, data, durable=False)
    except (OSError, InputError) as exc:
        logger("status").warning("tcsexam status: cannot write the run's plan %s: %s", path, exc)
        return None
    return path


def register(sub) -> None:
    p = sub.add_parser(
        "status",
        help="where a run stands: records done/planned, statuses, running jobs, ETA (read-only)",
        description=(
            "Show, per suite, protocol, model, task and attempt, the records finished of those planned, "
            "the statuses so far, infrastructure errors, the jobs running now (fresh heartbeat) or lost "
            "(stale heartbeat), the throughput and an ETA. Reads only: safe while a run goes on."
        ),
    )
    p.add_argument("results", metavar="RESULTS_DIR", help="a results folder (e.g. results/), or one tree in it")
    p.add_argument("--json", action="store_true", help="everything as JSON (per attempt, per model, per tree)")
    p.add_argument("--all", action="store_true", help="list every attempt (default: running, lost and failing ones)")
    p.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=5.0,
        default=None,
        metavar="SECONDS",
        help="redraw a compact view every SECONDS (default 5) until Ctrl-C; with --json one line each time",
    )
    p.set_defaults(handler=lambda args: main(args.results, as_json=args.json, every_attempt=args.all, watch=args.watch))
