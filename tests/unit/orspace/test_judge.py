"""The judge client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from tcsexam.orspace.judge import JudgeClient, JudgeError, JudgeSettings, _retry_after
from tcsexam.orspace.judge_prompt import PROMPT_SHA256

CRITERIA = ["c3", "c4"]
GOOD = {
    "criteria": {
        "c3": {"verdict": True, "justification": "gives both demands"},
        "c4": {"verdict": False, "justification": "no dual"},
    },
    "reasoning": 20,
    "grounding": 15,
    "answer_quality": 8,
    "hallucination_penalty": 2,
    "unsupported_claims": ["claims a dual of 3"],
}
PAYLOAD = {
    "question": "q",
    "criteria": [{"criterion_id": "c3", "criterion": "x"}, {"criterion_id": "c4", "criterion": "y"}],
    "answer": "a",
    "penalty_cap": 20,
}


def client(server, tmp_path=None, **kw) -> tuple[JudgeClient, list[float]]:
    sleeps: list[float] = []
    settings = JudgeSettings(
        base_url=server.base_url,
        model="judge-1",
        api_key="k",
        timeout_s=kw.pop("timeout_s", 5),
        max_attempts=kw.pop("max_attempts", 3),
        backoff_s=0.01,
        max_backoff_s=30,
        cache_dir=tmp_path,
        **kw,
    )
    return JudgeClient(settings, sleep=sleeps.append), sleeps


def test_good_answer_and_request_shape(judge_server):
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(GOOD)), 0)]
    c, sleeps = client(judge_server)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    req = judge_server.requests[0]
    assert req["path"] == "/v1/chat/completions"
    headers = {k.lower(): v for k, v in req["headers"].items()}  # HTTP header names ignore case
    assert headers["authorization"] == "Bearer k"
    assert headers["user-agent"].startswith("OpenAI/Python")  # through the openai client
    body = req["body"]
    assert body["model"] == "judge-1" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert json.loads(body["messages"][1]["content"]) == PAYLOAD
    assert sleeps == []


def test_malformed_json_is_retried_then_accepted(judge_server):
    judge_server.script = [
        (200, {}, judge_server.chat("{not json"), 0),
        (200, {}, b"<html>oops</html>", 0),
        (200, {}, judge_server.chat("```json\n" + json.dumps(GOOD) + "\n```"), 0),
    ]
    c, sleeps = client(judge_server)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    assert c.calls == 3 and len(sleeps) == 2


def test_missing_criterion_is_an_error_after_retries(judge_server):
    bad = dict(GOOD, criteria={"c3": GOOD["criteria"]["c3"]})
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(bad)), 0)]
    c, _ = client(judge_server)
    with pytest.raises(JudgeError, match="c4"):
        c.judge(PAYLOAD, CRITERIA, 20)
    assert c.calls == 3


@pytest.mark.parametrize(
    "mutation",
    [
        {"reasoning": 36},
        {"grounding": -1},
        {"answer_quality": "9"},
        {"hallucination_penalty": -2},
        {"unsupported_claims": "none"},
        {"criteria": {"c3": {"verdict": "yes", "justification": ""}, "c4": GOOD["criteria"]["c4"]}},
        {"criteria": {**GOOD["criteria"], "c9": {"verdict": True, "justification": ""}}},
    ],
)
def test_incomplete_or_out_of_range_judgments_are_errors(judge_server, mutation):
    judge_server.script = [(200, {}, judge_server.chat(json.dumps({**GOOD, **mutation})), 0)]
    c, _ = client(judge_server, max_attempts=1)
    with pytest.raises(JudgeError, match="malformed judgment"):
        c.judge(PAYLOAD, CRITERIA, 20)


def test_429_honours_retry_after_then_succeeds(judge_server):
    judge_server.script = [
        (429, {"Retry-After": "7"}, b'{"error": "rate"}', 0),
        (200, {}, judge_server.chat(json.dumps(GOOD)), 0),
    ]
    c, sleeps = client(judge_server)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    assert sleeps == [7.0]  # Retry-After wins over the 0.01 s backoff


def test_500_then_success_with_exponential_backoff(judge_server):
    judge_server.script = [
        (500, {}, b"boom", 0),
        (503, {}, b"busy", 0),
        (200, {}, judge_server.chat(json.dumps(GOOD)), 0),
    ]
    c, sleeps = client(judge_server, max_attempts=4)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    assert sleeps == [0.01, 0.02]


def test_timeout_is_retried(judge_server):
    judge_server.script = [
        (200, {}, judge_server.chat(json.dumps(GOOD)), 1.5),
        (200, {}, judge_server.chat(json.dumps(GOOD)), 0),
    ]
    c, sleeps = client(judge_server, timeout_s=0.3)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    assert "attempt 1" in c.log[0] and "timed out" in c.log[0].lower()


def test_retries_exhausted_is_an_error(judge_server):
    judge_server.script = [(502, {}, b"bad gateway", 0)]
    c, sleeps = client(judge_server, max_attempts=3)
    with pytest.raises(JudgeError, match="after 3 attempts: HTTP 502"):
        c.judge(PAYLOAD, CRITERIA, 20)
    assert len(judge_server.requests) == 3 and len(sleeps) == 2


def test_client_error_fails_at_once(judge_server):
    judge_server.script = [(401, {}, b'{"error": "bad key"}', 0)]
    c, _ = client(judge_server)
    with pytest.raises(JudgeError, match="HTTP 401"):
        c.judge(PAYLOAD, CRITERIA, 20)
    assert len(judge_server.requests) == 1


def test_cache_hit_skips_the_server(judge_server, tmp_path):
    judge_server.script = [(200, {}, judge_server.chat(json.dumps(GOOD)), 0)]
    c, _ = client(judge_server, tmp_path)
    assert c.judge(PAYLOAD, CRITERIA, 20) == GOOD
    c2, _ = client(judge_server, tmp_path)
    assert c2.judge(PAYLOAD, CRITERIA, 20) == GOOD
    assert len(judge_server.requests) == 1 and c2.cache_hits == 1
    entry = json.loads(next(tmp_path.rglob("*.json")).read_text())
    assert entry["prompt_sha256"] == PROMPT_SHA256 and entry["model"] == "judge-1"
    # another input or another judge model is a miss
    c3, _ = client(judge_server, tmp_path)
    c3.judge(dict(PAYLOAD, answer="b"), CRITERIA, 20)
    c4 = JudgeClient(JudgeSettings(base_url=judge_server.base_url, model="judge-2", cache_dir=tmp_path))
    c4.judge(PAYLOAD, CRITERIA, 20)
    assert len(judge_server.requests) == 3


def test_settings_from_env_and_fallbacks(tmp_path):
    s = JudgeSettings.from_env(
        {"OPENAI_BASE_URL": "http://h/v1", "OPENAI_MODEL": "m", "OPENAI_API_KEY": "o", "TCSEXAM_JUDGE_MODEL": "t"}
    )
    assert (s.base_url, s.model, s.api_key, s.endpoint) == ("http://h/v1", "t", "o", "http://h/v1/chat/completions")
    assert JudgeSettings.from_env({}, base_url="http://x", model="y").model == "y"
    with pytest.raises(JudgeError, match="TCSEXAM_JUDGE_BASE_URL"):
        JudgeSettings.from_env({})


def test_retry_after_http_date():
    assert _retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert _retry_after({"Retry-After": "junk"}) is None
