"""What one generation sample cost and why it stopped: the `GenerationRecord` (`generation.json`
beside the sample's outputs), and the per-run cost limit.

A record is built from Inspect's `EvalSample` (`GenerationRecord.from_sample`): the model, its
provider and base URL (never a key: `ModelConfig.public()`), tokens in and out (summed over the
sample's `model_usage`), the cost from a prices file, wall time (`total_time`) and working time
(`working_time`: without waits on rate limits and sandboxes), turns (assistant messages), tool
calls (in all and by tool), and the **stop reason** (`StopReason`), decided in this order:

1. the sample has an error: `model_error` when the model call failed after every retry (the last
   model event carries an error: HTTP 429/5xx, connection, timeout), `sandbox_error` when the
   sandbox failed, else `harness_error`. All three are **infrastructure failures**: never the
   model's score (`final: false`), rerun by the next run.
2. the sample hit one of Inspect's limits: `message_limit`, `token_limit`, `time_limit`,
   `working_limit`, `turn_limit`, `context_limit`, `cost_limit`, `operator_limit`,
   `custom_limit`: the model's result, judged as what it left (`final: true`).
3. what the solver said in the sample's store (`tcsexam:stop_reason`): `submitted` (the agent
   called submit), `answered` (a flat reply parsed), `parse_error` (a flat reply that could not be
   parsed; the model's result, judged as what it left: nothing), `cost_limit` (the run's budget was
   spent before the sample started: it ran nothing, `final: false`, a rerun with budget does it).
4. `context_limit` when the last reply was cut by the model's context window, else `completed` (the
   agent ended its turn without submitting).

**Cost.** A prices file in the judge's format (`{model: {input_per_mtok, output_per_mtok}}`, USD per
million tokens, parsed by `tcsexam.orspace.judge.load_prices`) gives each model's prices; the model
is looked up under its config name, its configured model, its Inspect name and its bare name
(`ModelConfig.price_keys`). Without prices `cost_usd` is null.

**Per-run cost limit.** Inspect limits cost per sample only, so the run's limit is a `CostBudget`
checked between samples: `budgeted(solver, budget)` wraps a task's solver; a sample that starts
after the run's spending reached the limit asks the model nothing and stops `cost_limit`, and every
finished sample adds its cost. Samples already in flight finish, so a run can pass its limit by at
most the cost of `max_samples` samples. A resumed run starts its budget at what the finished
samples of earlier runs cost (`CostBudget(limit, spent=spent_in(records))`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.model._model import sample_model_usage
from inspect_ai.solver import Solver, solver

from tcsexam.agents.providers import ModelConfig
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, read_json
from tcsexam.orspace.judge import load_prices

SCHEMA_VERSION = 1
GENERATION_FILE = "generation.json"

#: keys a solver leaves in the sample's store
STORE_STOP_REASON = "tcsexam:stop_reason"
STORE_ERROR = "tcsexam:error"
STORE_ANSWER = "tcsexam:answer"
STORE_FILES = "tcsexam:files"
STORE_REPLY_FORMAT = "tcsexam:reply_format"


class StopReason(StrEnum):
    """Why a generation sample stopped."""

    SUBMITTED = "submitted"
    ANSWERED = "answered"
    COMPLETED = "completed"
    MESSAGE_LIMIT = "message_limit"
    TOKEN_LIMIT = "token_limit"
    TIME_LIMIT = "time_limit"
    WORKING_LIMIT = "working_limit"
    TURN_LIMIT = "turn_limit"
    CONTEXT_LIMIT = "context_limit"
    COST_LIMIT = "cost_limit"
    OPERATOR_LIMIT = "operator_limit"
    CUSTOM_LIMIT = "custom_limit"
    PARSE_ERROR = "parse_error"
    MODEL_ERROR = "model_error"
    SANDBOX_ERROR = "sandbox_error"
    HARNESS_ERROR = "harness_error"


#: failures of the infrastructure (provider, sandbox, harness): never the model's result
INFRASTRUCTURE_STOPS = frozenset({StopReason.MODEL_ERROR, StopReason.SANDBOX_ERROR, StopReason.HARNESS_ERROR})
#: Inspect's EvalSampleLimit.type -> stop reason
LIMIT_STOPS: dict[str, StopReason] = {
    "message": StopReason.MESSAGE_LIMIT,
    "token": StopReason.TOKEN_LIMIT,
    "time": StopReason.TIME_LIMIT,
    "working": StopReason.WORKING_LIMIT,
    "turn": StopReason.TURN_LIMIT,
    "context": StopReason.CONTEXT_LIMIT,
    "cost": StopReason.COST_LIMIT,
    "operator": StopReason.OPERATOR_LIMIT,
    "custom": StopReason.CUSTOM_LIMIT,
}
#: what a solver may put under STORE_STOP_REASON
SOLVER_STOPS = frozenset({StopReason.SUBMITTED, StopReason.ANSWERED, StopReason.PARSE_ERROR, StopReason.COST_LIMIT})


Prices = tuple[float, float]  #: USD per million input tokens, per million output tokens


def prices_for(path: str | Path | None, keys: tuple[str, ...]) -> Prices | None:
    """The first of `keys` listed in the prices file (the judge's format and parser), else None."""
    if path is None:
        return None
    for key in keys:
        prices = load_prices(path, key)
        if prices is not None:
            return prices
    return None


def cost_usd(tokens_in: int, tokens_out: int, prices: Prices | None) -> float | None:
    if prices is None:
        return None
    return tokens_in / 1e6 * prices[0] + tokens_out / 1e6 * prices[1]


@dataclass
class GenerationRecord:
    """One sample's generation, as `generation.json` keeps it."""

    workspace_id: str
    mode: str | None
    model: JsonObject  #: ModelConfig.public(): name, model, provider, base_url, api_key_env (a name)...
    stop_reason: StopReason
    stop_detail: str | None = None
    final: bool = True  #: the result stands (scored as what it left); false: rerun it
    condition: str | None = None
    interface: str | None = None
    attempt: int | None = None
    sample_id: str | None = None
    epoch: int = 1
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    prices_per_mtok: list[float] | None = None
    wall_time_s: float | None = None
    working_time_s: float | None = None
    turns: int = 0
    tool_calls: int = 0
    tool_calls_by_name: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0
    files_written: list[str] | None = None
    reply_format: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    log_file: str | None = None
    sample_uuid: str | None = None
    #: the generation run's output folder (absolute), which `log_file` is relative to
    run_dir: str | None = None
    schema_version: int = SCHEMA_VERSION

    @property
    def infrastructure(self) -> bool:
        return self.stop_reason in INFRASTRUCTURE_STOPS

    def to_json(self) -> JsonObject:
        data = asdict(self)
        data["stop_reason"] = self.stop_reason.value
        data["infrastructure"] = self.infrastructure
        return {"schema_version": data.pop("schema_version"), **data}

    @classmethod
    def from_json(cls, data: Json, where: str = "generation record") -> GenerationRecord:
        if not isinstance(data, dict):
            raise InputError(f"{where}: not a JSON object")
        if data.get("schema_version") != SCHEMA_VERSION:
            raise InputError(f"{where}: schema_version {data.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        values = {k: v for k, v in data.items() if k != "infrastructure"}
        try:
            values["stop_reason"] = StopReason(values["stop_reason"])
            return cls(**values)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: {exc}") from None

    @classmethod
    def from_sample(
        cls,
        sample: EvalSample,
        model: ModelConfig,
        prices: Prices | None = None,
        *,
        log_file: str | None = None,
    ) -> GenerationRecord:
        """From an Inspect `EvalSample` and the `ModelConfig` it ran with. Sample metadata keys used:
        `workspace_id`, `mode`, `condition`, `interface`, `attempt` (the sample id stands in for a
        missing workspace id)."""
        meta = sample.metadata or {}
        store = sample.store or {}
        usage = list((sample.model_usage or {}).values())
        tokens_in = sum(u.input_tokens for u in usage)
        tokens_out = sum(u.output_tokens for u in usage)
        reasoning = [u.reasoning_tokens for u in usage if u.reasoning_tokens is not None]
        stop, detail = stop_reason_of(sample)
        turns, calls, by_name = _conversation_counts(sample.messages or [])
        return cls(
            workspace_id=str(meta.get("workspace_id") or sample.id),
            mode=meta.get("mode"),
            condition=meta.get("condition"),
            interface=meta.get("interface"),
            attempt=meta.get("attempt"),
            sample_id=str(sample.id),
            epoch=int(sample.epoch),
            model=model.public(),
            stop_reason=stop,
            stop_detail=detail,
            final=stop not in INFRASTRUCTURE_STOPS and not (stop == StopReason.COST_LIMIT and _never_asked(sample)),
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            total_tokens=sum(u.total_tokens for u in usage),
            reasoning_tokens=sum(reasoning) if reasoning else None,
            cost_usd=cost_usd(tokens_in, tokens_out, prices),
            prices_per_mtok=list(prices) if prices else None,
            wall_time_s=sample.total_time,
            working_time_s=sample.working_time,
            turns=turns,
            tool_calls=calls,
            tool_calls_by_name=by_name,
            model_calls=_model_calls(sample),
            files_written=store.get(STORE_FILES),
            reply_format=store.get(STORE_REPLY_FORMAT),
            started_at=str(sample.started_at) if sample.started_at else None,
            completed_at=str(sample.completed_at) if sample.completed_at else None,
            log_file=log_file,
            sample_uuid=sample.uuid,
            run_dir=_run_dir(meta),
        )


def _run_dir(meta: JsonObject) -> str | None:
    """The run's output folder, from the sample's `incoming_dir` metadata (every task of the agent
    stage sets it to `<output root>/.incoming/<id>`, resolved)."""
    incoming = meta.get("incoming_dir")
    return str(Path(incoming).parent.parent) if isinstance(incoming, str) and incoming else None


def _conversation_counts(messages: list[ChatMessage]) -> tuple[int, int, dict[str, int]]:
    turns, by_name = 0, Counter[str]()
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        turns += 1
        for call in message.tool_calls or []:
            by_name[call.function] += 1
    return turns, sum(by_name.values()), dict(sorted(by_name.items()))


def _model_events(sample: EvalSample) -> list[ModelEvent]:
    return [e for e in (sample.events or []) if isinstance(e, ModelEvent)]


def _model_calls(sample: EvalSample) -> int:
    """HTTP attempts (successful or not) the transcript shows."""
    return len(_model_events(sample))


def _never_asked(sample: EvalSample) -> bool:
    return not _model_events(sample) and not any(isinstance(m, ChatMessageAssistant) for m in sample.messages or [])


def stop_reason_of(sample: EvalSample) -> tuple[StopReason, str | None]:
    """(stop reason, detail) of an Inspect EvalSample, by the order in the module docstring."""
    store = sample.store or {}
    if sample.error is not None:
        message = sample.error.message
        events = _model_events(sample)
        if events and events[-1].error:
            return StopReason.MODEL_ERROR, f"model call failed after retries: {events[-1].error}"
        trace = sample.error.traceback or ""
        if "sandbox" in trace.lower() or "sandbox" in message.lower():
            return StopReason.SANDBOX_ERROR, message
        return StopReason.HARNESS_ERROR, message
    if sample.limit is not None:
        reason = LIMIT_STOPS.get(sample.limit.type, StopReason.CUSTOM_LIMIT)
        detail = sample.limit.reason or f"{sample.limit.type} limit {sample.limit.limit:g}"
        return reason, detail
    said = store.get(STORE_STOP_REASON)
    if said is not None:
        try:
            reason = StopReason(said)
        except ValueError:
            return StopReason.HARNESS_ERROR, f"the solver left an unknown stop reason {said!r}"
        if reason not in SOLVER_STOPS:
            return StopReason.HARNESS_ERROR, f"the solver left stop reason {said!r}, which only Inspect may give"
        return reason, store.get(STORE_ERROR)
    if sample.output.choices and sample.output.stop_reason == "model_length":
        return StopReason.CONTEXT_LIMIT, "the conversation outgrew the model's context window"
    return StopReason.COMPLETED, None


def write_generation(path: str | Path, record: GenerationRecord) -> None:
    atomic_write_json(path, record.to_json())


def read_generation(path: str | Path) -> GenerationRecord:
    return GenerationRecord.from_json(read_json(path, "generation record"), str(path))


def final_generation(path: str | Path) -> GenerationRecord | None:
    """The record at `path` when there is one and it is final (the model's result), else None."""
    if not Path(path).is_file():
        return None
    record = read_generation(path)
    return record if record.final else None


def spent_in(records: list[GenerationRecord]) -> float:
    """What finished samples cost (those without a cost count nothing)."""
    return sum(r.cost_usd for r in records if r.cost_usd is not None)


class CostBudget:
    """A run's spending against its cost limit (None: no limit), checked between samples."""

    def __init__(self, limit_usd: float | None, spent_usd: float = 0.0):
        if limit_usd is not None and (not math.isfinite(limit_usd) or limit_usd < 0):
            raise InputError(f"the cost limit must be a non-negative number of USD (got {limit_usd!r})")
        self.limit = limit_usd
        self.spent = float(spent_usd)

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def add(self, usd: float | None) -> None:
        if usd:
            self.spent += usd

    def describe(self) -> str:
        return f"the run's cost limit of {self.limit:g} USD is spent ({self.spent:.4f} USD)"


def budgeted(inner: Solver, budget: CostBudget, prices: Prices | None) -> Solver:
    """`inner` (an Inspect solver) under the run's budget: a sample starting with the budget spent
    asks the model nothing and stops `cost_limit`; each finished sample adds its cost (from the
    sample's model usage and `prices`) to the budget."""
    if budget.limit is not None and prices is None:
        raise InputError("a cost limit needs the model's prices (--prices FILE listing the model)")

    @solver(name="tcsexam_budgeted")
    def _budgeted():
        async def solve(state, generate):
            if budget.exhausted:
                state.store.set(STORE_STOP_REASON, StopReason.COST_LIMIT.value)
                state.store.set(STORE_ERROR, budget.describe() + " before this sample started")
                state.completed = True
                return state
            try:
                return await inner(state, generate)
            finally:
                usage = list(sample_model_usage().values())
                budget.add(cost_usd(sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage), prices))

        return solve

    return _budgeted()
