"""`tcsexam run` end to end with the real executor: records, keys, reuse, repair, build, errors.

Most cases use `--no-ray` (the same executor in-process) to stay fast; one runs the local Ray.
The candidate is a small deterministic MaxCut solver that appends every execution to a log, so
the tests see exactly which instances ran.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tcsexam.cli import main
from tcsexam.records.store import RecordStore

SOLVE = """\
import sys, time
inst, sol, log = sys.argv[1], sys.argv[2], sys.argv[3]
with open(log, "a") as fh:
    fh.write(inst.rsplit("/", 1)[-1] + "\\n")
n = int(open(inst).readline().split()[0])
time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
with open(sol, "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n")
"""


def write_task(root: Path, names=("a", "b", "c"), wall_s=5, sizes=None) -> Path:
    inst_dir = root / "inst"
    inst_dir.mkdir(exist_ok=True)
    rows = []
    for k, name in enumerate(names):
        n = (sizes or {}).get(name, 4 + k)
        edges = [(i, i + 1) for i in range(1, n)]
        (inst_dir / f"{name}.txt").write_text(f"{n} {len(edges)}\n" + "".join(f"{u} {v} 1\n" for u, v in edges))
        rows.append(f"- {{name: {name}, file: {name}.txt, best_known: {n - 1}}}")
    task = root / "task.yaml"
    task.write_text(
        "id: tiny-maxcut\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {{wall_s: {wall_s}, mem_mb: 1024}}\ninstance_dir: {inst_dir}\ninstances:\n" + "\n".join(rows) + "\n"
    )
    return task


def write_candidate(root: Path, sleep: float = 0.0, build=None, script="solve.py") -> Path:
    cand = root / "cand"
    cand.mkdir(exist_ok=True)
    (cand / "solve.py").write_text(SOLVE)
    log = root / "exec.log"
    cmd = [sys.executable, script, "{instance}", "{solution}", str(log), str(sleep)]
    text = f"command: {json.dumps(cmd)}\nthreads: 1\n"
    if build:
        text += f"build: {json.dumps(build)}\n"
    (cand / "solver.yaml").write_text(text)
    return cand


def executed(root: Path) -> list[str]:
    log = root / "exec.log"
    if not log.exists():
        return []
    out = [line.removesuffix(".txt") for line in log.read_text().split()]
    log.unlink()
    return out


def run_args(task, cand) -> list[str]:
    """`tcsexam run`'s arguments for attempt 1 of `cand` on `task` (output and options to add)."""
    return ["run", "--task", str(task), "--candidate", str(cand), "--attempt", "1"]


def run(root, task, cand, *extra) -> int:
    return main(
        [
            *run_args(task, cand),
            "--output",
            str(root / "out" / "records.json"),
            "--no-progress",
            "--no-ray",
            # the test candidate logs each call to a file outside its work folder: only `local` lets it
            *(() if "--sandbox" in extra else ("--sandbox", "local")),
            *extra,
        ]
    )


def records(root) -> list[dict]:
    return json.loads((root / "out" / "records.json").read_text())


@pytest.fixture(autouse=True)
def trusted_candidates(monkeypatch):
    """The test candidate logs each call to a file outside its work folder (and runs the harness's
    interpreter by its path): a trusted candidate, run as the harness's own user even as root."""
    import tcsexam.runner.sandboxes.runas as runas

    monkeypatch.setenv("TCSEXAM_CANDIDATE_UID", "harness")
    monkeypatch.setattr(runas, "_ids", None)


@pytest.fixture
def setup(tmp_path):
    return tmp_path, write_task(tmp_path), write_candidate(tmp_path)


def test_run_writes_records_in_task_order_and_reuses_them(setup, capsys):
    root, task, cand = setup
    assert run(root, task, cand) == 0
    recs = records(root)
    assert [r["instance"] for r in recs] == ["a", "b", "c"]
    assert [r["status"] for r in recs] == ["ok"] * 3
    assert [r["A"] for r in recs] == [3.0, 4.0, 5.0]  # path graphs, alternating sides cut all
    assert all(r["key"].startswith("sha256:") and r["attempt"] == "1" and r["task"] == "tiny-maxcut" for r in recs)
    assert sorted(executed(root)) == ["a", "b", "c"]
    store = RecordStore(root / "out" / "records")
    assert [store.load(n).to_dict(store.key) for n in "abc"] == recs
    assert run(root, task, cand) == 0
    assert executed(root) == []  # everything reused
    assert records(root) == recs
    assert "(3 reused, 0 run)" in capsys.readouterr().err


def test_changes_invalidate_exactly_the_affected_records(setup):
    root, task, cand = setup
    assert run(root, task, cand) == 0
    executed(root)
    # one instance file changes: only it runs again
    (root / "inst" / "b.txt").write_text("3 2\n1 2 1\n2 3 1\n")
    assert run(root, task, cand) == 0
    assert executed(root) == ["b"]
    # one candidate file changes: everything runs again
    (cand / "notes.txt").write_text("v2")
    assert run(root, task, cand) == 0
    assert sorted(executed(root)) == ["a", "b", "c"]
    # the limits change: everything runs again
    task.write_text(task.read_text().replace("wall_s: 5", "wall_s: 6"))
    assert run(root, task, cand) == 0
    assert sorted(executed(root)) == ["a", "b", "c"]
    # the seed is part of the key
    assert run(root, task, cand, "--seed", "7") == 0
    assert sorted(executed(root)) == ["a", "b", "c"]
    assert run(root, task, cand, "--seed", "7") == 0
    assert executed(root) == []


def test_infrastructure_errors_are_never_reused_and_repair_redoes_chosen(setup, capsys):
    root, task, cand = setup
    assert run(root, task, cand) == 0
    executed(root)
    store = RecordStore(root / "out" / "records")
    rec = store.load("b")
    rec.status, rec.A = "infrastructure_error", None
    store.write(rec)
    assert run(root, task, cand) == 0
    assert executed(root) == ["b"]
    assert [r["status"] for r in records(root)] == ["ok"] * 3
    # repair by instance: only that one runs again, the old record is kept aside
    assert main(["repair", "--records-dir", str(store.dir), "--instances", "c"]) == 0
    assert "moved 1 record(s)" in capsys.readouterr().out
    assert run(root, task, cand) == 0
    assert executed(root) == ["c"]
    assert len(list((store.dir / ".repaired").rglob("c.json"))) == 1


def test_subset_of_instances(setup):
    root, task, cand = setup
    assert run(root, task, cand, "--instances", "c", "a") == 0
    assert [r["instance"] for r in records(root)] == ["a", "c"]
    assert sorted(executed(root)) == ["a", "c"]
    assert run(root, task, cand) == 0
    assert executed(root) == ["b"]


def test_build_step_runs_once_and_its_failure_makes_every_instance_invalid(tmp_path):
    task = write_task(tmp_path)
    cand = write_candidate(tmp_path, build=["/bin/sh", "-c", "cp solve.py built.py && echo built"], script="built.py")
    assert run(tmp_path, task, cand) == 0
    assert [r["status"] for r in records(tmp_path)] == ["ok"] * 3
    assert not (cand / "built.py").exists()  # the build ran in a copy
    executed(tmp_path)
    bad = tmp_path / "bad"
    bad.mkdir()
    task2 = write_task(bad)
    cand2 = write_candidate(bad, build=["/bin/sh", "-c", "echo compiling; echo 'error: no' >&2; exit 3"])
    assert run(bad, task2, cand2) == 0
    recs = records(bad)
    assert [r["status"] for r in recs] == ["invalid"] * 3
    assert all("build failed" in r["message"] for r in recs)
    log = bad / "out" / "records" / "build.log"
    assert log.exists() and "error: no" in log.read_text()
    assert executed(bad) == []


def test_unusable_solver_yaml_makes_every_instance_invalid(setup, capsys):
    root, task, cand = setup
    (cand / "solver.yaml").write_text("command: python3 solve.py\nthreads: one\n")
    out = root / "out" / "records.json"
    rc = main(["run", "--task", str(task), "--candidate", str(cand), "--output", str(out), "--no-progress", "--no-ray"])
    assert rc == 0
    recs = json.loads(out.read_text())
    assert recs and {r["status"] for r in recs} == {"invalid"}
    assert all("candidate cannot start" in r["message"] and "solver.yaml" in r["message"] for r in recs)
    assert executed(root) == []


@pytest.mark.parametrize(
    "args, code, needle",
    [
        (["--task", "no-such-task"], 1, "no-such-task"),
        (["--candidate", "/nonexistent/cand"], 1, "/nonexistent/cand"),
        (["--instances", "zz"], 1, "zz"),
        (["--workers", "0"], 2, "--workers"),
        (["--workers", "2"], 2, "--no-ray"),
        (["--max-retries", "-1"], 2, "--max-retries"),
    ],
)
def test_bad_input_is_one_line_and_leaves_no_output(setup, capsys, args, code, needle):
    root, task, cand = setup
    argv = {"--task": str(task), "--candidate": str(cand)}
    rest = []
    it = iter(args)
    for opt in it:
        val = next(it)
        if opt in argv:
            argv[opt] = val
        else:
            rest += [opt, val]
    out = root / "out" / "records.json"
    rc = main(
        [
            "run",
            "--task",
            argv["--task"],
            "--candidate",
            argv["--candidate"],
            "--output",
            str(out),
            "--no-progress",
            "--no-ray",
            *rest,
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == code
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_output_inside_records_dir_is_a_usage_error(setup, capsys):
    root, task, cand = setup
    rc = main(
        [
            "run",
            "--task",
            str(task),
            "--candidate",
            str(cand),
            "--no-ray",
            "--no-progress",
            "--output",
            str(root / "r" / "records.json"),
            "--records-dir",
            str(root / "r"),
        ]
    )
    assert rc == 2 and "--records-dir" in capsys.readouterr().err


def test_run_on_local_ray_with_two_workers(setup, capsys):
    root, task, cand = setup
    rc = main(
        [
            "run",
            "--task",
            str(task),
            "--candidate",
            str(cand),
            "--attempt",
            "1",
            "--output",
            str(root / "out" / "records.json"),
            "--workers",
            "2",
            "--pool",
            "ray",  # this case runs the local Ray (auto would run 3 short runs in this process)
            "--sandbox",
            "local",  # the test candidate logs each call outside its work folder
        ]
    )
    assert rc == 0
    assert [r["status"] for r in records(root)] == ["ok"] * 3
    assert sorted(executed(root)) == ["a", "b", "c"]
    err = capsys.readouterr().err
    assert "3/3" in err  # the progress bar reached the end


def test_console_script_on_ray_exits_with_its_code_and_output_flushed(setup):
    """The console script (`tcsexam.cli:run_command`) ends a process that used Ray with os._exit
    (Ray's teardown at interpreter exit can deadlock): the exit code is main's and the log lines
    are all out before it; without Ray the process ends the ordinary way."""
    import subprocess
    import sys

    root, task, cand = setup
    base = [sys.executable, "-m", "tcsexam", *run_args(task, cand), "--sandbox", "local", "--pool", "ray"]
    ok = subprocess.run(
        [*base, "--output", str(root / "out" / "records.json"), "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == 0, ok.stderr
    assert "instances (0 reused, 3 run)" in ok.stderr and "records ->" in ok.stderr.splitlines()[-1]
    assert [r["status"] for r in records(root)] == ["ok"] * 3
    bad = subprocess.run(
        [*base, "--output", str(root / "out" / "records.json"), "--workers", "0"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


@pytest.mark.slow
def _run_job(root: Path, task: Path, cand: Path, out: str, *extra: str, **env: str) -> str:
    """One `tcsexam run` process per job, as in the workflow: its stderr (the run must pass)."""
    import subprocess

    argv = [sys.executable, "-m", "tcsexam", *run_args(task, cand)]
    argv += ["--output", str(root / out / "records.json"), "--no-progress", "--pool", "ray", *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=dict(os.environ, **env))
    assert proc.returncode == 0, proc.stderr
    assert [r["status"] for r in json.loads((root / out / "records.json").read_text())] == ["ok"] * 3
    return proc.stderr


def test_ray_head_runs_on_the_shared_head_or_on_a_ray_of_its_own(setup):
    import subprocess

    from tcsexam.runner.ray import head as ray_head

    root, task, cand = setup
    state = root / "head"
    # RAY_AUTH_MODE=token (what a local ray.init leaves in its process's environment) must not
    # keep a job off the head
    on_head = ("--ray-head", str(state))
    err = _run_job(root, task, cand, "alone", *on_head, RAY_AUTH_MODE="token")  # no head: Ray starts in the job
    assert f"no shared Ray head alive in {state}" in err and "on local Ray" in err
    # what a local workflow's onstart does: the first job that chooses Ray starts the head
    arm = [sys.executable, "-m", "tcsexam", "runner", "ray-head", "start", "--on-demand", "--state-dir", str(state)]
    subprocess.run([*arm, "--num-cpus", "2"], check=True, capture_output=True, timeout=60)
    assert ray_head.current_address(state) is None
    try:
        err = _run_job(root, task, cand, "armed", *on_head)
        address = ray_head.current_address(state)
        assert f"started the shared Ray head in {state}" in err and f"on Ray at {address}" in err, err
        err = _run_job(root, task, cand, "shared", *on_head, RAY_AUTH_MODE="token")
        assert f"on Ray at {address}" in err and "no shared Ray head" not in err
        assert ray_head.current_address(state) == address  # the job left the head running
    finally:
        ray_head.stop(state)


def test_a_standalone_run_joins_the_default_local_head_only_when_it_is_private(setup, monkeypatch):
    """`tcsexam runner ray-head start` without --state-dir starts the user's default head, which a
    run without --ray-head/--ray-address joins; TCSEXAM_RAY_HEAD=none, or a state folder others
    may write, keeps a run off it (on a Ray of its own)."""
    import subprocess

    from tcsexam.runner.ray import head as ray_head

    root, task, cand = setup
    state = root / "default-head"
    monkeypatch.setenv("TCSEXAM_RAY_HEAD", str(state))
    start = [sys.executable, "-m", "tcsexam", "runner", "ray-head", "start", "--num-cpus", "2"]
    proc = subprocess.run(start, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    address = proc.stdout.strip()
    try:
        assert ray_head.current_address(state) == address and stat.S_IMODE(state.stat().st_mode) == 0o700
        err = _run_job(root, task, cand, "joined")
        assert f"joining the local Ray head in {state}" in err and f"on Ray at {address}" in err
        assert ray_head.current_address(state) == address  # the run left the head running
        # what a run asks before it starts a Ray of its own
        assert ray_head.local_head() == (state, address)
        state.chmod(0o755)  # another user could have planted its address
        assert ray_head.local_head() is None
        state.chmod(0o700)
        monkeypatch.setenv("TCSEXAM_RAY_HEAD", "none")
        assert ray_head.local_head() is None
        monkeypatch.setenv("TCSEXAM_RAY_HEAD", str(state))
    finally:
        state.chmod(0o700)
        subprocess.run([*start[:5], "stop"], capture_output=True, timeout=120)
    assert ray_head.current_address(state) is None


def test_ray_head_excludes_ray_address_and_no_ray(setup, capsys):
    root, task, cand = setup
    with pytest.raises(SystemExit) as exc:  # argparse: mutually exclusive options
        main(
            [
                "run",
                "--task",
                str(task),
                "--candidate",
                str(cand),
                "--output",
                str(root / "o.json"),
                "--ray-head",
                str(root / "head"),
                "--ray-address",
                "127.0.0.1:1",
            ]
        )
    assert exc.value.code == 2
    assert run(root, task, cand, "--ray-head", str(root / "head")) == 2
    assert "--no-ray and --ray-address/--ray-head exclude each other" in capsys.readouterr().err
    assert not (root / "out" / "records.json").exists()


def test_console_script_says_where_a_fatal_signal_struck(tmp_path):
    """A segfault inside a command leaves its Python stack in the job's log (stderr), not just an
    exit status of 139."""
    import subprocess
    import sys

    code = (
        "import ctypes, sys\n"
        "from tcsexam import cli\n"
        "def crash_in_teardown():\n"
        "    ctypes.string_at(0)\n"
        "cli.main = crash_in_teardown\n"
        "cli.run_command()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == -11, proc
    assert "Fatal Python error: Segmentation fault" in proc.stderr and "crash_in_teardown" in proc.stderr


def test_console_script_ends_a_ray_process_with_os_exit(monkeypatch, capsys):
    """Where Ray's core is loaded, run_command ends with os._exit(main's code), never the
    interpreter's exit (whose Ray teardown can hang); elsewhere with SystemExit."""
    import sys
    import types

    from tcsexam import cli

    exits = []
    monkeypatch.setattr(cli.os, "_exit", lambda code: exits.append(code))
    monkeypatch.setattr(sys, "argv", ["tcsexam", "check", "--task", "no-such-task.yaml", "--certificate", "c.txt"])
    monkeypatch.setitem(sys.modules, "ray._raylet", types.ModuleType("ray._raylet"))
    with pytest.raises(SystemExit):  # the patched os._exit returns, so run_command carries on
        cli.run_command()
    assert exits == [1] and "no-such-task.yaml" in capsys.readouterr().err
    monkeypatch.delitem(sys.modules, "ray._raylet")
    with pytest.raises(SystemExit) as ended:
        cli.run_command()
    assert ended.value.code == 1 and exits == [1]


@pytest.mark.parametrize(
    "text, needles",
    [
        ("comand: [python3, solve.py]\n", ["unknown key 'comand'", "did you mean 'command'?"]),
        ("command: [python3, solve.py]\nthread: 1\n", ["unknown key 'thread'", "did you mean 'threads'?"]),
        (
            "command: [x]\ntasks: {tiny-maxcut: {comand: [y]}}\n",
            ["unknown key tasks.tiny-maxcut.'comand'", "did you mean tasks.tiny-maxcut.'command'?"],
        ),
        ("command: [x]\nzzz: 1\n", ["unknown key 'zzz' (known: build, certificate, command"]),
    ],
)
def test_misspelt_solver_yaml_key_is_one_line_and_exit_2(setup, capsys, text, needles):
    root, task, cand = setup
    (cand / "solver.yaml").write_text(text)
    rc = main(
        [
            "run",
            "--task",
            str(task),
            "--candidate",
            str(cand),
            "--output",
            str(root / "out" / "records.json"),
            "--no-progress",
            "--no-ray",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert str(cand / "solver.yaml") in err[0] and all(n in err[0] for n in needles), err[0]
    assert not (root / "out" / "records.json").exists() and executed(root) == []
