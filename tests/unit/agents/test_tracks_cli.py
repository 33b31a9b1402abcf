"""`tcsexam agents solve` against a real OpenAI-compatible HTTP server (scripted tool calls): the
proofs land in solvers/<model>/<item>/<attempt>/ with their cost; a provider failure is
infrastructure (no attempt folder, exit 1) and the rerun asks only for that item; a run whose
budget is spent leaves the rest for a rerun; a killed run resumes without asking again for a
finished item; bad input is one line and writes nothing."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import sandbox_config_or_skip, scripted_endpoint_args  # noqa: E402
from openai_server import Entry, ScriptedOpenAI, completion, error, tool_call  # noqa: E402

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.cli import main  # noqa: E402
from tcsexam.proofs import coq  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
ITEM_LINE = re.compile(r"task ([a-z0-9][a-z0-9-]*[a-z0-9])\b")
FIRST, SECOND = "theorem-sum-odds-square", "theorem-gauss-sum"


def proof_steps(item: str) -> list[tuple[str, dict]]:
    proof = (REPO / "solvers" / "demo-strong" / item / "1" / "proof.v").read_text()
    return [
        ("text_editor", {"command": "create", "path": "submission/proof.v", "file_text": proof}),
        ("check_proof", {}),
        ("submit", {"answer": "done"}),
    ]


SCRIPTS = {FIRST: proof_steps(FIRST), SECOND: proof_steps(SECOND)}


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class Router:
    """The next step of the script of the item the request's prompt names; `fail`: items answered
    500; `stall` (item -> seconds): that item's requests held."""

    def __init__(self, fail: set[str] | None = None, stall: dict[str, float] | None = None):
        self.fail, self.stall = fail or set(), stall or {}
        self.asked: list[str] = []

    def __call__(self, body: dict) -> Entry:
        prompt = " ".join(_text(m) for m in body.get("messages", []) if m.get("role") == "user")
        found = ITEM_LINE.search(prompt)
        item = found.group(1) if found else "?"
        self.asked.append(item)
        if item in self.fail:
            return error(500, "scripted outage")
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        name, arguments = SCRIPTS[item][min(step, len(SCRIPTS[item]) - 1)]
        return completion(None, tool_calls=[tool_call(name, arguments)], delay=self.stall.get(item, 0.0))


def command(tmp: Path, server: ScriptedOpenAI, *extra: str) -> list[str]:
    return [
        "agents",
        "solve",
        "--track",
        "theorem",
        "--suite",
        "lite",
        "--items",
        FIRST,
        SECOND,
        "--solvers-dir",
        str(tmp / "solvers"),
        "--output",
        str(tmp / "run"),
        *scripted_endpoint_args(server),
        *extra,
    ]


@pytest.fixture(autouse=True)
def _needs():
    sandbox_config_or_skip()
    if not coq.coqc_version():
        pytest.skip("coqc is not installed here (make setup-coq)")


def test_a_provider_failure_is_infrastructure_and_the_rerun_asks_only_for_it(tmp_path):
    router = Router(fail={SECOND})
    with ScriptedOpenAI(route=router) as server:
        assert main(command(tmp_path, server)) == 1
        attempt = tmp_path / "solvers" / "scripted" / FIRST / "1"
        assert (attempt / "proof.v").is_file()
        record = read_generation(attempt / "generation.json")
        assert record.final and record.stop_reason == "submitted" and record.model["base_url"] == server.base_url
        assert record.tool_calls_by_name["check_proof"] == 1
        failed = read_generation(tmp_path / "run" / "samples" / SECOND / "generation.json")
        assert failed.stop_reason == "model_error" and not failed.final
        assert not (tmp_path / "solvers" / "scripted" / SECOND).exists()  # never passes for the model's work
        summary = json.loads((tmp_path / "run" / "generation.json").read_text())
        assert not summary["complete"] and list(summary["incomplete"]) == [SECOND]

        router.fail, router.asked = set(), []
        assert main(command(tmp_path, server)) == 0
    assert FIRST not in router.asked and router.asked.count(SECOND) == len(SCRIPTS[SECOND])
    verdict = tmp_path / "verdict.json"
    folder = tmp_path / "solvers" / "scripted" / SECOND / "1"
    assert main(["proof", "check", "--task", SECOND, "--submission", str(folder), "--output", str(verdict)]) == 0
    assert json.loads(verdict.read_text())["status"] == "complete"


def test_a_spent_budget_leaves_the_rest_for_a_rerun(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("scripted: {input_per_mtok: 1000, output_per_mtok: 1000}\n")  # 0.12 USD a request
    router = Router()
    with ScriptedOpenAI(route=router) as server:
        assert main(command(tmp_path, server, "--prices", str(prices), "--max-cost", "0.3")) == 1
    assert router.asked == [FIRST] * 3  # the second item started with the budget spent: never asked
    record = read_generation(tmp_path / "solvers" / "scripted" / FIRST / "1" / "generation.json")
    assert record.cost_usd == pytest.approx(0.36)
    budget = read_generation(tmp_path / "run" / "samples" / SECOND / "generation.json")
    assert budget.stop_reason == "cost_limit" and not budget.final
    assert not (tmp_path / "solvers" / "scripted" / SECOND).exists()


def test_an_item_of_another_track_is_one_line_and_nothing_is_written(tmp_path, capsys):
    args = ["agents", "solve", "--track", "construction", "--suite", "lite", "--items", FIRST]
    args += ["--solvers-dir", str(tmp_path / "s"), "--output", str(tmp_path / "r"), "--model", "mockllm/model"]
    assert main([*args, "--model-name", "m"]) == 1
    assert "is not a construction item of suite lite" in capsys.readouterr().err
    assert not (tmp_path / "s").exists() and not (tmp_path / "r").exists()


def test_a_model_label_that_cannot_name_a_folder_is_refused(tmp_path, capsys):
    args = ["agents", "solve", "--track", "theorem", "--suite", "lite", "--items", FIRST]
    args += ["--solvers-dir", str(tmp_path / "s"), "--output", str(tmp_path / "r"), "--model", "mockllm/model"]
    assert main(args) == 1
    assert "--model-name" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--online-records-dir", "online"], "--online-records-dir judges Solver candidates"),
        (["--task-file", "theorem-sum-odds-square"], "--task-file 'theorem-sum-odds-square': give ITEM=FILE"),
        (["--task-file", f"{FIRST}=nowhere/task.yaml"], "nowhere/task.yaml"),
    ],
)
def test_bad_online_and_task_file_flags_are_one_line(tmp_path, capsys, extra, message):
    args = ["agents", "solve", "--track", "theorem", "--suite", "lite", "--items", FIRST, "--model-name", "m"]
    args += ["--solvers-dir", str(tmp_path / "s"), "--output", str(tmp_path / "r"), "--model", "mockllm/model"]
    assert main([*args, *extra]) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "s").exists() and not (tmp_path / "r").exists()


def test_a_killed_run_resumes_without_asking_again_for_a_finished_item(tmp_path):
    router = Router(stall={SECOND: 120.0})
    with ScriptedOpenAI(route=router) as server:
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tcsexam", *command(tmp_path, server)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            record = tmp_path / "solvers" / "scripted" / FIRST / "1" / "generation.json"
            while not (record.is_file() and SECOND in router.asked):  # the first finished, the second asked
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.2)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stderr.close()
        assert router.asked.count(FIRST) == len(SCRIPTS[FIRST])
        assert not (tmp_path / "solvers" / "scripted" / SECOND).exists()

        router.asked.clear()
        router.stall = {}
        assert main(command(tmp_path, server)) == 0
    assert FIRST not in router.asked and router.asked.count(SECOND) == len(SCRIPTS[SECOND])
    summary = json.loads((tmp_path / "run" / "generation.json").read_text())
    assert summary["complete"] and summary["finished"] == 2 and summary["generated_now"] == 1
    for item in (FIRST, SECOND):
        assert (tmp_path / "solvers" / "scripted" / item / "1" / "proof.v").is_file()
