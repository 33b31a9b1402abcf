"""Model construction from config (`tcsexam.agents.providers`), through Inspect's provider path
against a real scripted OpenAI-compatible HTTP server: keys from the environment only, retries on
429 and 5xx, a provider failure after retries recorded as an infrastructure failure, tool calls in
the standard function-calling form, and the per-endpoint connection cap."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model._providers import openai_compatible
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool
from tenacity import wait_fixed

from tcsexam.agents.accounting import GenerationRecord, StopReason
from tcsexam.agents.options import add_model_arguments
from tcsexam.agents.providers import OPENAI_COMPATIBLE, PLACEHOLDER_KEY, ModelConfig
from tcsexam.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from openai_server import ScriptedOpenAI, completion, error, tool_call  # noqa: E402


@pytest.fixture
def quick_backoff(monkeypatch):
    """Inspect backs off 3 s and more between retries; what is tested is that it retries and how
    often, not how long it waits."""
    monkeypatch.setattr(openai_compatible.OpenAICompatibleAPI, "retry_wait", lambda self: wait_fixed(0.05))


def run(cfg: ModelConfig, samples: list[Sample], log_dir: Path, solver=None, **kwargs):
    logs = eval(
        Task(dataset=samples, solver=solver or generate(), **kwargs),
        model=cfg.inspect_model(),
        log_dir=str(log_dir),
        display="none",
        fail_on_error=False,
        **cfg.eval_kwargs(),
    )
    return logs[0]


# --- config ---------------------------------------------------------------------------------------


def test_a_config_names_a_provider_or_an_endpoint():
    hosted = ModelConfig.from_mapping({"provider": "openai", "model": "gpt-4o", "api_key_env": "MY_OPENAI"})
    assert (hosted.model, hosted.provider, hosted.inspect_spec, hosted.name) == (
        "openai/gpt-4o",
        "openai",
        "openai/gpt-4o",
        "openai/gpt-4o",
    )
    assert ModelConfig.from_mapping({"model": "anthropic/claude-x"}).provider == "anthropic"
    local = ModelConfig.from_mapping(
        {
            "name": "Qwen 7B (vLLM)",
            "provider": OPENAI_COMPATIBLE,
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "base_url": "http://gpu-node:8000/v1",
            "max_connections": 8,
        }
    )
    assert local.provider == OPENAI_COMPATIBLE
    assert local.inspect_spec == "openai-api/qwen-7b-vllm/Qwen/Qwen2.5-7B-Instruct"
    assert local.price_keys == ("Qwen 7B (vLLM)", "Qwen/Qwen2.5-7B-Instruct", local.inspect_spec)
    assert local.api_key({}) == PLACEHOLDER_KEY and local.max_connections == 8
    public = local.public()
    assert public["base_url"] == "http://gpu-node:8000/v1" and public["api_key_env"] is None


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"model": "gpt-4o", "api_key": "sk-123"}, "api_key is not accepted in config"),
        ({"model": "openai/gpt-4o", "colour": "blue"}, "unknown key(s) colour"),
        ({"model": "gpt-4o"}, "provider/name"),
        ({"provider": OPENAI_COMPATIBLE, "model": "m"}, "needs base_url"),
        ({"model": "m", "base_url": "gpu-node:8000"}, "must start with http"),
        ({"model": "openai/gpt-4o", "api_key_env": "sk-live-123"}, "NAME of an environment variable"),
        ({"model": "openai/gpt-4o", "max_connections": 0}, "max_connections must be a positive integer"),
        ({"model": "openai/gpt-4o", "max_retries": -1}, "max_retries must be a non-negative integer"),
        ({"provider": "openai"}, "model is required"),
        ({"model": "openai/gpt-4o", "temperature": -1}, "temperature must be a non-negative number"),
        ({"model": "openai/gpt-4o", "max_tokens": 0}, "max_tokens must be a positive integer"),
        ("openai/gpt-4o", "must be a mapping"),
    ],
)
def test_a_bad_model_config_is_one_clear_error(data, why):
    with pytest.raises(InputError) as err:
        ModelConfig.from_mapping(data, where="config.yaml: agents.models[0]")
    assert why in str(err.value)
    assert "sk-" not in str(err.value)


def test_a_key_comes_only_from_the_named_variable():
    cfg = ModelConfig(model="m", base_url="http://127.0.0.1:1/v1", api_key_env="TEAM_ENDPOINT_KEY")
    assert cfg.api_key({"TEAM_ENDPOINT_KEY": "k-1"}) == "k-1"
    with pytest.raises(InputError, match="TEAM_ENDPOINT_KEY .* is not set"):
        cfg.api_key({})
    assert ModelConfig(model="openai/gpt-4o").api_key({}) is None  # Inspect's own OPENAI_API_KEY


def test_the_flags_give_the_same_config():
    parser = argparse.ArgumentParser()
    add_model_arguments(parser)
    args = parser.parse_args(
        ["--model", "m", "--base-url", "http://h:1/v1", "--api-key-env", "K", "--max-connections", "2"]
        + ["--max-samples", "3", "--max-sandboxes", "5", "--max-retries", "1", "--timeout", "60"]
        + ["--temperature", "0", "--max-tokens", "8000", "--seed", "7"]
    )
    cfg = ModelConfig.from_args(args)
    assert cfg == ModelConfig(
        model="m",
        base_url="http://h:1/v1",
        api_key_env="K",
        max_connections=2,
        max_samples=3,
        max_sandboxes=5,
        max_retries=1,
        timeout_s=60,
        temperature=0.0,
        max_tokens=8000,
        seed=7,
    )
    assert cfg.eval_kwargs()["max_samples"] == 3 and cfg.eval_kwargs()["max_sandboxes"] == 5


# --- through a real endpoint ----------------------------------------------------------------------


def test_429_and_500_are_retried_and_the_key_is_sent_but_never_logged(quick_backoff, tmp_path, monkeypatch):
    secret = "sk-providers-test-9c2e41aa"
    monkeypatch.setenv("TCSEXAM_TEST_ENDPOINT_KEY", secret)
    script = [error(429), error(500), error(503), completion("hello", prompt_tokens=11, completion_tokens=4)]
    with ScriptedOpenAI(script) as server:
        cfg = ModelConfig(
            model="scripted-7b",
            name="lab vllm",
            base_url=server.base_url,
            api_key_env="TCSEXAM_TEST_ENDPOINT_KEY",
            temperature=0.0,
            max_tokens=512,
            seed=11,
        )
        log = run(cfg, [Sample(input="hi", id="s1")], tmp_path / "logs")
        assert server.count == 4
        sent = server.requests[-1]["body"]
        assert (sent["model"], sent["temperature"], sent["seed"]) == ("scripted-7b", 0.0, 11)
        assert 512 in (sent.get("max_tokens"), sent.get("max_completion_tokens"))
        assert all(r["headers"].get("authorization") == f"Bearer {secret}" for r in server.requests)
    sample = log.samples[0]
    record = GenerationRecord.from_sample(sample, cfg, None, log_file=log.location)
    assert sample.output.completion == "hello" and sample.error is None
    assert record.stop_reason == StopReason.COMPLETED and record.final
    assert (record.input_tokens, record.output_tokens, record.model_calls) == (11, 4, 4)
    assert record.model["inspect_model"] == "openai-api/lab-vllm/scripted-7b"
    text = read_eval_log(log.location).model_dump_json()
    assert secret not in text and secret not in json.dumps(record.to_json())
    assert all(secret.encode() not in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_a_provider_failing_after_its_retries_is_an_infrastructure_failure(quick_backoff, tmp_path):
    with ScriptedOpenAI([error(500)] * 5) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url, max_retries=2)
        log = run(cfg, [Sample(input="hi", id="s1")], tmp_path / "logs")
        assert server.count == 3  # one try and two retries, nothing more
    record = GenerationRecord.from_sample(log.samples[0], cfg, (1.0, 1.0))
    assert record.stop_reason == StopReason.MODEL_ERROR and "500" in record.stop_detail
    assert record.infrastructure and not record.final
    assert record.to_json()["infrastructure"] is True


def test_a_client_error_is_not_retried(quick_backoff, tmp_path):
    with ScriptedOpenAI([error(401, "bad key"), completion("never")]) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url, max_retries=5)
        log = run(cfg, [Sample(input="hi", id="s1")], tmp_path / "logs")
        assert server.count == 1
    record = GenerationRecord.from_sample(log.samples[0], cfg, None)
    assert record.stop_reason == StopReason.MODEL_ERROR and not record.final


@tool
def add():
    async def execute(x: int, y: int):
        """Add two numbers.

        Args:
            x: First number.
            y: Second number.
        """
        return str(x + y)

    return execute


def test_tool_calls_go_in_function_calling_form_and_are_counted(tmp_path):
    script = [
        completion(None, tool_calls=[tool_call("add", {"x": 2, "y": 40}, "call_a")], prompt_tokens=50),
        completion("The sum is 42.", prompt_tokens=70, completion_tokens=6),
    ]
    with ScriptedOpenAI(script) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url)
        log = run(
            cfg, [Sample(input="What is 2+40?", id="s1")], tmp_path / "logs", solver=[use_tools(add()), generate()]
        )
        first, second = (r["body"] for r in server.requests)
    assert [t["function"]["name"] for t in first["tools"]] == ["add"]
    assert first["tools"][0]["type"] == "function" and "x" in first["tools"][0]["function"]["parameters"]["properties"]
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_a" and tool_message["content"] == "42"
    record = GenerationRecord.from_sample(log.samples[0], cfg, (2.0, 10.0))
    assert (record.turns, record.tool_calls, record.tool_calls_by_name) == (2, 1, {"add": 1})
    assert (record.input_tokens, record.output_tokens) == (120, 26)
    assert record.cost_usd == pytest.approx(120 * 2.0 / 1e6 + 26 * 10.0 / 1e6)


def test_the_connection_cap_holds_at_the_endpoint(tmp_path):
    samples = [Sample(input=f"q{i}", id=f"s{i}") for i in range(4)]
    with ScriptedOpenAI([completion(f"a{i}", delay=0.3) for i in range(4)]) as server:
        cfg = ModelConfig(model="m", base_url=server.base_url, max_connections=1, max_samples=4)
        log = run(cfg, samples, tmp_path / "logs")
        assert server.count == 4 and server.max_in_flight == 1
    assert all(s.error is None for s in log.samples)
