"""The per-sample GenerationRecord (generation.json) built from Inspect's EvalSample, costs from the
judge's prices format, and the per-run cost limit, on real Inspect runs against a real scripted
OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalError, EvalSample, EvalSampleLimit
from inspect_ai.model import ModelOutput
from inspect_ai.solver import generate, solver

from tcsexam.agents.accounting import (
    GENERATION_FILE,
    INFRASTRUCTURE_STOPS,
    LIMIT_STOPS,
    STORE_STOP_REASON,
    CostBudget,
    GenerationRecord,
    StopReason,
    budgeted,
    prices_for,
    read_generation,
    spent_in,
    stop_reason_of,
    write_generation,
)
from tcsexam.agents.providers import ModelConfig
from tcsexam.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from openai_server import ScriptedOpenAI, completion  # noqa: E402

PRICES = (1000.0, 1000.0)  # USD per million tokens: 100 in + 20 out cost 0.12


def sample(**kwargs) -> EvalSample:
    return EvalSample(id="or_space_001_build", epoch=1, input="x", target="", **kwargs)


def run(cfg, samples, log_dir, solver_, **task_kwargs):
    logs = eval(
        Task(dataset=samples, solver=solver_, **task_kwargs),
        model=cfg.inspect_model(),
        log_dir=str(log_dir),
        display="none",
        fail_on_error=False,
        **cfg.eval_kwargs(),
    )
    return logs[0]


def test_prices_come_from_the_judges_format_under_any_name_of_the_model(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("Qwen/Qwen2.5-7B-Instruct: {input_per_mtok: 0.2, output_per_mtok: 0.6}\n")
    cfg = ModelConfig(model="Qwen/Qwen2.5-7B-Instruct", name="qwen", base_url="http://h:1/v1")
    assert prices_for(prices, cfg.price_keys) == (0.2, 0.6)
    assert prices_for(prices, ModelConfig(model="openai/gpt-4o").price_keys) is None
    assert prices_for(None, cfg.price_keys) is None
    prices.write_text("qwen: {input_per_mtok: -1, output_per_mtok: 0.6}\n")
    with pytest.raises(InputError, match="qwen: prices must not be negative"):
        prices_for(prices, cfg.price_keys)


@pytest.mark.parametrize(("kind", "reason"), sorted(LIMIT_STOPS.items()))
def test_every_inspect_limit_is_the_models_result(kind, reason):
    stop, detail = stop_reason_of(sample(limit=EvalSampleLimit(type=kind, limit=30)))
    assert stop == reason and stop not in INFRASTRUCTURE_STOPS and "30" in detail


def test_errors_are_infrastructure_and_the_solver_says_the_rest():
    boom = EvalError(message="RuntimeError('sandbox exec failed: bwrap missing')", traceback="", traceback_ansi="")
    assert stop_reason_of(sample(error=boom))[0] == StopReason.SANDBOX_ERROR
    odd = EvalError(message="KeyError('x')", traceback="", traceback_ansi="")
    assert stop_reason_of(sample(error=odd))[0] == StopReason.HARNESS_ERROR
    assert stop_reason_of(sample(store={STORE_STOP_REASON: "submitted"})) == (StopReason.SUBMITTED, None)
    assert stop_reason_of(sample())[0] == StopReason.COMPLETED
    full = ModelOutput.from_content("m", "and then", stop_reason="model_length")
    assert stop_reason_of(sample(output=full))[0] == StopReason.CONTEXT_LIMIT
    assert stop_reason_of(sample(output=ModelOutput.from_content("m", "done")))[0] == StopReason.COMPLETED
    # a solver may not claim a limit or an infrastructure failure, nor invent a reason
    assert stop_reason_of(sample(store={STORE_STOP_REASON: "token_limit"}))[0] == StopReason.HARNESS_ERROR
    assert stop_reason_of(sample(store={STORE_STOP_REASON: "bored"}))[0] == StopReason.HARNESS_ERROR


def test_a_record_round_trips_and_a_wrong_version_is_refused(tmp_path):
    cfg = ModelConfig(model="openai/gpt-4o", api_key_env="OPENAI_KEY_FOR_TESTS")
    record = GenerationRecord.from_sample(
        sample(metadata={"workspace_id": "or_space_001_build", "mode": "build", "condition": "c", "attempt": 2}), cfg
    )
    path = tmp_path / "s" / GENERATION_FILE
    write_generation(path, record)
    data = json.loads(path.read_text())
    assert next(iter(data)) == "schema_version" and data["stop_reason"] == "completed"
    assert data["model"]["provider"] == "openai" and data["model"]["api_key_env"] == "OPENAI_KEY_FOR_TESTS"
    assert read_generation(path) == record and record.attempt == 2 and record.cost_usd is None
    data["schema_version"] = 99
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="schema_version 99, expected 1"):
        read_generation(path)


def test_a_token_limit_reached_through_the_endpoint_is_recorded(tmp_path):
    with ScriptedOpenAI([completion("a", prompt_tokens=100, completion_tokens=20)]) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url)
        log = run(cfg, [Sample(input="hi", id="s1")], tmp_path, [generate(), generate()], token_limit=50)
        assert server.count == 1
    record = GenerationRecord.from_sample(log.samples[0], cfg, PRICES)
    assert record.stop_reason == StopReason.TOKEN_LIMIT and record.final
    assert record.cost_usd == pytest.approx(0.12) and record.wall_time_s is not None


@solver
def crashes():
    async def solve(state, generate):
        raise RuntimeError("the harness broke")

    return solve


def test_a_harness_exception_is_not_the_models_result(tmp_path):
    with ScriptedOpenAI([]) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url)
        log = run(cfg, [Sample(input="hi", id="s1")], tmp_path, crashes())
        assert server.count == 0
    record = GenerationRecord.from_sample(log.samples[0], cfg, PRICES)
    assert record.stop_reason == StopReason.HARNESS_ERROR and "the harness broke" in record.stop_detail
    assert not record.final


def test_the_run_budget_stops_new_samples_and_a_resume_continues_from_what_was_spent(tmp_path):
    samples = [Sample(input=f"q{i}", id=f"s{i}") for i in range(3)]
    with ScriptedOpenAI([completion(f"a{i}", prompt_tokens=100, completion_tokens=20) for i in range(3)]) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url, max_samples=1)
        budget = CostBudget(0.1)
        log = run(cfg, samples, tmp_path / "first", budgeted(generate(), budget, PRICES))
        assert server.count == 1
        records = {s.id: GenerationRecord.from_sample(s, cfg, PRICES) for s in log.samples}
        done = [r for r in records.values() if r.stop_reason == StopReason.COMPLETED]
        stopped = [r for r in records.values() if r.stop_reason == StopReason.COST_LIMIT]
        assert len(done) == 1 and len(stopped) == 2 and budget.spent == pytest.approx(0.12)
        assert all(not r.final and r.model_calls == 0 and r.cost_usd == 0 for r in stopped)
        assert "cost limit of 0.1 USD is spent" in stopped[0].stop_detail
        # a rerun with the same limit starts from what the finished sample cost: it asks nothing
        rest = [s for s in samples if s.id != done[0].sample_id]
        again = CostBudget(0.1, spent_in(done))
        run(cfg, rest, tmp_path / "second", budgeted(generate(), again, PRICES))
        assert server.count == 1
        # with more budget the rest is done, and only the rest
        more = CostBudget(1.0, spent_in(done))
        log = run(cfg, rest, tmp_path / "third", budgeted(generate(), more, PRICES))
        assert server.count == 3 and more.spent == pytest.approx(0.36)
        assert {GenerationRecord.from_sample(s, cfg, PRICES).stop_reason for s in log.samples} == {StopReason.COMPLETED}


def test_a_cost_limit_needs_prices_and_a_sane_number():
    with pytest.raises(InputError, match="needs the model's prices"):
        budgeted(generate(), CostBudget(1.0), None)
    with pytest.raises(InputError, match="non-negative number"):
        CostBudget(-1.0)
    assert not CostBudget(None, 1e9).exhausted
