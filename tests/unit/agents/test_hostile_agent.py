"""A scripted hostile agent, through `tcsexam agents generate` and the real project sandbox: it
tries to read the oracle and the staged folder, write outside its workspace (shell and editor,
through `..`, an absolute path and a symbolic link), reach a TCP server of the host, fork without
bound and leave processes running after its calls. All of it is contained, and the transcript
(the .eval log) shows each refusal. Runs as root and as an unprivileged user (CI's `tester`)."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import psutil
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import (  # noqa: E402
    ORACLE,
    ScriptedAgent,
    mock_config,
    sandbox_config_or_skip,
    staged_demo,
    tool_outputs,
)

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.generate import GenerationSettings, generate  # noqa: E402
from tcsexam.agents.tasks import AgentLimits  # noqa: E402

pytestmark = [pytest.mark.hostile, pytest.mark.slow]
WID = "or_space_101_build"
ORACLE_FILE = ORACLE / "evaluation" / "build_evaluation" / "reference_objectives.csv"
SECRET = "2862.5"  #: the oracle objective of or_space_101_build
SLEEPS = ("3017", "3019")  #: what the agent leaves running (unique sleep lengths)
#: an API key in the harness's environment: never in the agent's
KEY = "sk-hostile-test-9f2c41d7e0"


class Listener:
    """A TCP server on the host's loopback that counts the connections it accepts."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self):
        self.sock.close()


#: what the agent's next call sees of the sleepers it left (no procps needed: minimal images lack it)
SLEEPERS = (
    "import os\n"
    "left = []\n"
    "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n"
    "    except OSError:\n"
    "        continue\n"
    "    if cmd.startswith(b'sleep'):\n"
    "        left.append(cmd)\n"
    "print(left or 'none-left')\n"
)


def hostile_script(staged: Path, outside: Path, port: int) -> list:
    connect = (
        "import socket\n"
        "for host in ('127.0.0.1', '1.1.1.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {port} if host == '127.0.0.1' else 80), timeout=3)\n"
        "        print('CONNECTED', host)\n"
        "    except OSError as exc:\n"
        "        print('no network to', host, exc)\n"
    )
    return [
        ("bash", {"command": f"cat {ORACLE_FILE}; cat {staged}/manifest.json; ls {ORACLE}/evaluation"}),
        (
            "bash",
            {
                "command": f"echo pwned > {outside}/from-bash; echo pwned > ../escaped; echo pwned > /tmp/x && echo tmp-ok"
            },
        ),
        ("text_editor", {"command": "create", "path": "../escaped-editor", "file_text": "pwned"}),
        ("text_editor", {"command": "create", "path": f"{outside}/from-editor", "file_text": "pwned"}),
        ("bash", {"command": f"ln -s {outside} out && ln -s {ORACLE_FILE} oracle.csv && ls -l"}),
        ("text_editor", {"command": "create", "path": "out/through-link", "file_text": "pwned"}),
        ("text_editor", {"command": "view", "path": "oracle.csv"}),
        ("python", {"code": connect}),
        ("bash", {"command": ":(){ :|:& };: ; sleep 60"}),
        (
            "bash",
            {"command": f"nohup sleep {SLEEPS[0]} >/dev/null 2>&1 & setsid sleep {SLEEPS[1]} & echo left running"},
        ),
        ("python", {"code": SLEEPERS}),
        ("bash", {"command": "cat ../escaped ../escaped-editor 2>/dev/null || echo not-persisted"}),
        ("bash", {"command": "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"}),
        ("submit", {"answer": "done"}),
    ]


def left_running() -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if any(cmd == f"sleep {s}" for s in SLEEPS):
            found.append(f"{proc.pid}: {cmd}")
    return found


@pytest.fixture(scope="module", params=["auto", "docker"])
def hostile_run(request, tmp_path_factory):
    """The hostile agent's run under `auto` (bwrap here) and under docker (where an engine and
    the OR-Space image, or $TCSEXAM_ORSPACE_IMAGE, are there; else skipped)."""
    root = tmp_path_factory.mktemp(f"hostile-agent-{request.param}")
    config = sandbox_config_or_skip(sandbox=request.param, call_time_s=6, call_nproc=64, call_mem_mb=512)
    staged = staged_demo(root, [WID])
    outside = root / "outside"
    outside.mkdir()
    outside.chmod(0o1777)  # the host would let anybody write here: only the sandbox stops the agent
    listener = Listener()
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = KEY  # restored below
    agent = ScriptedAgent({WID: hostile_script(staged, outside, listener.port)})
    settings = GenerationSettings(
        staged=staged, output=root / "out", model=mock_config(), sandbox=config, limits=AgentLimits(message_limit=60)
    )
    try:
        summary = generate(settings, model=agent.model())
    finally:
        listener.close()
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before
    yield settings, summary, outside, listener
    for line in left_running():  # never leave them to the next test, whatever happened
        psutil.Process(int(line.split(":")[0])).kill()


def test_the_agent_ends_submitted_and_nothing_outlives_it(hostile_run):
    settings, summary, _, _ = hostile_run
    assert summary["complete"], summary
    assert read_generation(settings.output / "samples" / WID / "generation.json").stop_reason == "submitted"
    assert left_running() == []


def test_the_oracle_and_the_staged_folder_stay_out_of_sight(hostile_run):
    settings, _, _, _ = hostile_run
    reading = tool_outputs(settings.output, WID)[0]
    assert SECRET not in reading and "No such file" in reading
    viewed = tool_outputs(settings.output, WID)[6]
    assert SECRET not in viewed and "symbolic link" in viewed
    assert not any(SECRET in text for text in tool_outputs(settings.output, WID))


def test_nothing_is_written_outside_the_workspace(hostile_run):
    settings, _, outside, _ = hostile_run
    assert list(outside.iterdir()) == []
    outputs = tool_outputs(settings.output, WID)
    assert "No such file" in outputs[1]  # the host folder is not even there (a private /tmp)
    assert "tmp-ok" in outputs[1]  # its own private /tmp works
    # above the workspace: refused (root harness), or the sandbox's private tmpfs, gone after the call
    assert outputs[11].strip() == "not-persisted"
    assert "outside the workspace" in outputs[2] and "outside the workspace" in outputs[3]
    assert "symbolic link" in outputs[5]
    worked = settings.output / "workspaces" / WID
    assert not (worked.parent / "escaped").exists() and not (worked.parent / "escaped-editor").exists()
    # the links it made are not copied out (never followed), and the run says so
    assert not (worked / "out").exists() and not (worked / "oracle.csv").exists()
    left_out = settings.output / "samples" / WID / "left_out.txt"
    assert left_out.read_text().split() == ["oracle.csv", "out"]


def test_no_network_reaches_the_host(hostile_run):
    settings, _, _, listener = hostile_run
    assert listener.accepted == 0
    text = tool_outputs(settings.output, WID)[7]
    assert "CONNECTED" not in text and text.count("no network to") == 2


def test_the_fork_bomb_and_the_leftovers_are_stopped_visibly(hostile_run):
    settings, _, _, _ = hostile_run
    outputs = tool_outputs(settings.output, WID)
    assert "[tcsexam sandbox: the command was stopped" in outputs[8]
    assert "left running" in outputs[9]
    assert outputs[10].strip() == "none-left"  # the next call sees none of what the previous one left
    assert os.getpid() and left_running() == []


def test_the_harness_environment_and_its_keys_stay_out(hostile_run):
    settings, _, _, _ = hostile_run
    seen = tool_outputs(settings.output, WID)[12]
    assert "PATH=" in seen and KEY not in seen and "OPENAI_API_KEY" not in seen
