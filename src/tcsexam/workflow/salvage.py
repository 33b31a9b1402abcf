"""The Index of a run in which some jobs failed (rules/common.smk's `onerror:`).

The workflow keeps going when a job fails (every job whose inputs exist still runs), but Snakemake
never starts the aggregation that depends on the failed job. Where the spec wants an Index
`incomplete` (null) with coverage and issues naming what is missing, this builds it from what the
run did produce:

- every planned attempt whose row file exists, and no job that makes it failed in this run, keeps
  its row (a failed job's own output is gone, but a row an earlier run computed from it is stale);
- every other planned attempt gets a `judge_failed` row whose note is the one-line reason of the
  job that failed for it: the failure note `tcsexam job-failed` wrote beside that job's log, in the
  row's folder or one above it, during this run (`<log>.failed`), else the run's other failures;
- the attempt table, the cohort (when its job did not run) and index.json are then made by the very
  commands the rules run (`tcsexam attempts table`, `attempts cohort`, `score`), so the Index is
  never complete while a job failed.

The failed jobs' own exits stay non-zero (Snakemake and SLURM see them) and their outputs stay
absent, so the next run redoes exactly them; the self-healing check at its start (`heal`) knows the
attempts.csv and index.json written here (`salvaged`) and has them made again. Where no Index can
be made, the earlier index.json is set aside: it must not stand as this run's.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tcsexam.attempts.rows import failed_row, read_rows, write_rows
from tcsexam.errors import InputError
from tcsexam.fileio import aside_dir, atomic_write_json, move_aside
from tcsexam.jobfail import FAILED_SUFFIX
from tcsexam.layout import ResultsLayout
from tcsexam.records.digest import hash_file
from tcsexam.scoring.vocabulary import ScoreStatus
from tcsexam.suites import Track

#: the digests of the attempts.csv and index.json a salvage wrote (under <tree>/.salvage/)
WRITTEN = "written.json"
#: heal's reason for setting them aside
SALVAGED = "the incomplete one the last run wrote after its failed jobs (its onerror): made again now"


@dataclass(frozen=True)
class Failure:
    """One job that failed in this run: its log and its one-line reason."""

    log: Path
    reason: str


def failures(root: Path, since: float) -> list[Failure]:
    """The failure notes written under `root` at or after `since` (this run's), oldest first."""
    found = []
    for note in root.rglob(f"*{FAILED_SUFFIX}"):
        try:
            if note.stat().st_mtime < since:
                continue
            data = json.loads(note.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found.append((note.stat().st_mtime, Failure(note.with_name(note.name[: -len(FAILED_SUFFIX)]), data["reason"])))
    return [f for _, f in sorted(found, key=lambda pair: pair[0])]


def _own(row: Path, failed: list[Failure], root: Path) -> list[Failure]:
    """The failures of the jobs that make `row`: their logs lie in its folder or a folder above it
    inside the evaluation tree (a model's verdict rows: tracks/<model>/rows.log), oldest first."""
    here, top = row.parent.resolve(), root.resolve()
    out = []
    for f in failed:
        folder = f.log.parent.resolve()
        if folder != top and top in folder.parents and (folder == here or folder in here.parents):
            out.append(f)
    return out


def _reason(row: Path, failed: list[Failure], root: Path) -> str:
    """Why the planned row `row` is not judged: the failure of a job that makes it (the newest),
    else the run's failures (a job it depends on)."""
    own = _own(row, failed, root)
    if own:
        return f"{own[-1].reason} (log: {own[-1].log})"
    if failed:
        others = "; ".join(sorted({f.reason for f in failed}))
        return f"not judged: a job it depends on failed or did not run ({others})"
    return "not judged: its job did not run (the run stopped before it)"


def salvage_rows(plan, failed: list[Failure]) -> tuple[list[str], list]:
    """(the row files this run may keep, the judge_failed rows of every other planned attempt). A
    row file is kept when it exists and no job that makes it failed in this run: a failed job's
    own output is gone, but what an earlier run computed from it is still there, and stale."""
    root = plan.root / plan.layout.root
    files = [f for f in plan.row_files() if (plan.root / f).is_file() and not _own(plan.root / f, failed, root)]
    covered = set()
    for f in files:
        for row in read_rows(plan.root / f):
            covered.add(row.identity)
    rows = []
    for p in plan.planned:
        row = failed_row(
            p.model,
            p.track,
            p.item,
            p.attempt,
            ScoreStatus.JUDGE_FAILED,
            _reason(plan.root / p.row, failed, root),
            plan.protocol if p.track == Track.SOLVER else "",
        )
        if row.identity not in covered:
            rows.append(row)
    return files, rows


def _say(line: str) -> None:
    """A salvage line on stderr, where Snakemake writes its own: the run's last lines name each
    failed job's reason, whatever order the jobs ran in."""
    print(line, file=sys.stderr, flush=True)


def salvage(plan, *, since: float, log=_say) -> Path | None:
    """Write the attempt table and index.json (incomplete) of a run with failed jobs; its path, or
    None when nothing was missing (the failure was after the Index). Every step is a `tcsexam`
    command, as in the rules; one that fails is said in one line and ends the salvage, and nothing
    here raises (it runs in the workflow's `onerror`)."""
    try:
        return _salvage(plan, since, log)
    except (OSError, ValueError, InputError) as exc:
        log(f"tcsexam: the incomplete Index could not be written: {exc}")
        return None


def _salvage(plan, since: float, log) -> Path | None:
    layout: ResultsLayout = plan.layout
    failed = failures(plan.root / layout.root, since)
    files, rows = salvage_rows(plan, failed)
    if not rows and layout.index.is_file():
        return None  # every result is judged: the failure was after the Index (a plot, the view)
    salvage_dir = layout.root / ".salvage"
    salvage_dir.mkdir(parents=True, exist_ok=True)
    extra = salvage_dir / "rows.json"
    write_rows(extra, rows)
    root = str(plan.root)
    commands = [
        ["tcsexam", "attempts", "table", "--rows", *files, str(extra), *shlex.split(plan.table_args()), "--output"]
        + [str(layout.attempts_csv)],
    ]
    if not layout.cohort.is_file():
        commands.append(
            ["tcsexam", "attempts", "cohort", "--suite", plan.config["suite"], "--protocol", plan.protocol]
            + ["--reference", plan.cohort_reference(), "--model", *shlex.split(plan.cohort_models())]
            + ["--adoption-policy", plan.config["adoption_policy"], "--output", str(layout.cohort)]
        )
    bootstrap = plan.config["bootstrap"]
    commands.append(
        ["tcsexam", "score", "--suite", plan.config["suite"], "--attempts", str(layout.attempts_csv)]
        + ["--cohort", str(layout.cohort), "--output", str(layout.index), "--solver-scores", plan.score_solver_dir]
        + [*shlex.split(plan.score_twin_args()), "--checksums", str(layout.index_checksums)]
        + ["--bootstrap-resamples", str(bootstrap["resamples"]), "--bootstrap-seed", str(bootstrap["seed"])]
    )
    salvage_log = salvage_dir / "salvage.log"
    with open(salvage_log, "w", encoding="utf-8") as out:
        for argv in commands:
            out.write("$ " + shlex.join(argv) + "\n")
            out.flush()
            done = subprocess.run(argv, cwd=root, stdout=out, stderr=subprocess.STDOUT, check=False)
            if done.returncode != 0:
                log(
                    f"tcsexam: the incomplete Index could not be written: {shlex.join(argv[:3])} failed (log: {salvage_log})"
                )
                _set_aside_stale(layout, log)
                return None
    atomic_write_json(salvage_dir / "failures.json", [{"log": str(f.log), "reason": f.reason} for f in failed])
    atomic_write_json(salvage_dir / WRITTEN, {str(p): hash_file(p) for p in (layout.attempts_csv, layout.index)})
    log(
        f"tcsexam: {len(failed)} job(s) failed; index.json is incomplete: {len(rows)} planned attempt(s) judge_failed "
        f"-> {layout.index}"
    )
    for reason in sorted({f.reason for f in failed}):
        log(f"tcsexam:   {reason}")
    return layout.index


def _set_aside_stale(layout: ResultsLayout, log) -> None:
    """No Index could be made: an index.json of an earlier run must not stand as this run's."""
    if layout.index.is_file():
        where = move_aside(layout.index, aside_dir(layout.set_aside_dir), "a run with failed jobs could not replace it")
        log(f"tcsexam: the earlier index.json is set aside ({where}): this run has none")


def salvaged(layout: ResultsLayout, path: Path) -> bool:
    """Whether `path` (attempts.csv, index.json) is still the one the last salvage wrote: the next
    run's self-healing check rebuilds it, saying why (`heal`)."""
    try:
        written = json.loads((layout.root / ".salvage" / WRITTEN).read_text(encoding="utf-8"))
        return bool(written.get(str(path)) == hash_file(path))
    except (OSError, ValueError, AttributeError):
        return False


def run_started() -> float:
    """This run's start (a failure note older than it is an earlier run's)."""
    return time.time() - 1.0  # a file system's coarse mtime stamps
