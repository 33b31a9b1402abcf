"""OR-Space execute through the runner's RecordStore and pool: resume, set-aside, retries,
infrastructure_error (real programs under the local sandbox's limits)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.orspace import execute as orspace_execute
from tcsexam.orspace.execute import DEFAULT_LIMITS, DEFAULT_RUN, ExecuteSettings, execute
from tcsexam.orspace.record import WorkspaceRecord
from tcsexam.records.digest import digest_problem
from tcsexam.records.key import KEY_FILE, find_key
from tcsexam.records.store import SET_ASIDE_DIR
from tcsexam.runner.engine.contract import DEFAULT_MAX_RETRIES
from tcsexam.runner.limiter import LaunchError

PROGRAM = "print('Status: Optimal')\nprint('OBJECTIVE_VALUE: {value}')\n"
SETTINGS = ExecuteSettings(limits=replace(DEFAULT_LIMITS, wall_s=60.0), run=replace(DEFAULT_RUN, sandbox="local"))


def workspaces(root: Path, values: dict[str, float]) -> Path:
    for wid, value in values.items():
        src = root / wid / "src"
        src.mkdir(parents=True)
        (src / "main.py").write_text(PROGRAM.format(value=value))
    return root


def predictions(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def test_resume_reuses_matching_records_and_sets_a_damaged_one_aside(tmp_path):
    root = workspaces(tmp_path / "ws", {"or_space_001_build": 1.5, "or_space_002_build": 7.0})
    out = tmp_path / "out"
    first = execute(root, out, SETTINGS)
    assert first["executed"] == 2 and first["reused"] == 0
    first_bytes = (out / "predictions.jsonl").read_bytes()
    assert predictions(out)[0] == {
        "workspace_id": "or_space_001_build",
        "status": "Optimal",
        "objective": 1.5,
        "failure_mode": None,
        "solver": "unknown",
        "condition": None,
    }
    stored = json.loads((out / "records" / "or_space_001_build.json").read_text())
    assert digest_problem(stored, find_key(out)) is None and stored["key"].startswith("sha256:")
    assert stored["digest"].startswith("hmac-sha256:") and (out / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert WorkspaceRecord.from_dict(stored).objective == 1.5

    again = execute(root, out, SETTINGS)
    assert (again["executed"], again["reused"], again["set_aside"]) == (0, 2, 0)
    assert (out / "predictions.jsonl").read_bytes() == first_bytes

    # a record edited after it was written fails its digest: set aside (kept), its workspace reruns
    damaged = out / "records" / "or_space_002_build.json"
    damaged.write_text(damaged.read_text().replace("7.0", "8.0"))
    tampered = damaged.read_text()
    third = execute(root, out, SETTINGS)
    assert (third["executed"], third["reused"], third["set_aside"]) == (1, 1, 1)
    kept = list((out / "records" / SET_ASIDE_DIR).glob("*/or_space_002_build.json"))
    assert len(kept) == 1 and kept[0].read_text() == tampered
    reasons = (kept[0].parent / "reasons.txt").read_text()
    assert "digest-mismatch" in reasons
    assert (out / "predictions.jsonl").read_bytes() == first_bytes

    # a changed workspace (another key) runs again; its old record is set aside too
    (root / "or_space_001_build" / "src" / "main.py").write_text(PROGRAM.format(value=2.5))
    fourth = execute(root, out, SETTINGS)
    assert (fourth["executed"], fourth["reused"]) == (1, 1)
    assert predictions(out)[0]["objective"] == 2.5
    assert any((out / "records" / SET_ASIDE_DIR).glob("*/or_space_001_build.json"))


class FlakySandbox:
    """Fails to start the program (a harness fault) the first `failures` times, then runs it."""

    def __init__(self, real, failures: int):
        self.real, self.failures, self.calls = real, failures, 0

    def run(self, argv, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise LaunchError("no fork for you", candidate_fault=False)
        return self.real.run(argv, **kwargs)


@pytest.fixture
def flaky(monkeypatch):
    """`install(failures)`: every later `execute` runs its programs in a FlakySandbox around the
    sandbox it chose (appended to the list returned)."""
    boxes = []
    original = orspace_execute._resolved

    def install(failures: int):
        def resolved(settings, progress):
            settings, image, box = original(settings, progress)
            boxes.append(FlakySandbox(box, failures))
            return settings, image, boxes[-1]

        monkeypatch.setattr(orspace_execute, "_resolved", resolved)
        return boxes

    return install


def test_an_infrastructure_failure_is_retried_then_recorded_as_infrastructure_error(tmp_path, flaky):
    root = workspaces(tmp_path / "ws", {"or_space_001_build": 1.0})
    out = tmp_path / "out"
    boxes = flaky(failures=1000)
    with pytest.raises(InputError, match=rf"harness failure.*\(after {DEFAULT_MAX_RETRIES + 1} tries\)"):
        execute(root, out, SETTINGS)
    assert boxes[0].calls == DEFAULT_MAX_RETRIES + 1
    record = json.loads((out / "records" / "or_space_001_build.json").read_text())
    assert record["failure_mode"] == "infrastructure_error" and record["status"] is None
    assert record["tries"] == DEFAULT_MAX_RETRIES + 1 and record["mode"] == "build" and record["key"]
    assert record["message"].startswith("harness could not start the program: no fork for you")
    assert digest_problem(record, find_key(out)) is None
    assert not (out / "predictions.jsonl").exists()

    # an infrastructure_error record is never reused: the rerun runs it again
    boxes.clear()
    flaky(failures=0)
    rerun = execute(root, out, SETTINGS)
    assert (rerun["executed"], rerun["reused"]) == (1, 0)
    assert predictions(out)[0]["failure_mode"] is None


def test_a_retry_that_succeeds_records_the_program_outcome(tmp_path, flaky):
    root = workspaces(tmp_path / "ws", {"or_space_001_build": 4.0})
    boxes = flaky(failures=DEFAULT_MAX_RETRIES)
    summary = execute(root, tmp_path / "out", SETTINGS)
    assert summary["failure_modes"] == {} and boxes[0].calls == DEFAULT_MAX_RETRIES + 1
    record = json.loads((tmp_path / "out" / "records" / "or_space_001_build.json").read_text())
    assert record["status"] == "Optimal" and record["tries"] == DEFAULT_MAX_RETRIES + 1


def test_a_harness_exception_becomes_a_record_not_a_crash(tmp_path, monkeypatch):
    root = workspaces(tmp_path / "ws", {"or_space_001_build": 1.0})

    def boom(ctx, wid):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(orspace_execute, "run_workspace", boom)
    with pytest.raises(InputError, match="disk on fire"):
        execute(root, tmp_path / "out", SETTINGS)
    record = json.loads((tmp_path / "out" / "records" / "or_space_001_build.json").read_text())
    assert record["failure_mode"] == "infrastructure_error" and record["tries"] == DEFAULT_MAX_RETRIES + 1


def test_a_bad_placeholder_is_an_input_error_before_anything_runs(tmp_path):
    root = workspaces(tmp_path / "ws", {"or_space_001_build": 1.0, "or_space_002_build": 2.0})
    (root / "or_space_002_build" / "submission.yaml").write_text("command: ['{python}', '{nope}']\n")
    with pytest.raises(InputError, match=r"submission.yaml: bad placeholder"):
        execute(root, tmp_path / "out", SETTINGS)
    assert not (tmp_path / "out" / "records").exists()


def _marked(marker: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    if marker.encode() in fh.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def _ancestry(pid: int) -> list[str]:
    """A surviving program and its ancestors (pid, state, age, command line), for the failure message."""
    import psutil

    chain = []
    try:
        proc = psutil.Process(pid)
        while proc is not None:
            age = time.time() - proc.create_time()
            chain.append(f"{proc.pid} {proc.status()} {age:.0f}s {' '.join(proc.cmdline())[:160]}")
            proc = proc.parent()
    except psutil.Error as exc:
        chain.append(f"({type(exc).__name__})")
    return chain


def _wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.mark.slow
def test_sigterm_stops_the_ray_pool_and_its_programs(tmp_path):
    """A cancelled job (SIGTERM) ends `orspace execute`, and no program of it runs on."""
    marker = f"orspace-sigterm-{uuid.uuid4().hex}"
    root = tmp_path / "ws"
    for wid in ("or_space_001_build", "or_space_002_build"):
        (root / wid / "src").mkdir(parents=True)
        (root / wid / "src" / "main.py").write_text("import time\ntime.sleep(600)\n")
        (root / wid / "submission.yaml").write_text(f"command: ['{{python}}', 'main.py', '{marker}']\n")
    cli = subprocess.Popen(
        [sys.executable, "-m", "tcsexam", "orspace", "execute", "--workspaces", str(root)]
        + ["--output-dir", str(tmp_path / "out"), "--sandbox", "local", "--workers", "2", "--time-limit", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        started = _wait_for(lambda: len(_marked(marker)) >= 2, 180)
        cli.send_signal(signal.SIGTERM)
        output = cli.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        if cli.poll() is None:
            cli.kill()
    assert started, output
    assert _wait_for(lambda: not _marked(marker), 60), ([_ancestry(pid) for pid in _marked(marker)], output)
    assert cli.returncode != 0, output  # (Ray's driver handler makes SIGTERM a SystemExit)
    assert not (tmp_path / "out" / "predictions.jsonl").exists()
