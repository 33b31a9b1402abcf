"""The pool: in-process and Ray fan-out, retries, lost actors (killed for real), the watchdog.

The context here runs a small stand-in for `run_instance` (it sleeps and logs), so these tests
isolate the pool's own behaviour; the real executor runs in test_run_cli.py and the
integration tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tcsexam.records import InstanceRecord
from tcsexam.runner.engine.pool import InProcessPool
from tcsexam.runner.ray.job import start_ray
from tcsexam.runner.ray.pool import RayPool, RayTuning
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.attempt import RunContext, execute_instance
from tcsexam.tasks import load_task


class StandInContext(RunContext):
    """Runs a stand-in for each instance: sleeps `meta.sleep` seconds, logs the call, returns
    `meta.status` (default ok), raises where `meta.raise` says so."""

    def run_one(self, name, scratch):
        assert Path(scratch).is_dir()
        instance = self.instance(name)
        with open(self.candidate["log"], "a") as fh:
            fh.write(f"{instance.name} {os.getpid()}\n")
        time.sleep(float(instance.meta.get("sleep", 0)))
        if instance.meta.get("raise"):
            raise RuntimeError("boom in the harness")
        status = instance.meta.get("status", "ok")
        return InstanceRecord(
            instance=instance.name, status=status, A=float(len(instance.name)), sandbox=self.sandbox.name
        )


def _ctx(tmp_path, rows, context: type[RunContext] = StandInContext) -> RunContext:
    inst = tmp_path / "g.txt"
    inst.write_text("2 1\n1 2 1\n")
    lines = [
        f"id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: 1}}\ninstance_dir: {tmp_path}\ninstances:"
    ]
    for row in rows:
        extra = "".join(f", {k}: {v}" for k, v in row.items() if k != "name")
        lines.append(f"- {{name: {row['name']}, file: g.txt{extra}}}")
    (tmp_path / "t.yaml").write_text("\n".join(lines) + "\n")
    task = load_task(tmp_path / "t.yaml")
    return context(task=task, candidate={"log": str(tmp_path / "exec.log")}, sandbox=get_sandbox("local"), limits=None)


def _log(tmp_path) -> list[str]:
    path = tmp_path / "exec.log"
    return [line.split()[0] for line in path.read_text().splitlines()] if path.exists() else []


def test_execute_instance_turns_harness_exceptions_into_records(tmp_path):
    ctx = _ctx(tmp_path, [{"name": "a", "raise": "true"}, {"name": "b"}])
    rec = execute_instance(ctx, "a")
    assert rec.status == "infrastructure_error" and "boom in the harness" in rec.message
    assert execute_instance(ctx, "b").status == "ok"


def test_in_process_pool_retries_infrastructure_errors(tmp_path):
    ctx = _ctx(
        tmp_path, [{"name": "a"}, {"name": "bad", "status": "infrastructure_error"}, {"name": "c", "status": "timeout"}]
    )
    got = {}
    InProcessPool(ctx, max_retries=2).run(["a", "bad", "c"], lambda n, r, t: got.setdefault(n, (r, t)))
    assert got["a"][0].status == "ok" and got["a"][1] == 1
    assert got["c"][0].status == "timeout"  # a solver failure is never retried
    rec, tries = got["bad"]
    assert rec.status == "infrastructure_error" and tries == 3
    assert "after 3 tries" in rec.message and rec.extra["tries"] == 3
    assert _log(tmp_path) == ["a", "bad", "c", "bad", "bad"]


@pytest.fixture(scope="module")
def ray_2cpus():
    import ray
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the stand-in travels by value
    handle = start_ray(num_cpus=2)
    assert handle.started_here and handle.temp_dir.startswith("/tmp/ray-")
    yield handle
    handle.shutdown()
    assert not ray.is_initialized() and not os.path.exists(handle.temp_dir)


def test_ray_pool_runs_every_instance_on_two_actors(tmp_path, ray_2cpus):
    names = [f"i{k}" for k in range(6)]
    ctx = _ctx(tmp_path, [{"name": n, "sleep": 0.2} for n in names])
    got = {}
    pool = RayPool(ctx, workers=2, max_retries=1)
    try:
        pool.run(names, lambda n, r, t: got.setdefault(n, r))
    finally:
        pool.close()
    assert sorted(got) == names and all(r.status == "ok" for r in got.values())
    pids = {line.split()[1] for line in (tmp_path / "exec.log").read_text().splitlines()}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # two actor processes did the work


def _killer(log: Path, times: int):
    """on_dispatch hook: SIGKILL the actor once it has started instance 'victim' (its line in the
    execution log), so the kill lands mid-run however slowly a busy machine starts the actor."""
    kills = []

    def kill_when_started(pid: int) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and f"victim {pid}\n" not in (log.read_text() if log.exists() else ""):
            time.sleep(0.02)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def hook(name, pid, tries):
        if name == "victim" and len(kills) < times:
            kills.append(pid)
            threading.Thread(target=kill_when_started, args=(pid,), daemon=True).start()

    return hook, kills


def test_ray_pool_replaces_a_killed_actor_and_retries(tmp_path, ray_2cpus):
    ctx = _ctx(tmp_path, [{"name": "a", "sleep": 0.1}, {"name": "victim", "sleep": 5}, {"name": "b", "sleep": 0.1}])
    hook, kills = _killer(tmp_path / "exec.log", times=1)
    got, calls = {}, []
    pool = RayPool(ctx, workers=2, max_retries=2, on_dispatch=hook)
    try:
        pool.run(["a", "victim", "b"], lambda n, r, t: (calls.append(n), got.setdefault(n, (r, t))))
    finally:
        pool.close()
    assert sorted(calls) == ["a", "b", "victim"]  # each once, also what the lost actor had in flight
    assert len(kills) == 1 and pool.lost_actors == 1
    rec, tries = got["victim"]
    assert rec.status == "ok" and tries == 2 and rec.extra["tries"] == 2
    assert got["a"][0].status == "ok" and got["b"][0].status == "ok"
    assert _log(tmp_path).count("victim") == 2


def test_a_lost_actor_that_never_answered_is_cleaned_up_by_the_token_it_was_given(tmp_path, ray_2cpus):
    """An actor killed at once may have started a run before its `where` answer reached the
    driver (seen on a loaded CI machine): the driver still removes its scratch folder, by the
    owner token it gave the actor, not one it had to ask for."""
    import ray

    @ray.remote
    def never_answered():
        raise RuntimeError("lost with its actor")

    ctx = _ctx(tmp_path, [{"name": "victim", "sleep": 60}])
    root = tmp_path / "scratch-root"
    root.mkdir()
    ctx.scratch_root = str(root)
    hook, kills = _killer(tmp_path / "exec.log", times=1)
    got = {}
    pool = RayPool(ctx, workers=1, max_retries=0, on_dispatch=hook)

    def lose_answers(name, pid, tries):
        for actor in pool._where:
            pool._where[actor] = never_answered.remote()
        hook(name, pid, tries)

    pool.on_dispatch = lose_answers
    try:
        pool.run(["victim"], lambda n, r, t: got.setdefault(n, r))
    finally:
        pool.close()
    assert len(kills) == 1 and got["victim"].status == "infrastructure_error"
    assert list(root.iterdir()) == [], "the killed actor's scratch was left behind"


def test_ray_pool_gives_up_after_max_retries(tmp_path, ray_2cpus):
    ctx = _ctx(tmp_path, [{"name": "victim", "sleep": 5}, {"name": "a", "sleep": 0.1}])
    hook, kills = _killer(tmp_path / "exec.log", times=99)
    got = {}
    pool = RayPool(ctx, workers=2, max_retries=1, on_dispatch=hook, tuning=RayTuning(pipeline=1))
    try:
        pool.run(["victim", "a"], lambda n, r, t: got.setdefault(n, (r, t)))
    finally:
        pool.close()
    rec, tries = got["victim"]
    assert rec.status == "infrastructure_error" and tries == 2 and len(kills) == 2
    assert "lost actor" in rec.message and "after 2 tries" in rec.message
    assert got["a"][0].status == "ok"


def test_ray_pool_watchdog_kills_a_stuck_execution(tmp_path, ray_2cpus):
    ctx = _ctx(tmp_path, [{"name": "stuck", "sleep": 120}, {"name": "a"}, {"name": "w1"}, {"name": "w2"}])
    got = {}
    # no wall-clock assertion: the watchdog's own message proves it fired (a 120 s sleep that ran
    # to its end would be `ok`). The deadline counts from the dispatch, so both actors are started
    # first (w1, w2), and it is 30 s: with two busy processes per core (tests/under_load.sh) an 8 s
    # deadline also caught the quick instance on a warm actor.
    pool = RayPool(ctx, workers=2, max_retries=0, watchdog_s=30.0, tuning=RayTuning(poll_s=0.1, pipeline=1))
    try:
        pool.run(["w1", "w2"], lambda n, r, t: got.setdefault(n, r))
        assert len(pool.actors) == 2
        pool.run(["stuck", "a"], lambda n, r, t: got.setdefault(n, r))
    finally:
        pool.close()
    assert got["stuck"].status == "infrastructure_error"
    assert "watchdog" in got["stuck"].message
    assert got["a"].status == "ok", got["a"].message


def _alive_with_arg(arg: str) -> list[int]:
    import psutil

    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if arg in (proc.info["cmdline"] or []) and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc.pid)
    return found


def test_killed_actor_leaves_no_candidate_behind(tmp_path, ray_2cpus):
    """Real executor: the candidate of a killed actor (an orphan) is found and killed."""
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.solver.candidate import load_candidate

    ctx = _ctx(tmp_path, [{"name": "victim"}], RunContext)
    token = f"{time.time_ns() % 10**9}.5"  # a unique sleep argument to find the candidate by
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "solver.yaml").write_text(f'command: ["sleep", "{token}"]\n')
    ctx.candidate = load_candidate(cand)
    ctx.limits = Limits(wall_s=60, mem_mb=512)
    seen_running = []

    def hook(name, pid, tries):
        def kill():
            deadline = time.monotonic() + 120  # a busy machine starts the candidate late
            while not _alive_with_arg(token) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen_running.append(bool(_alive_with_arg(token)))
            os.kill(pid, signal.SIGKILL)

        threading.Thread(target=kill, daemon=True).start()

    got = {}
    pool = RayPool(ctx, workers=1, max_retries=0, on_dispatch=hook)
    try:
        pool.run(["victim"], lambda n, r, t: got.setdefault(n, r))
    finally:
        pool.close()
    assert seen_running == [True]
    assert got["victim"].status == "infrastructure_error"
    # who kills the orphan is a race (the driver's sweep, or the run's own subreaper/sandbox dying
    # with the actor first: `orphans_killed` stays 0 then); what must hold is that none survives
    deadline = time.monotonic() + 60  # a leaked one never goes; a killed one goes late on a busy machine
    while _alive_with_arg(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive_with_arg(token) == []


def test_pipelined_actor_runs_programs_one_at_a_time_and_records_each_instance_once(tmp_path, ray_2cpus, reachable_tmp):
    """Real executor, one actor with two calls in flight (prepared concurrently): the programs
    never overlap (start and end alternate in their shared log), a crashing run does not disturb
    the next one, and every instance is passed on exactly once."""
    import json

    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.solver.candidate import load_candidate

    names = [f"i{k}" for k in range(8)]
    ctx = _ctx(tmp_path, [{"name": n} for n in names], RunContext)
    log = reachable_tmp / "programs.log"  # shared by the runs: writable for a root harness's candidate uid too
    log.touch(mode=0o666)
    log.chmod(0o666)
    cand = reachable_tmp / "cand"
    cand.mkdir()
    script = (
        f'echo "start $$" >> {log}; sleep 0.05 & wait; '
        f'if [ "$(grep -c start {log})" = 3 ]; then echo "end $$" >> {log}; exit 3; fi; '
        f'echo "end $$" >> {log}; echo 0 1 > "$1"'
    )
    (cand / "solver.yaml").write_text(json.dumps({"command": ["sh", "-c", script, "x", "{solution}"]}))
    ctx.candidate = load_candidate(cand)
    ctx.limits = Limits(wall_s=60, mem_mb=512)
    calls = []
    pool = RayPool(ctx, workers=1, max_retries=0)
    assert pool.pipeline == 4 and pool.calls_per_actor == 2
    try:
        pool.run(names, lambda n, r, t: calls.append((n, r)))
    finally:
        pool.close()
    assert sorted(n for n, _ in calls) == names
    statuses = [r.status for _, r in calls]
    assert statuses.count("crash") == 1 and statuses.count("ok") == 7, [r.message for _, r in calls]
    lines = log.read_text().splitlines()
    assert len(lines) == 16
    for first, second in zip(lines[::2], lines[1::2], strict=True):
        assert first.split()[0] == "start" and second == f"end {first.split()[1]}", lines


def test_ray_pool_batches_quick_instances_and_sends_retries_alone(tmp_path, ray_2cpus):
    """Instances of milliseconds go several to a call once the pool has measured them (fewer
    calls than instances), each record still passed on once; a retried instance goes alone."""
    names = [f"q{k:02d}" for k in range(40)]
    rows = [{"name": n, "sleep": 0.01} for n in names] + [{"name": "bad", "status": "infrastructure_error"}]
    ctx = _ctx(tmp_path, rows)
    got, sizes = {}, []
    # batch_s is large so that any machine speed gives batches of several instances
    pool = RayPool(ctx, workers=2, max_retries=1, tuning=RayTuning(batch_s=30.0))
    real_batch = pool._batch
    pool._batch = lambda queue, actors: sizes.append(real_batch(queue, actors)) or sizes[-1]
    try:
        pool.run(["bad", *names], lambda n, r, t: got.setdefault(n, (r, t)))
    finally:
        pool.close()
    assert sorted(got) == sorted(["bad", *names]) and all(got[n][0].status == "ok" for n in names)
    assert _log(tmp_path).count("bad") == 2 and got["bad"][1] == 2
    assert pool.calls == len(sizes) < len(names)
    assert max(len(b) for b in sizes) > 1
    retried = [b for b in sizes if any(tries > 1 for _, tries in b)]
    assert retried == [[("bad", 2)]]


@pytest.mark.parametrize("cancel", [True, False])
def test_a_ray_driver_cleans_up_after_sigterm_for_longer_than_3_s(tmp_path, cancel):
    """Ray's C++ failure handler arms a 3 s abort (SIGALRM) when SIGTERM arrives; a cancelled job's
    cleanup cancels it, or a slow cleanup (stop Ray, reap the runs) is aborted half-way."""
    driver = (
        "import os, signal, sys, time\n"
        "from tcsexam.runner.ray.job import cancel_ray_abort_alarm, start_ray\n"
        "handle = start_ray(num_cpus=1)\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(60)\n"
        "except SystemExit:\n"
        f"    if {cancel}:\n"
        "        cancel_ray_abort_alarm()\n"
        "    time.sleep(5)  # a slow cleanup\n"
        "    handle.shutdown()\n"
        "    sys.exit(7)\n"
    )
    proc = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=300)
    if cancel:
        assert proc.returncode == 7, proc.stderr[-3000:]
    else:  # Ray's behaviour, which the cancel is for: if this changes, the cancel may go
        assert proc.returncode == -signal.SIGABRT, proc.stderr[-3000:]
