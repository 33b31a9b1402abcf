"""`tcsexam agents generate`: one generation run, an Inspect eval over a staged folder, written in
exactly the layout the OR-Space judges read.

```
OUT/run.json                       what this run is (model, condition, staged manifest digest, limits)
OUT/logs/*.eval                    Inspect's logs, one per invocation and mode (`inspect view OUT/logs`)
OUT/workspaces/manifest.json       the stage manifest (`orspace execute` reads the condition from it)
OUT/workspaces/<workspace_id>/     the worked workspace (only once the sample is finished)
OUT/samples/<workspace_id>/generation.json   the sample's record (`accounting.GenerationRecord`)
OUT/samples/<workspace_id>/answer.json       an Explain sample's answer
OUT/samples/<workspace_id>/left_out.txt      links and special files the agent made (not copied out)
OUT/answers.jsonl                  every finished Explain answer (`explain-score --answers`)
OUT/generation.json                the run's summary: complete or not, and why not
```

A sample is **finished** when its `generation.json` exists and is `final` (the model's result: it
submitted, answered, or reached a limit; judged as what it left). The record is written last,
after the worked workspace is in place, as each sample ends (an Inspect hook), so a run that is
killed keeps every sample that ended; a rerun of the same command asks the model nothing for
those (they are left out of the eval's dataset) and runs the rest. A sample that failed for the
infrastructure (the provider after its retries, the sandbox, the harness) gets a record with
`final: false` and no workspace: the run is incomplete (`OUT/generation.json` says which and why,
the command exits 1) until a rerun generates it. `OUT` belongs to one run: another model,
condition, staged folder or limits there is refused (`run.json`).

An Explain sample's answer is what it submitted, else what it left in `answer.md` of its
workspace, else none (`explain-score` scores a missing answer 0).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from inspect_ai import eval as inspect_eval
from inspect_ai.hooks import Hooks, SampleEnd, hooks
from inspect_ai.log import EvalSample

from tcsexam.agents.accounting import (
    GENERATION_FILE,
    STORE_ANSWER,
    CostBudget,
    GenerationRecord,
    Prices,
    StopReason,
    budgeted,
    final_generation,
    prices_for,
    read_generation,
    spent_in,
    write_generation,
)
from tcsexam.agents.providers import ModelConfig
from tcsexam.agents.sandboxenv import AgentSandboxConfig, resolve_sandbox
from tcsexam.agents.tasks import ANSWER_FILE, AgentLimits, orspace_task
from tcsexam.agents.workspace import check_staged, stage_manifest
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, atomic_write_text, exclusive_use, read_json
from tcsexam.orspace.conditions import Condition, Interface
from tcsexam.orspace.release import MODES, Mode, parse_workspace_id

RUN_FILE = "run.json"
SUMMARY_FILE = "generation.json"
ANSWERS_FILE = "answers.jsonl"


@dataclass
class GenerationSettings:
    """One generation run: the staged folder, the output folder, the modes, the model (a
    `providers.ModelConfig`), its sandbox and limits, prices and the run's cost limit."""

    staged: Path
    output: Path
    model: ModelConfig
    modes: tuple[str, ...] = MODES
    sandbox: AgentSandboxConfig = AgentSandboxConfig()
    limits: AgentLimits = AgentLimits()
    prices: str | None = None
    max_cost: float | None = None
    #: Inspect's retries of a sample that errored (the provider's own retries come first)
    retry_on_error: int = 1


@dataclass
class OutputLayout:
    root: Path

    @property
    def workspaces(self) -> Path:
        return self.root / "workspaces"

    @property
    def incoming(self) -> Path:
        return self.root / ".incoming"

    def sample(self, wid: str) -> Path:
        return self.root / "samples" / wid

    def record(self, wid: str) -> Path:
        return self.sample(wid) / GENERATION_FILE

    def answer(self, wid: str) -> Path:
        return self.sample(wid) / "answer.json"


def finished_record(layout: OutputLayout, wid: str) -> GenerationRecord | None:
    """The record of a finished sample of `wid` (final, its workspace in place), else None."""
    record = final_generation(layout.record(wid))
    return record if record is not None and (layout.workspaces / wid).is_dir() else None


def run_identity(settings: GenerationSettings, manifest_path: Path) -> JsonObject:
    """What makes two invocations the same run (its `run.json`): a rerun must match it."""
    public = settings.model.public()
    return {
        "model": {
            k: public.get(k) for k in ("name", "model", "base_url", "provider", "temperature", "max_tokens", "seed")
        },
        "staged": str(settings.staged.resolve()),
        "staged_manifest_sha256": hashlib.sha256(manifest_path.read_bytes()).hexdigest(),
        "limits": dataclasses.asdict(settings.limits),
        "calls": settings.sandbox.model_dump(include={"call_time_s", "call_mem_mb", "call_nproc", "workspace_mb"}),
    }


def _claim_output(layout: OutputLayout, identity: JsonObject, manifest_path: Path) -> None:
    path = layout.root / RUN_FILE
    if path.exists():
        before = read_json(path, "generation run file")
        if before != identity:
            diff = sorted(k for k in identity if before.get(k) != identity[k]) if isinstance(before, dict) else ["all"]
            raise InputError(
                f"{path}: {layout.root} holds another generation run (differs in {', '.join(diff)}); "
                "use another --output, or remove it to start again"
            )
    else:
        layout.root.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, identity)
    layout.workspaces.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(manifest_path, layout.workspaces / "manifest.json")
    shutil.rmtree(layout.incoming, ignore_errors=True)  # copies of samples a killed run never finished


class _Finisher:
    """Turns an ended sample into its outputs (`finish`), once per sample of this invocation."""

    def __init__(self, settings: GenerationSettings, layout: OutputLayout, prices: Prices | None):
        self.settings, self.layout, self.prices = settings, layout, prices
        self.done: dict[str, GenerationRecord] = {}

    def finish(self, sample: EvalSample, log_file: str | None = None) -> GenerationRecord:
        wid = str((sample.metadata or {}).get("workspace_id") or sample.id)
        if wid in self.done and self.done[wid].sample_uuid == sample.uuid:
            record = self.done[wid]
            if log_file and record.log_file != log_file:
                record = dataclasses.replace(record, log_file=log_file)
                write_generation(self.layout.record(wid), record)
                self.done[wid] = record
            return record
        incoming = self.layout.incoming / wid
        record = ended_sample_record(sample, self.settings.model, self.prices, log_file, incoming)
        self.layout.sample(wid).mkdir(parents=True, exist_ok=True)
        if record.final:
            target = self.layout.workspaces / wid
            shutil.rmtree(target, ignore_errors=True)
            os.replace(incoming, target)
            left_out = Path(f"{incoming}.left-out")  # links and special files the copy-out did not follow
            if left_out.is_file() and left_out.read_text().strip():
                os.replace(left_out, self.layout.sample(wid) / "left_out.txt")
            else:
                (self.layout.sample(wid) / "left_out.txt").unlink(missing_ok=True)
            answer = _answer(sample, target) if record.mode == Mode.EXPLAIN else None
            if answer is not None:
                atomic_write_json(self.layout.answer(wid), {"workspace_id": wid, "answer": answer})
            else:
                self.layout.answer(wid).unlink(missing_ok=True)
        else:
            shutil.rmtree(incoming, ignore_errors=True)
        write_generation(self.layout.record(wid), record)  # last: its presence says the sample is done
        self.done[wid] = record
        return record


def ended_sample_record(
    sample: EvalSample, model: ModelConfig, prices: Prices | None, log_file: str | None, incoming: Path
) -> GenerationRecord:
    """The record of an ended sample (`GenerationRecord.from_sample`), made a harness error when it
    would be final but its worked workspace was not copied out to `incoming`: every finisher's
    first step."""
    record = GenerationRecord.from_sample(sample, model, prices, log_file=log_file)
    if record.final and not incoming.is_dir():
        record = dataclasses.replace(
            record,
            final=False,
            stop_reason=StopReason.HARNESS_ERROR,
            stop_detail=f"the worked workspace was not copied out of the sandbox ({record.stop_reason})",
        )
    return record


def _answer(sample: EvalSample, workspace: Path) -> str | None:
    """What the Explain sample answered: its submission, else its workspace's answer.md."""
    answer = (sample.store or {}).get(STORE_ANSWER)
    if isinstance(answer, str) and answer.strip():
        return answer
    kept = workspace / ANSWER_FILE
    if kept.is_file() and not kept.is_symlink():
        text = kept.read_text(encoding="utf-8", errors="replace")
        return text if text.strip() else None
    return None


class SampleFinisher(Protocol):
    """What turns an ended sample into its outputs (`_Finisher` here; the tracks' own in
    `agents.tracks`): called by the Inspect hook as each sample ends, and again for every sample
    of the logs after the eval (with the log's name), so it must be idempotent per sample."""

    def finish(self, sample: EvalSample, log_file: str | None = None) -> Any: ...


#: output root -> the finisher of the run writing into it (read by the Inspect hook; a sample's
#: `incoming_dir` metadata is `<output root>/.incoming/<id>`)
_ACTIVE: dict[str, SampleFinisher] = {}


@hooks(name="tcsexam_generation", description="writes each finished OR-Space sample's outputs as it ends")
class GenerationHook(Hooks):
    def enabled(self) -> bool:
        return bool(_ACTIVE)

    async def on_sample_end(self, data: SampleEnd) -> None:
        incoming = (data.sample.metadata or {}).get("incoming_dir")
        finisher = _ACTIVE.get(str(Path(incoming).parent.parent)) if incoming else None
        if finisher is not None:
            finisher.finish(data.sample)


def write_answers(layout: OutputLayout, wids: list[str]) -> int:
    """OUT/answers.jsonl from every finished Explain sample's answer; the number of answers."""
    rows = []
    for wid in sorted(wids):
        if finished_record(layout, wid) is not None and layout.answer(wid).is_file():
            rows.append(json.dumps(read_json(layout.answer(wid), "answer file"), ensure_ascii=False))
    atomic_write_text(layout.root / ANSWERS_FILE, "".join(f"{row}\n" for row in rows))
    return len(rows)


def generate(
    settings: GenerationSettings, *, model: Any = None, progress: Callable[[str], None] | None = None
) -> JsonObject:
    """Run the generation (`model`: an Inspect Model to use instead of `settings.model`'s, for
    tests); returns the summary written to OUT/generation.json."""
    say = progress or (lambda line: None)
    staged, layout = Path(settings.staged), OutputLayout(Path(settings.output))
    manifest = stage_manifest(staged)
    condition = Condition.from_dict(manifest.get("condition") or {}, str(staged / "manifest.json"))
    for mode in settings.modes:
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r} (choose {', '.join(MODES)})")
    wids = [w for w, e in sorted(manifest["workspaces"].items()) if e.get("mode") in settings.modes]
    if not wids:
        raise InputError(f"{staged}: no {'/'.join(settings.modes)} workspaces staged")
    sandbox = settings.sandbox.model_copy(update={"hidden": (*settings.sandbox.hidden, str(layout.root.resolve()))})
    if condition.interface == Interface.FILESYSTEM:
        say(resolve_sandbox(sandbox)[1])
    prices = prices_for(settings.prices, settings.model.price_keys) if settings.prices else None
    if model is None:
        settings.model.api_key()  # a named key variable that is unset: one line before anything is written
    if settings.max_cost is not None and prices is None:
        raise InputError(f"--max-cost needs the prices of model {settings.model.name} (--prices FILE listing it)")
    with exclusive_use([(layout.root, True)]):
        finished = {w: r for w in wids if (r := finished_record(layout, w)) is not None}
        for wid in wids:  # a staged workspace changed since its audit: one line before anything runs
            if wid not in finished:
                check_staged(staged, manifest, wid)
        budget = CostBudget(settings.max_cost, spent_in(list(finished.values())))
        _claim_output(layout, run_identity(settings, staged / "manifest.json"), staged / "manifest.json")
        say(f"{len(finished)} of {len(wids)} samples finished already (not asked again); {condition.slug}")
        wrap = functools.partial(budgeted, budget=budget, prices=prices)
        tasks = [
            task
            for mode in settings.modes
            if (
                task := orspace_task(
                    staged,
                    mode,
                    output=layout.root,
                    config=sandbox,
                    limits=settings.limits,
                    skip=frozenset(finished),
                    wrap=wrap,
                )
            )
            is not None
        ]
        finisher = _Finisher(settings, layout, prices)
        if tasks:
            run_eval(settings, layout, tasks, finisher, model)
        return _summarise(layout, wids, condition, finisher, budget)


def run_eval(settings: Any, layout: Any, tasks: list, finisher: SampleFinisher, model: Any) -> None:
    """Inspect's eval of `tasks` with its logs in `layout.root`/logs, every sample finished by
    `finisher` as it ends (the hook) and again from the logs afterwards (the logs' names, and what
    the hook did not finish). `settings`: `.model` (a `providers.ModelConfig`, whose model is
    used unless `model` is given) and `.retry_on_error`; `layout`: `.root`. Shared by
    `agents generate` and `agents solve` (`agents.tracks`)."""
    key = str(layout.root.resolve())
    _ACTIVE[key] = finisher
    try:
        logs = inspect_eval(
            tasks,
            model=model if model is not None else settings.model.inspect_model(),
            log_dir=str((layout.root / "logs").resolve()),
            log_format="eval",
            display="none",
            fail_on_error=False,
            retry_on_error=settings.retry_on_error,
            score=False,
            **{k: v for k, v in settings.model.eval_kwargs().items() if v is not None},
        )
    finally:
        _ACTIVE.pop(key, None)
    for log in logs:  # what the hook did not finish (it failed, or Inspect did not call it) and the logs' names
        for sample in log.samples or []:
            finisher.finish(sample, log_file=str(Path(log.location).relative_to(layout.root.resolve())))


def _summarise(
    layout: OutputLayout, wids: list[str], condition: Condition, finisher: _Finisher, budget: CostBudget
) -> JsonObject:
    records = {w: read_generation(layout.record(w)) for w in wids if layout.record(w).is_file()}
    incomplete = {
        w: (f"{records[w].stop_reason}: {records[w].stop_detail or ''}".strip(": ") if w in records else "not run")
        for w in wids
        if finished_record(layout, w) is None
    }
    stops: dict[str, int] = {}
    for w, r in records.items():
        if w not in incomplete:
            stops[str(r.stop_reason)] = stops.get(str(r.stop_reason), 0) + 1
    summary = {
        "condition": condition.slug,
        "samples": len(wids),
        "finished": len(wids) - len(incomplete),
        "generated_now": len(finisher.done),
        "complete": not incomplete,
        "incomplete": incomplete,
        "stop_reasons": dict(sorted(stops.items())),
        "answers": write_answers(layout, [w for w in wids if parse_workspace_id(w)[1] == "explain"]),
        "cost_usd": round(budget.spent, 6),
    }
    with contextlib.suppress(OSError):
        shutil.rmtree(layout.incoming)
    atomic_write_json(layout.root / SUMMARY_FILE, summary)
    return summary
