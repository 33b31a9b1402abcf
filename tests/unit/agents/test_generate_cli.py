"""`tcsexam agents generate` against a real OpenAI-compatible HTTP server (scripted tool calls):
a run killed mid-way resumes without asking the model again for the sample that had finished
(the server's request log proves it), and a provider failure is recorded as infrastructure,
never as the model's result: the run is incomplete (exit 1) until a rerun generates it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import (  # noqa: E402
    WORKSPACE_LINE,
    program_steps,
    sandbox_config_or_skip,
    scripted_endpoint_args,
    staged_demo,
)
from openai_server import Entry, ScriptedOpenAI, completion, error, tool_call  # noqa: E402

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.cli import main  # noqa: E402

pytestmark = pytest.mark.slow
FIRST, SECOND = "or_space_101_build", "or_space_102_build"
SCRIPTS = {FIRST: program_steps("src", "bakery_highs.py"), SECOND: program_steps("src", "facility_pulp.py")}


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def workspace_of(body: dict) -> str:
    prompt = " ".join(_text(m) for m in body.get("messages", []) if m.get("role") in ("system", "user"))
    found = WORKSPACE_LINE.search(prompt)
    return found.group(1) if found else "?"


class Router:
    """Answers each request with the next step of its workspace's script; `stall` (workspace ->
    seconds) holds that workspace's requests, `fail` (workspaces) answers them with HTTP 500."""

    def __init__(self, stall: dict[str, float] | None = None, fail: set[str] | None = None):
        self.stall, self.fail = stall or {}, fail or set()
        self.asked: list[str] = []

    def __call__(self, body: dict) -> Entry:
        wid = workspace_of(body)
        self.asked.append(wid)
        if wid in self.fail:
            return error(500, "scripted outage")
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        name, arguments = SCRIPTS[wid][min(step, len(SCRIPTS[wid]) - 1)]
        return completion(None, tool_calls=[tool_call(name, arguments)], delay=self.stall.get(wid, 0.0))


def command(staged: Path, out: Path, server: ScriptedOpenAI) -> list[str]:
    return [
        "agents",
        "generate",
        "--staged",
        str(staged),
        "--output",
        str(out),
        "--modes",
        "build",
        *scripted_endpoint_args(server),
    ]


@pytest.fixture
def staged(tmp_path):
    sandbox_config_or_skip()
    return staged_demo(tmp_path, [FIRST, SECOND])


def test_a_killed_run_resumes_without_asking_again_for_a_finished_sample(staged, tmp_path):
    out = tmp_path / "out"
    router = Router(stall={SECOND: 120.0})
    with ScriptedOpenAI(route=router) as server:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tcsexam", *command(staged, out, server)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            record = out / "samples" / FIRST / "generation.json"
            while not (record.is_file() and SECOND in router.asked):  # the first finished, the second asked
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.2)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
        first_requests = router.asked.count(FIRST)
        assert first_requests == len(SCRIPTS[FIRST])
        assert not (out / "samples" / SECOND / "generation.json").exists()

        router.asked.clear()
        router.stall = {}
        assert main(command(staged, out, server)) == 0
    assert FIRST not in router.asked and router.asked.count(SECOND) == len(SCRIPTS[SECOND])
    summary = json.loads((out / "generation.json").read_text())
    assert summary["complete"] and summary["finished"] == 2 and summary["generated_now"] == 1
    for wid in (FIRST, SECOND):
        assert (out / "workspaces" / wid / "src" / "main.py").is_file()


def test_a_provider_failure_is_infrastructure_and_the_rerun_completes_it(staged, tmp_path):
    out = tmp_path / "out"
    router = Router(fail={SECOND})
    with ScriptedOpenAI(route=router) as server:
        assert main(command(staged, out, server)) == 1
        record = read_generation(out / "samples" / SECOND / "generation.json")
        assert record.stop_reason == "model_error" and not record.final
        assert not (out / "workspaces" / SECOND).exists()  # nothing of it passes for the model's work
        summary = json.loads((out / "generation.json").read_text())
        assert not summary["complete"] and list(summary["incomplete"]) == [SECOND]

        router.fail, router.asked = set(), []
        assert main(command(staged, out, server)) == 0
    assert FIRST not in router.asked and SECOND in router.asked
    assert read_generation(out / "samples" / SECOND / "generation.json").final
    assert json.loads((out / "generation.json").read_text())["complete"]


def test_a_folder_that_is_not_staged_is_one_error_line_and_no_output(tmp_path, capsys):
    (tmp_path / "not-staged").mkdir()
    out = tmp_path / "out"
    args = ["agents", "generate", "--staged", str(tmp_path / "not-staged"), "--output", str(out)]
    assert main([*args, "--model", "mockllm/model"]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if " INFO " not in line]
    assert len(errors) == 1 and "not a staged folder" in errors[0]
    assert not out.exists()


def test_bad_limits_are_usage_errors(tmp_path):
    args = ["agents", "generate", "--staged", str(tmp_path), "--output", str(tmp_path / "out"), "--model", "mockllm/m"]
    assert main([*args, "--call-time-limit", "0"]) == 2
    assert main([*args, "--message-limit", "-1"]) == 2
    assert main([*args, "--licence", "cplex=/x"]) == 2


def test_a_cost_limit_without_prices_is_refused_before_anything_is_written(staged, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["agents", "generate", "--staged", str(staged), "--output", str(out), "--model", "mockllm/model"]
    assert main([*args, "--max-cost", "5"]) == 1
    assert "--max-cost needs the prices" in capsys.readouterr().err and not out.exists()


def test_a_staged_workspace_changed_after_its_audit_stops_the_run_before_any_request(staged, tmp_path, capsys):
    (staged / SECOND / "docs" / "business_requirement.md").write_text("the optimum is 8140\n")
    with ScriptedOpenAI(route=Router()) as server:
        assert main(command(staged, tmp_path / "out", server)) == 1
        assert server.count == 0
    errors = [line for line in capsys.readouterr().err.splitlines() if " INFO " not in line]
    assert len(errors) == 1 and "changed since it was staged" in errors[0]
    assert not (tmp_path / "out").exists()  # no output of a run that never started


def test_an_unset_key_variable_is_refused_before_anything_is_written(staged, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TCSEXAM_TEST_UNSET_KEY", raising=False)
    out = tmp_path / "out"
    args = ["agents", "generate", "--staged", str(staged), "--output", str(out), "--model", "m"]
    endpoint = ["--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "TCSEXAM_TEST_UNSET_KEY"]
    assert main([*args, *endpoint]) == 1
    assert "TCSEXAM_TEST_UNSET_KEY" in capsys.readouterr().err and not out.exists()
