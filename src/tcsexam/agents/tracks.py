"""`tcsexam agents solve`: a model writes the TCSExam submissions of a track, as an agent with the
judge's own checker at hand (docs/agents.md, "TCSExam tracks").

One Inspect task per track, one sample per item (the suite's items of the track, or those named):
what each is given is `agents.track_items`, the task and its sandbox `agents.track_task`, the
checker tools `agents.track_tools`.

When a sample ends, what the agent left in `submission/` becomes the attempt folder
`<solvers_dir>/<model>/<item>/<attempt>/` (a proof: `proof.v` only; a construction: the folder,
never both `construction.txt` and `solver.yaml`: the object is kept) with `generation.json`
(`accounting.GenerationRecord`) beside it, so the workflow's proof and construction rules judge
it unchanged. The record is written last: an attempt folder with a final record is finished, and
a rerun of the same command asks the model nothing for it. An infrastructure failure (provider,
sandbox, harness) writes no attempt folder (its record is kept in the run folder) and the run is
incomplete (exit 1) until a rerun generates it.

Run folder (`--output`): run.json (what the run is: a rerun must match), staged/ (each item's
workspace files and their manifest), logs/*.eval (Inspect's transcripts), samples/<item>/
generation.json (every sample's last record, final or not; left_out.txt: files not handed in),
generation.json (the summary).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample

from tcsexam.agents.accounting import (
    GENERATION_FILE,
    CostBudget,
    GenerationRecord,
    Prices,
    budgeted,
    final_generation,
    prices_for,
    read_generation,
    spent_in,
    write_generation,
)
from tcsexam.agents.generate import OutputLayout, ended_sample_record, run_eval
from tcsexam.agents.providers import ModelConfig
from tcsexam.agents.sandboxenv import AgentSandboxConfig, checkout_root, resolve_sandbox
from tcsexam.agents.tasks import AgentLimits
from tcsexam.agents.track_items import SAFE_NAME, TrackItem, checker_task, load_items, stage_items
from tcsexam.agents.track_online import OnlineJudge, OnlineJudgment, judge_online
from tcsexam.agents.track_solver import dev_reference, reference_candidate
from tcsexam.agents.track_task import track_task
from tcsexam.agents.track_tools import SUBMISSION_DIR, CheckerSetup
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, atomic_write_text, exclusive_use, read_json
from tcsexam.limits import DEFAULT_SEED
from tcsexam.proofs import coq
from tcsexam.proofs.check import PROOF_NAME, choose_proof_sandbox, sandbox_coq_version
from tcsexam.proofs.task import load_proof_task
from tcsexam.runner.construction import PROGRAM_NAME, STATIC_NAME
from tcsexam.runner.engine.batch import PoolOptions, RunOptions
from tcsexam.suites import BINARY_TRACKS, Track
from tcsexam.tasks import load_task

RUN_FILE = "run.json"
SUMMARY_FILE = "generation.json"


# ---- a run --------------------------------------------------------------------------------------------


@dataclass
class SolveSettings:
    """One run of a track: its items, where the submissions go, the model (`providers.ModelConfig`),
    the sandbox, limits, the checker calls a sample may make, prices and the run's cost limit."""

    track: str
    output: Path  #: the run folder
    solvers_dir: Path
    attempt: str
    model: ModelConfig
    suite: str | None = None
    items: tuple[str, ...] = ()
    sandbox: AgentSandboxConfig = AgentSandboxConfig()
    limits: AgentLimits = AgentLimits()
    max_checks: int | None = 10
    dev_instances: int = 3  #: the Solver track's development instances per item
    prices: str | None = None
    max_cost: float | None = None
    retry_on_error: int = 1
    #: item -> its task file (default config/tasks/<item>.yaml): what the model is told and judged on
    task_files: dict[str, str] = field(default_factory=dict)
    #: the Solver track's online protocol: each session's candidate judged on the evaluation
    #: instances, published under <online_dir>/<model>/<item>/<attempt>/ (`agents.track_online`)
    online_dir: Path | None = None
    judge_seed: int = DEFAULT_SEED
    #: item -> the evaluation instances the online judge runs (default all; a workflow's run.instances)
    judge_instances: dict[str, list[str]] = field(default_factory=dict)

    @property
    def model_label(self) -> str:
        return str(self.model.name)

    def attempt_dir(self, item: str) -> Path:
        return Path(self.solvers_dir) / self.model_label / item / self.attempt

    def checker_run(self) -> RunOptions:
        return RunOptions(
            sandbox=self.sandbox.sandbox,
            limiter=self.sandbox.limiter,
            allow_unsandboxed=self.sandbox.allow_unsandboxed,
            progress=False,
            pool=PoolOptions(workers=1, use_ray=False),
        )


def finished_attempt(folder: Path) -> GenerationRecord | None:
    """The final record of an attempt folder an agent run finished, else None."""
    return final_generation(folder / GENERATION_FILE)


def _collect(submission: Path, dest: Path, track: str) -> list[str]:
    """Copy what the agent handed in (`submission`, already copied out of the sandbox without links)
    to `dest`: a proof's proof.v only; a construction's folder, its solver.yaml (and program) dropped
    when construction.txt is there too. The paths not handed in."""
    left: list[str] = []
    if not submission.is_dir():
        return left
    everything = sorted(p.relative_to(submission).as_posix() for p in submission.rglob("*") if p.is_file())
    if track in BINARY_TRACKS:
        keep = [PROOF_NAME] if PROOF_NAME in everything else []
    elif track == Track.CONSTRUCTION and STATIC_NAME in everything:
        keep = [STATIC_NAME]
    else:
        keep = everything if PROGRAM_NAME in everything else []
    for rel in everything:
        if rel in keep:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(submission / rel, dest / rel)
        else:
            left.append(rel)
    return left


class _Finisher:
    """Turns an ended sample into its attempt folder and records, once per sample."""

    def __init__(self, settings: SolveSettings, prices: Prices | None):
        self.settings, self.prices = settings, prices
        self.run_dir = Path(settings.output)
        self.done: dict[str, GenerationRecord] = {}

    def record_path(self, item: str) -> Path:
        return self.run_dir / "samples" / item / GENERATION_FILE

    def finish(self, sample: EvalSample, log_file: str | None = None) -> GenerationRecord:
        item = str((sample.metadata or {}).get("workspace_id") or sample.id)
        dest = self.settings.attempt_dir(item)
        before = self.done.get(item)
        if before is not None and before.sample_uuid == sample.uuid:
            if log_file and before.log_file != log_file:
                before = dataclasses.replace(before, log_file=log_file)
                write_generation(self.record_path(item), before)
                if before.final and dest.is_dir():
                    write_generation(dest / GENERATION_FILE, before)
                self.done[item] = before
            return before
        incoming = self.run_dir / ".incoming" / item
        record = ended_sample_record(sample, self.settings.model, self.prices, log_file, incoming)
        sample_dir = self.record_path(item).parent
        sample_dir.mkdir(parents=True, exist_ok=True)
        if record.final:
            part = dest.with_name(f".{dest.name}.part")  # hidden: never taken for an attempt
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir(parents=True)
            left = [f"{SUBMISSION_DIR}/{r}" for r in _collect(incoming / SUBMISSION_DIR, part, self.settings.track)]
            links = Path(f"{incoming}.left-out")  # links and special files the sandbox's copy-out did not follow
            if links.is_file():
                left += [f"{r} (a link or special file)" for r in links.read_text().splitlines() if r.strip()]
            if left:
                atomic_write_text(sample_dir / "left_out.txt", "".join(f"{r}\n" for r in left))
            else:
                (sample_dir / "left_out.txt").unlink(missing_ok=True)
            write_generation(part / GENERATION_FILE, record)
            shutil.rmtree(dest, ignore_errors=True)
            os.replace(part, dest)
        shutil.rmtree(incoming, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            Path(f"{incoming}.left-out").unlink()
        write_generation(self.record_path(item), record)
        self.done[item] = record
        return record


def run_identity(settings: SolveSettings, items: list[TrackItem]) -> JsonObject:
    """What makes two invocations the same run (run.json)."""
    public = settings.model.public()
    return {
        "model": {k: public.get(k) for k in ("name", "model", "base_url", "provider")},
        "track": settings.track,
        "items": {it.item: hashlib.sha256(it.prompt.encode()).hexdigest() for it in items},
        "solvers_dir": str(Path(settings.solvers_dir).resolve()),
        "attempt": settings.attempt,
        "limits": dataclasses.asdict(settings.limits),
        "max_checks": settings.max_checks,
        "dev_instances": settings.dev_instances if settings.track == Track.SOLVER else None,
        "calls": settings.sandbox.model_dump(include={"call_time_s", "call_mem_mb", "call_nproc", "workspace_mb"}),
    }


def _check_names(settings: SolveSettings) -> None:
    if not SAFE_NAME.fullmatch(settings.model_label):
        raise InputError(
            f"model label {settings.model_label!r} cannot name a folder of {settings.solvers_dir}: "
            "give one with --model-name (letters, digits, . _ + -)"
        )
    if not SAFE_NAME.fullmatch(settings.attempt):
        raise InputError(f"attempt {settings.attempt!r} cannot name a folder (letters, digits, . _ + -)")
    if settings.max_checks is not None and settings.max_checks < 0:
        raise InputError("the number of checker calls must not be negative")
    if settings.dev_instances < 1:
        raise InputError("the Solver track needs at least one development instance")
    if settings.online_dir is not None and settings.track != Track.SOLVER:
        raise InputError(
            "the online protocol judges Solver candidates: give an online records folder with the solver track only"
        )


def _check_checker(settings: SolveSettings, items: list[TrackItem]) -> str:
    """Make sure the judge's checker runs here before the model is asked anything (one line)."""
    run = settings.checker_run()
    if settings.track in BINARY_TRACKS:
        box, why = choose_proof_sandbox(run.sandbox, allow_unsandboxed=run.allow_unsandboxed, limiter=run.limiter)
        version = sandbox_coq_version(box, run.limiter)
        for it in items:
            t = load_proof_task(it.task_file)
            if not coq.version_matches(t.coq_version, version):
                raise InputError(
                    f"{t.source}: task {t.id} needs Coq {t.coq_version}, but the checker's coqc is {version}"
                )
        return f"proof checker: coqc {version} ({why})"
    if settings.track == Track.SOLVER:
        return f"solver feedback: the harness on {settings.dev_instances} development instances per item"
    return "construction checker: the task's exact checker (programs in the project's sandbox)"


def _claim(settings: SolveSettings, items: list[TrackItem], *, write: bool = True) -> dict[str, GenerationRecord]:
    """Refuse a run folder of another run and an attempt folder not written by an agent run; the
    finished items. `write`: claim the run folder (its run.json) when it is new."""
    run_dir = Path(settings.output)
    identity = run_identity(settings, items)
    path = run_dir / RUN_FILE
    if path.exists():
        before = read_json(path, "track run file")
        if before != identity:
            diff = sorted(k for k in identity if before.get(k) != identity[k]) if isinstance(before, dict) else ["all"]
            raise InputError(
                f"{path}: {run_dir} holds another run (differs in {', '.join(diff)}); use another --output, "
                "or remove it to start again"
            )
    finished = {}
    for it in items:
        folder = settings.attempt_dir(it.item)
        if folder.exists() and not (folder / GENERATION_FILE).is_file():
            raise InputError(
                f"{folder}: holds a submission no agent run wrote (no {GENERATION_FILE}); choose another --attempt"
            )
        record = finished_attempt(folder) if folder.exists() else None
        if record is not None:
            finished[it.item] = record
    if write and not path.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, identity)
    return finished


def solve(settings: SolveSettings, *, model: Any = None, progress: Callable[[str], None] | None = None) -> JsonObject:
    """Run the track (`model`: an Inspect Model instead of `settings.model`'s, for tests); returns the
    summary written to the run folder's generation.json."""
    say = progress or (lambda line: None)
    _check_names(settings)
    checks = "unlimited" if settings.max_checks is None else str(settings.max_checks)
    items = load_items(
        settings.track,
        suite=settings.suite,
        items=list(settings.items) or None,
        call_s=settings.sandbox.call_time_s,
        checks=checks,
        dev_instances=settings.dev_instances,
        task_files=settings.task_files,
    )
    run_dir, solvers = Path(settings.output), Path(settings.solvers_dir)
    hidden = (*settings.sandbox.hidden, str(run_dir.resolve()), str(solvers.resolve()))
    if settings.online_dir is not None:
        hidden = (*hidden, str(Path(settings.online_dir).resolve()))
    sandbox = settings.sandbox.model_copy(update={"hidden": hidden})
    say(resolve_sandbox(sandbox)[1])
    say(_check_checker(settings, items))
    prices = prices_for(settings.prices, settings.model.price_keys) if settings.prices else None
    if settings.model.api_key_env and model is None:
        settings.model.api_key()  # an unset key: one line, before anything is written
    _claim(settings, items, write=False)  # bad input refused before anything is written
    run_dir.mkdir(parents=True, exist_ok=True)
    with exclusive_use([(run_dir, True)]):
        finished = _claim(settings, items)
        say(f"{len(finished)} of {len(items)} {settings.track} items finished already (not asked again)")
        todo = [it for it in items if it.item not in finished]
        budget = CostBudget(settings.max_cost, spent_in(list(finished.values())))
        finisher = _Finisher(settings, prices)
        if todo:
            staged = run_dir / "staged"
            stage_items(todo, staged)
            if settings.track == Track.SOLVER:
                _dev_references(settings, todo, staged, say)
            shutil.rmtree(run_dir / ".incoming", ignore_errors=True)
            setup = CheckerSetup(
                run=settings.checker_run(),
                max_checks=settings.max_checks,
                hidden=tuple(sorted({*hidden, *([str(root)] if (root := checkout_root()) else [])})),
                scratch_root=settings.sandbox.scratch_root,
            )
            task = track_task(
                todo,
                staged=staged,
                run_dir=run_dir,
                attempt=settings.attempt,
                config=sandbox,
                setup=setup,
                limits=settings.limits,
                wrap=functools.partial(budgeted, budget=budget, prices=prices),
            )
            run_eval(settings, OutputLayout(run_dir), [task], finisher, model)  # agents generate's eval step
        online = _judge_online(settings, items, hidden, say) if settings.online_dir is not None else None
        return _summarise(settings, items, finisher, budget, online)


def _judge_online(
    settings: SolveSettings, items: list[TrackItem], hidden: tuple[str, ...], say: Callable[[str], None]
) -> dict[str, JsonObject]:
    """The online protocol: every finished item's candidate judged once on its evaluation
    instances (`track_online`); item -> the judge's note."""
    if settings.online_dir is None:  # called for an online run only
        return {}
    judge = OnlineJudge(
        online_dir=Path(settings.online_dir),
        work_dir=Path(settings.output) / "online",
        run=settings.checker_run(),
        seed=settings.judge_seed,
        hidden=tuple(sorted(set(hidden))),
    )
    notes = {}
    for it in items:
        folder = settings.attempt_dir(it.item)
        record = finished_attempt(folder) if folder.is_dir() else None
        if record is None:
            continue  # not generated yet: judged when it is
        note = judge_online(
            judge,
            model=settings.model_label,
            item=it.item,
            attempt=settings.attempt,
            task_file=it.task_file,
            candidate=folder,
            record=record,
            instances=settings.judge_instances.get(it.item),
        )
        say(f"{it.item}: online judge: {note['status']}" + (f" ({note['statuses']})" if "statuses" in note else ""))
        notes[it.item] = note
    return notes


def _dev_references(settings: SolveSettings, items: list[TrackItem], staged: Path, say: Callable[[str], None]) -> None:
    """The development reference of every Solver item that has a reference solver (`track_solver`)."""
    for it in items:
        candidate = reference_candidate(load_task(it.task_file))
        if candidate is None:
            say(f"{it.item}: no reference solver: development feedback without relative scores")
            continue
        out = Path(settings.output) / "dev-reference" / it.item
        kept = dev_reference(checker_task(staged, it), candidate, out, settings.checker_run())
        say(f"{it.item}: development reference {candidate.name}: {len(kept['values'])} values")


def _summarise(
    settings: SolveSettings,
    items: list[TrackItem],
    finisher: _Finisher,
    budget: CostBudget,
    online: dict[str, JsonObject] | None = None,
) -> JsonObject:
    incomplete: dict[str, str] = {}
    stops: dict[str, int] = {}
    for it in items:
        record = finished_attempt(settings.attempt_dir(it.item)) if settings.attempt_dir(it.item).is_dir() else None
        note = (online or {}).get(it.item) or {}
        if record is not None and note.get("status") == OnlineJudgment.INFRASTRUCTURE_ERROR:
            where = ", ".join(note.get("infrastructure_errors") or [])
            incomplete[it.item] = f"online judge: infrastructure_error on {where} (a rerun judges them again)"
            stops[str(record.stop_reason)] = stops.get(str(record.stop_reason), 0) + 1
        elif record is None:
            path = finisher.record_path(it.item)
            why = "not run"
            if path.is_file():
                r = read_generation(path)
                why = f"{r.stop_reason}: {r.stop_detail or ''}".strip(": ")
            incomplete[it.item] = why
        else:
            stops[str(record.stop_reason)] = stops.get(str(record.stop_reason), 0) + 1
    summary = {
        "track": settings.track,
        "model": settings.model_label,
        "attempt": settings.attempt,
        "solvers_dir": str(settings.solvers_dir),
        "items": len(items),
        "finished": len(items) - len(incomplete),
        "generated_now": len(finisher.done),
        "complete": not incomplete,
        "incomplete": incomplete,
        "stop_reasons": dict(sorted(stops.items())),
        "cost_usd": round(budget.spent, 6),
    }
    if online is not None:
        counts: dict[str, int] = {}
        for note in online.values():
            counts[note["status"]] = counts.get(note["status"], 0) + 1
        summary["online"] = {"online_dir": str(settings.online_dir), "judged": dict(sorted(counts.items()))}
    shutil.rmtree(Path(settings.output) / ".incoming", ignore_errors=True)
    atomic_write_json(Path(settings.output) / SUMMARY_FILE, summary)
    return summary


def summary_line(summary: JsonObject) -> str:
    stops = ", ".join(f"{k} {v}" for k, v in summary["stop_reasons"].items()) or "none"
    return (
        f"{summary['finished']}/{summary['items']} {summary['track']} items finished ({summary['generated_now']} "
        f"generated now; stop reasons: {stops}); cost {summary['cost_usd']:g} USD; attempts in "
        f"{summary['solvers_dir']}/{summary['model']}/<item>/{summary['attempt']}"
    )
