"""The flat interface: the reply format `orspace-reply-v1`, its parser and writer, and the Inspect
solver driven through a real scripted OpenAI-compatible HTTP server on the bundled OR-Space demo
staged with `--interface flat`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.agents.accounting import GenerationRecord, StopReason, read_generation, write_generation
from tcsexam.agents.flat import (
    REPLY_FORMAT,
    SUBMISSION_FOLDERS,
    FlatReply,
    ReplyError,
    apply_reply,
    parse_reply,
    reply_instructions,
    workspace_question,
)
from tcsexam.agents.providers import ModelConfig
from tcsexam.orspace.conditions import Condition
from tcsexam.orspace.stage import stage

sys.path.insert(0, str(Path(__file__).parent))
from openai_server import ScriptedOpenAI, completion  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """import json, os
print("Status: Optimal")
print("OBJECTIVE_VALUE: 42.5")
"""


def build_reply(path="src/main.py", body=PROGRAM, chatter=True):
    text = f"<<<FILE {path}>>>\n{body}<<<END {path}>>>\n"
    return ("Here is my model.\n\n" + text + "\nDone.") if chatter else text


# --- the format ------------------------------------------------------------------------------


def test_a_build_reply_gives_its_files_verbatim():
    tricky = 'x = "<<<END src/other.py>>>"\n<<<FILE src/inner.py>>>\nprint(1)\n'
    reply = parse_reply(build_reply() + "\n" + build_reply("src/util/helpers.py", tricky, chatter=False), "build")
    assert reply.files == {"src/main.py": PROGRAM.encode(), "src/util/helpers.py": tricky.encode()}
    assert reply.answer is None


def test_a_fenced_body_loses_its_fence_and_crlf_is_read():
    text = "<<<FILE revised/src/model.py>>>\r\n```python\r\nprint(2)\r\n```\r\n<<<END revised/src/model.py>>>  \r\n"
    assert parse_reply(text, "revise").files == {"revised/src/model.py": b"print(2)\n"}


def test_the_markdown_spelling_reads_the_same():
    text = (
        "Plan first.\n### FILE: `src/main.py`\n\n```python\n" + PROGRAM + "```\n"
        "## FILE: src/util.py\n~~~~\nFENCE = '```'\n~~~~\n"
        "### File: notes about the model (commentary, not a block)\n"
    )
    assert parse_reply(text, "build").files == {"src/main.py": PROGRAM.encode(), "src/util.py": b"FENCE = '```'\n"}
    mixed = build_reply("revised/src/a.py", "A = 1\n") + "\n### FILE: revised/src/b.py\n```\nB = 2\n```\n"
    assert set(parse_reply(mixed, "revise").files) == {"revised/src/a.py", "revised/src/b.py"}
    answer = "### ANSWER\n```\nThe oven binds.\n```"
    assert parse_reply(answer, "explain").answer == "The oven binds."
    rows = '### ANSWERS\n```jsonl\n{"workspace_id": "or_space_101_explain", "answer": "The oven binds."}\n```'
    assert parse_reply(rows, "explain", "or_space_101_explain").answer == "The oven binds."
    # a heading that merely looks similar is commentary
    assert parse_reply("### Answer\nsee below\n<<<ANSWER>>>\nok\n<<<END ANSWER>>>", "explain").answer == "ok"


@pytest.mark.parametrize(
    ("mode", "text", "why"),
    [
        ("build", "### FILE: src/main.py\nprint(1)\n", "is not followed by a fenced code block"),
        ("build", "### FILE: src/main.py\n```python\nprint(1)\n", "is not closed by ```"),
        ("build", "### FILE: ../main.py\n```\nx\n```", "'..'"),
        ("build", "### ANSWER\n```\nx\n```", "no answer block"),
        ("explain", "### ANSWER\n```\n\n```", "answer block is empty"),
        ("explain", '### ANSWERS\n```\n{"workspace_id": "other", "answer": "a"}\n```', "is for other, not w"),
        ("explain", "### ANSWERS\n```\nnot json\n```", "is not JSON"),
        ("explain", '### ANSWERS\n```\n{"workspace_id": "w"}\n```', "needs string workspace_id and answer"),
        ("explain", "### ANSWERS\n```\n\n```", "holds 0 rows"),
    ],
)
def test_a_broken_markdown_spelling_is_a_parse_error(mode, text, why):
    with pytest.raises(ReplyError) as err:
        parse_reply(text, mode, "w")
    assert why in str(err.value)


def test_an_explain_reply_gives_its_answer():
    text = "Thinking...\n<<<ANSWER>>>\nThe capacity constraint of plant A binds (dual 12.5).\n<<<END ANSWER>>>\n"
    assert parse_reply(text, "explain").answer == "The capacity constraint of plant A binds (dual 12.5)."


@pytest.mark.parametrize(
    ("mode", "text", "why"),
    [
        ("build", "", "empty"),
        ("build", "I think the answer is 42.", "no file block"),
        ("build", "```python\nprint(1)\n```", "no file block"),
        ("build", "<<<FILE src/main.py>>>\nprint(1)\n", "has no <<<END src/main.py>>>"),
        ("build", "<<<FILE src/main.py>>>\nprint(1)\n<<<END src/other.py>>>\n", "has no <<<END src/main.py>>>"),
        ("build", build_reply("/etc/passwd"), "absolute"),
        ("build", build_reply("src/../../escape.py"), "'..'"),
        ("build", build_reply("src//x.py"), "empty, '.' or '..'"),
        ("build", build_reply("data/general_parameters.csv"), "build files go under src/"),
        ("build", build_reply("src"), "build files go under src/"),
        ("revise", build_reply("src/main.py"), "revise files go under revised/src/"),
        ("revise", build_reply("revised\\src\\x.py"), "backslash"),
        ("build", build_reply() + build_reply(), "given twice"),
        ("build", build_reply() + "\n<<<ANSWER>>>\nx\n<<<END ANSWER>>>\n", "no answer block"),
        ("build", "<<<END src/main.py>>>\n", "closes no open block"),
        ("explain", build_reply(), "no file blocks"),
        ("explain", "The answer is 3.", "no answer block"),
        ("explain", "<<<ANSWER>>>\n   \n<<<END ANSWER>>>", "answer block is empty"),
        ("explain", "<<<ANSWER>>>\na\n<<<END ANSWER>>>\n<<<ANSWER>>>\nb\n<<<END ANSWER>>>", "second answer"),
    ],
)
def test_a_broken_reply_is_a_parse_error_that_says_why(mode, text, why):
    with pytest.raises(ReplyError, match=None) as err:
        parse_reply(text, mode)
    assert why in str(err.value)


def test_the_instructions_state_the_task_like_the_filesystem_agent_is_told_it():
    build = reply_instructions("build", time_limit_s=60)
    assert "wall-clock limit of 60 s" in build and "ORSPACE_RESULT_FILE" in build and "OBJECTIVE_VALUE" in build
    assert "limit of 180 s" in reply_instructions("revise") and "original/" in reply_instructions("revise")
    assert "Question: Which constraint binds?" in reply_instructions("explain", question="Which constraint binds?")
    assert "(in metadata.json)" in reply_instructions("explain")
    assert workspace_question("no flat prompt at all") is None


def test_the_instructions_state_the_format_for_each_mode():
    for mode, folder in SUBMISSION_FOLDERS.items():
        text = reply_instructions(mode)
        assert REPLY_FORMAT in text and f"<<<FILE {folder}/main.py>>>" in text and "<<<ANSWER>>>" not in text
    explain = reply_instructions("explain")
    assert "<<<ANSWER>>>" in explain and "<<<END ANSWER>>>" in explain and "<<<FILE" not in explain


# --- writing into the workspace -----------------------------------------------------------------


def test_files_are_written_only_under_the_submission_folder(tmp_path):
    (tmp_path / "ws" / "src").mkdir(parents=True)
    reply = parse_reply(build_reply() + build_reply("src/pkg/data.py", "X = 1\n"), "build")
    assert apply_reply(reply, tmp_path / "ws", "build") == ["src/main.py", "src/pkg/data.py"]
    assert (tmp_path / "ws" / "src" / "main.py").read_text() == PROGRAM
    assert (tmp_path / "ws" / "src" / "pkg" / "data.py").read_text() == "X = 1\n"


def test_a_link_in_the_way_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "ws" / "src").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "ws" / "src" / "pkg").symlink_to(outside)
    reply = parse_reply(build_reply("src/a.py", "A\n") + build_reply("src/pkg/evil.py", "E\n"), "build")
    with pytest.raises(ReplyError, match="is a link"):
        apply_reply(reply, tmp_path / "ws", "build")
    assert list(outside.iterdir()) == [] and not (tmp_path / "ws" / "src" / "a.py").exists()
    (tmp_path / "ws" / "src" / "pkg").unlink()
    (tmp_path / "ws" / "src" / "b.py").symlink_to(outside / "b.py")
    with pytest.raises(ReplyError, match="is a link"):
        apply_reply(FlatReply(files={"src/b.py": b"B\n"}), tmp_path / "ws", "build")
    assert not (outside / "b.py").exists()


def test_a_hand_made_reply_with_a_bad_path_is_refused_by_the_writer(tmp_path):
    (tmp_path / "ws" / "src").mkdir(parents=True)
    with pytest.raises(ReplyError, match="'..'"):
        apply_reply(FlatReply(files={"src/../../x.py": b""}), tmp_path / "ws", "build")


# --- the solver through a real OpenAI-compatible server ------------------------------------------


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("flat") / "staged"
    stage(
        ROOT / "solvers" / "orspace-demo",
        out,
        condition=Condition(interface="flat"),
        oracle_root=ROOT / "references" / "orspace",
        workspace_ids=["or_space_101_build", "or_space_101_revise", "or_space_101_explain"],
    )
    return out


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def run_flat(staged: Path, out: Path, wid: str, server: ScriptedOpenAI, env_key: str | None = None):
    """One flat sample through Inspect and the scripted server; returns (record, sample)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample

    from tcsexam.agents.flat import flat_solver

    mode = wid.rsplit("_", 1)[1]
    workspace = out / "workspaces" / wid
    shutil.copytree(staged / wid, workspace)
    meta = {
        "workspace_id": wid,
        "mode": mode,
        "interface": "flat",
        "condition": "revise-all_flat_both",
        "workspace_dir": str(workspace),
        "flat_reply_file": str(out / "replies" / f"{wid}.txt"),
    }
    (out / "replies").mkdir(parents=True, exist_ok=True)
    prompt = (staged / "prompts" / f"{wid}.txt").read_text()
    cfg = ModelConfig(model="scripted-coder", name="scripted", base_url=server.base_url, api_key_env=env_key)
    logs = eval(
        Task(dataset=[Sample(input=prompt, id=wid, metadata=meta)], solver=flat_solver()),
        model=cfg.inspect_model(),
        log_dir=str(out / "logs"),
        display="none",
        fail_on_error=False,
        **cfg.eval_kwargs(),
    )
    sample = logs[0].samples[0]
    record = GenerationRecord.from_sample(sample, cfg, (1.0, 2.0), log_file=logs[0].location)
    write_generation(out / "generations" / wid / "generation.json", record)
    return read_generation(out / "generations" / wid / "generation.json"), sample


def test_a_flat_build_reply_becomes_a_runnable_program(staged, tmp_path):
    with ScriptedOpenAI([completion(build_reply(), prompt_tokens=1500, completion_tokens=80)]) as server:
        record, sample = run_flat(staged, tmp_path, "or_space_101_build", server)
        assert server.count == 1
        sent = server.requests[0]["body"]
    # the staged prompt and the one reply format reached the model, no tools
    user = sent["messages"][-1]["content"]
    user = user if isinstance(user, str) else "".join(part.get("text", "") for part in user)
    assert user.startswith("# OR-Space workspace or_space_101_build\n# format: orspace-flat-v1")
    assert REPLY_FORMAT in user and "<<<FILE src/main.py>>>" in user and not sent.get("tools")
    program = tmp_path / "workspaces" / "or_space_101_build" / "src" / "main.py"
    assert program.read_text() == PROGRAM
    ran = subprocess.run([sys.executable, "main.py"], cwd=program.parent, capture_output=True, text=True, check=True)
    assert "OBJECTIVE_VALUE: 42.5" in ran.stdout
    assert record.stop_reason == StopReason.ANSWERED and record.final and not record.infrastructure
    assert record.files_written == ["src/main.py"] and record.reply_format == REPLY_FORMAT
    assert (record.input_tokens, record.output_tokens, record.turns, record.tool_calls) == (1500, 80, 1, 0)
    assert record.cost_usd == pytest.approx(1500 / 1e6 * 1.0 + 80 / 1e6 * 2.0)
    assert record.model["provider"] == "openai-compatible" and record.model["base_url"] == server.base_url
    assert (tmp_path / "replies" / "or_space_101_build.txt").read_text() == build_reply()


def test_a_broken_flat_reply_is_recorded_as_parse_error_with_its_raw_text(staged, tmp_path):
    broken = "Sure! Here is the model:\n```python\nprint('Status: Optimal')\n```\n<<<FILE src/main.py>>>\nx = 1\n"
    with ScriptedOpenAI([completion(broken)]) as server:
        record, sample = run_flat(staged, tmp_path, "or_space_101_revise", server)
    assert record.stop_reason == StopReason.PARSE_ERROR and record.final and not record.infrastructure
    assert "has no <<<END src/main.py>>>" in record.stop_detail
    assert record.files_written is None
    # nothing was written into the workspace, and the raw reply is kept twice
    written = tmp_path / "workspaces" / "or_space_101_revise"
    assert tree(written) == tree(staged / "or_space_101_revise")
    assert (tmp_path / "replies" / "or_space_101_revise.txt").read_text() == broken
    assert sample.output.completion == broken
    data = json.loads((tmp_path / "generations" / "or_space_101_revise" / "generation.json").read_text())
    assert data["schema_version"] == 1 and data["stop_reason"] == "parse_error" and data["infrastructure"] is False


def test_a_reply_cut_off_by_the_token_cap_says_so(staged, tmp_path):
    cut = "<<<FILE src/main.py>>>\nimport pulp\nprob = pulp.LpProblem("
    with ScriptedOpenAI([completion(cut, finish_reason="length")]) as server:
        record, _ = run_flat(staged, tmp_path, "or_space_101_build", server)
    assert record.stop_reason == StopReason.PARSE_ERROR
    assert record.stop_detail.endswith("(the reply was cut off: max_tokens)")


def test_a_flat_explain_reply_gives_the_answer_and_the_key_stays_out_of_every_file(staged, tmp_path, monkeypatch):
    from inspect_ai.log import read_eval_log

    secret = "sk-flat-test-3f9a7c1e5d"
    monkeypatch.setenv("TCSEXAM_TEST_FLAT_KEY", secret)
    answer = "Plant A's capacity binds; its dual is 12.5 per unit."
    with ScriptedOpenAI([completion(f"<<<ANSWER>>>\n{answer}\n<<<END ANSWER>>>")]) as server:
        record, sample = run_flat(staged, tmp_path, "or_space_101_explain", server, env_key="TCSEXAM_TEST_FLAT_KEY")
        assert server.requests[0]["headers"]["authorization"] == f"Bearer {secret}"
        sent = server.requests[0]["body"]["messages"][-1]["content"]
    # the workspace's question is repeated after the files, with the answer format
    tail = sent.rsplit("# Your reply (format orspace-reply-v1)", 1)[1]
    assert "Question: Why does the revised plan earn less than the original one?" in tail
    assert record.stop_reason == StopReason.ANSWERED and sample.store["tcsexam:answer"] == answer
    assert record.model["api_key_env"] == "TCSEXAM_TEST_FLAT_KEY"
    needle = secret.encode()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), path
            if path.suffix == ".eval":
                assert secret not in read_eval_log(str(path)).model_dump_json(), path
    assert secret not in json.dumps(record.to_json())
    assert os.environ["TCSEXAM_TEST_FLAT_KEY"] == secret
