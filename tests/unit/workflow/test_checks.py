"""The workflow's start-up checks and its failed-job line: `startup.check_sandbox` (once per
run, a failure one line on a local run, a note on a cluster) and `tcsexam job-failed` (the log's
one-line reason on stderr, the command's exit code)."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

from tcsexam.cli import main
from tcsexam.doctor import tools as doctor_tools
from tcsexam.errors import InputError
from tcsexam.jobfail import reason
from tcsexam.workflow import startup


def test_reason_is_the_last_error_line_without_its_stamp(tmp_path):
    log = tmp_path / "run.log"
    log.write_text(
        "2026-12-03T08:11:30Z INFO    tcsexam run: maxcut: sandbox auto -> bwrap\n"
        "2026-12-03T08:11:31Z ERROR   tcsexam run: error: first\n"
        "2026-12-03T08:11:31Z ERROR   tcsexam run: error: task.yaml: instance 'G11': sha256 differs\n"
        "2026-12-03T08:11:32Z INFO    ray head stopped\n"
    )
    assert reason(log) == "tcsexam run: error: task.yaml: instance 'G11': sha256 differs"
    log.write_text("Traceback (most recent call last):\n  File x\nValueError: broken\n\n")
    assert reason(log) == "ValueError: broken"
    log.write_text("")
    assert reason(log) == "no output"
    assert "cannot be read" in reason(tmp_path / "missing.log")


def test_job_failed_prints_one_line_and_keeps_the_exit_code(tmp_path, capsys):
    log = tmp_path / "row.log"
    log.write_text("2026-12-03T08:11:31Z ERROR   tcsexam construction row: error: bad object\n")
    assert main(["job-failed", str(log), "3"]) == 3
    err = capsys.readouterr().err.splitlines()
    assert err == [f"job failed (exit code 3): tcsexam construction row: error: bad object (log: {log})"]
    assert main(["job-failed", str(log), "0"]) == 1  # never a success
    note = json.loads((tmp_path / "row.log.failed").read_text())  # what the workflow's onerror reads
    assert note == {"reason": "tcsexam construction row: error: bad object", "code": 0}


def test_a_missing_proof_checker_is_one_warning_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    """The doctor's own check, on a machine where no coqc is found: named as not installed, with
    the fix, and the run is not stopped."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(doctor_tools, "PROOF_PATH", str(tmp_path))  # nor on the proof checker's PATH
    task = SimpleNamespace(coq_version="8.16")
    plan = SimpleNamespace(
        online=True,
        run={"sandbox": "apptainer"},  # not on this PATH either: no coqc inside a sandbox
        proof_runs=lambda: [SimpleNamespace(item="t")],
        proof_task=lambda item: task,
    )
    lines = startup.check_tools(plan)
    assert len(lines) == 1 and "coqc: not installed" in lines[0] and "make setup-coq" in lines[0], lines
    assert capsys.readouterr().err.strip() == lines[0]
    assert startup.check_tools(SimpleNamespace(online=True, proof_runs=lambda: [])) == []


def test_keep_going_sets_the_settings_and_the_scheduler_that_read_them(capsys):
    workflow = SimpleNamespace(
        execution_settings=SimpleNamespace(keep_going=False), scheduler=SimpleNamespace(keepgoing=False)
    )
    assert startup.keep_going(workflow)
    assert workflow.execution_settings.keep_going and workflow.scheduler.keepgoing
    assert not startup.keep_going(SimpleNamespace(execution_settings=None, scheduler=None))
    assert "pass --keep-going" in capsys.readouterr().err


def test_prepare_on_a_cluster_only_notes_what_the_submit_host_lacks(monkeypatch, capsys, tmp_path):
    """The Snakefile's workflow.local_exec says True while it is read, whatever the executor: the
    arguments decide, so a login node without a working sandbox or proof checker still submits."""
    from pathlib import Path

    from tcsexam.campaign.planner import load_config
    from tcsexam.workflow import batching

    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)
    monkeypatch.setenv(batching.ENV, "unset")  # prepare() hands its decision down here: restored after
    config = load_config(root / "config" / "test" / "config.yaml", root)
    config = {**config, "results_dir": str(tmp_path / "results")}
    tools = []

    def refuse(name, allow_unsandboxed=False, **kw):
        raise InputError("sandbox auto: no sandbox for untrusted candidates works here (bwrap: ...)")

    monkeypatch.setattr(startup, "choose_sandbox", refuse)
    monkeypatch.setattr(startup, "check_tools", lambda plan: tools.append(plan) or [])
    startup.prepare(config, str(root), argv=["snakemake", "-n", "--executor", "slurm", "--jobs", "2"], local_exec=True)
    assert "note: on this submit host: sandbox auto" in capsys.readouterr().err and tools == []
    with pytest.raises(SystemExit) as stop:
        startup.prepare(config, str(root), argv=["snakemake", "-n", "--cores", "2"], local_exec=True)
    assert stop.value.code == 1 and "error: config run.sandbox" in capsys.readouterr().err


def test_a_runs_tool_checks_go_on_while_snakemake_builds_the_dag(monkeypatch, tmp_path):
    """In a run, prepare() returns while Coq and the DRAT checker are still being checked (a
    second of subprocesses beside Snakemake's DAG); `onstart` waits for them before any job."""
    import threading
    from pathlib import Path

    from tcsexam.campaign.planner import load_config
    from tcsexam.workflow import batching

    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)
    monkeypatch.setenv(batching.ENV, "unset")
    config = {**load_config(root / "config" / "test" / "config.yaml", root), "results_dir": str(tmp_path / "r")}
    release, done = threading.Event(), []

    def slow_checks(plan):
        assert release.wait(30)
        done.append(plan)
        return []

    monkeypatch.setattr(startup, "check_sandbox", lambda plan, local_exec=True: None)
    monkeypatch.setattr(startup, "check_tools", slow_checks)
    monkeypatch.setattr(startup, "start_fork_server", lambda log, plan=None: None)  # its own test below
    plan = startup.prepare(config, str(root), argv=["snakemake", "--cores", "2"], local_exec=True)
    assert done == []  # prepare() did not wait
    release.set()
    startup.finish_tool_checks()
    assert done == [plan]
    startup.finish_tool_checks()  # twice (onstart, then at exit): nothing to wait for


def test_a_run_starts_its_fork_server_while_the_snakefile_is_read(monkeypatch, tmp_path):
    """prepare() starts the run's fork server (config run.fork_server), so that it has loaded its
    modules by the first job; never in a dry run, a command that runs nothing, a job step, with
    the server switched off, or while another Snakemake holds the working directory."""
    from pathlib import Path

    from tcsexam.campaign.planner import load_config
    from tcsexam.workflow import batching

    root = Path(__file__).resolve().parents[3]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # its own .snakemake: the lock below is this test's
    monkeypatch.setenv(batching.ENV, "unset")
    config = {**load_config(root / "config" / "test" / "config.yaml", root), "results_dir": str(tmp_path / "r")}
    started = []
    monkeypatch.setattr(startup, "check_sandbox", lambda plan, local_exec=True: None)
    monkeypatch.setattr(startup, "start_tool_checks", lambda plan: None)
    monkeypatch.setattr(startup, "heal", lambda plan, dry_run: SimpleNamespace(lines=lambda: []))
    monkeypatch.setattr(startup, "ensure_key", lambda root: None)
    monkeypatch.setattr(startup, "start_fork_server", lambda log, plan=None: started.append((log, plan)))

    def prepare(argv, main_process=True, **run):
        started.clear()
        conf = {**config, "run": {**config["run"], **run}}
        startup.prepare(conf, str(root), argv=["snakemake", *argv], main_process=main_process, local_exec=True)
        return started

    [(log, plan)] = prepare(["--cores", "2"])
    assert log == f"{tmp_path / 'r'}/.fork-server.log" and plan.results == str(tmp_path / "r")
    assert prepare(["-n", "--cores", "2"]) == []
    assert prepare(["--lint"]) == []
    assert prepare(["--cores", "1"], main_process=False) == []
    assert prepare(["--cores", "2"], fork_server=False) == []
    (work / ".snakemake" / "locks").mkdir(parents=True)
    (work / ".snakemake" / "locks" / "0.input.lock").touch()
    assert prepare(["--cores", "2"]) == []


def _plan(**run):
    return SimpleNamespace(online=False, run={"sandbox": "auto", **run})


def test_check_sandbox_stops_a_local_run_and_notes_on_a_cluster(monkeypatch, capsys):
    calls = []

    def refuse(name, allow_unsandboxed=False, **kw):
        calls.append((name, allow_unsandboxed))
        raise InputError("sandbox auto: no sandbox for untrusted candidates works here (bwrap: ...)")

    monkeypatch.setattr(startup, "choose_sandbox", refuse)
    with pytest.raises(SystemExit) as stop:
        startup.check_sandbox(_plan(allow_unsandboxed=True))
    assert stop.value.code == 1 and calls == [("auto", True)]
    line = capsys.readouterr().err.strip()
    assert line.startswith("tcsexam: error: config run.sandbox: sandbox auto: no sandbox") and "\n" not in line
    startup.check_sandbox(_plan(), local_exec=False)  # a cluster: the nodes choose
    assert "note: on this submit host" in capsys.readouterr().err
    startup.check_sandbox(SimpleNamespace(online=True, run={}))  # online: no candidate runs
    assert len(calls) == 2


def test_onstart_arms_the_ray_head_in_process_and_a_folder_it_cannot_write_stops_the_run(tmp_path, capsys):
    from tcsexam.runner.ray import head

    state = tmp_path / "results" / ".ray-head"
    startup.arm_ray_head(str(state), 2)
    assert head.armed(state) and (state / head.ON_DEMAND_FILE).read_text() == "2\n"
    assert capsys.readouterr().err == ""  # no head alive: nothing reused, nothing said
    head.stop_detached(str(state))  # onsuccess's stop, none running: only disarmed
    assert not head.armed(state)
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(SystemExit) as stop:
        startup.arm_ray_head(str(locked / ".ray-head"), 2)
    line = capsys.readouterr().err.strip()
    assert stop.value.code == 1 and line.startswith("tcsexam: error: ray-head: ") and "\n" not in line


def test_a_local_run_schedules_when_jobs_end_not_every_second():
    limiter = object()
    local = SimpleNamespace(local_exec=True, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert startup.local_scheduling(local) and local.scheduler.job_rate_limiter is None
    assert not startup.local_scheduling(local)  # nothing left to drop
    cluster = SimpleNamespace(local_exec=False, scheduler=SimpleNamespace(job_rate_limiter=limiter))
    assert not startup.local_scheduling(cluster) and cluster.scheduler.job_rate_limiter is limiter
    assert not startup.local_scheduling(SimpleNamespace(local_exec=True))  # a Snakemake without one
    # the pinned Snakemake's scheduler has the attribute this drops, and re-schedules through it
    import inspect

    from snakemake.scheduling.job_scheduler import JobScheduler

    source = inspect.getsource(JobScheduler)
    assert (
        "self.job_rate_limiter = (" in source
        and "self._schedule_reevalutation(self.job_rate_limiter.timespan)" in source
    )
