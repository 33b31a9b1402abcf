"""Candidate loading, the build step, and run_instance's status mapping (real subprocesses)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Limits
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import build_candidate, load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.tasks import load_task

LOCAL = get_sandbox("local")

GRAPH = "5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n"
GOOD = "import sys\nopen(sys.argv[2], 'w').write('0 1 0 1 1\\n')\n"


def make_candidate(root: Path, yaml: str, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "solver.yaml").write_text(yaml)
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    return root


@pytest.fixture()
def task(tmp_path):
    (tmp_path / "g.txt").write_text(GRAPH)
    (tmp_path / "task.yaml").write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        "limits: {wall_s: 5, mem_mb: 256, output_mb: 1, nproc: 32}\n"
        f"instance_dir: {tmp_path}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    return load_task(tmp_path / "task.yaml")


@pytest.mark.parametrize(
    "yaml, message",
    [
        ("build: [make]\n", "missing key 'command'"),
        ("command: []\n", "'command' must be a non-empty list"),
        ("command: [python3, '{nope}']\n", "unknown placeholder {nope}"),
        ("command: [x]\nthreads: 0\n", "'threads' must be an integer >= 1"),
        ("command: [x]\nexit_codes_ok: [0, 300]\n", "'exit_codes_ok'"),
        ("command: [x]\nenv: [A]\n", "'env' must map"),
        ("command: [x]\ncolour: red\n", "unknown key 'colour'"),
        ("command: [x]\ncertificate: pipe\n", "'certificate' must be file"),
        ("command: [x\n", "malformed"),
        ("command: [x]\ntasks: {t: [y]}\n", "'tasks' must map task ids to {command: [...]}"),
        ("command: [x]\ntasks: {t: {command: [y, '{nope}']}}\n", "'tasks.t.command': unknown placeholder {nope}"),
    ],
)
def test_bad_solver_yaml_names_file_and_key(tmp_path, yaml, message):
    make_candidate(tmp_path / "c", yaml)
    with pytest.raises(InputError) as info:
        load_candidate(tmp_path / "c")
    assert message in str(info.value) and "solver.yaml" in str(info.value)


def test_load_candidate_fields(tmp_path):
    make_candidate(
        tmp_path / "c",
        "command: [python3, s.py, '{instance}', '{solution}', '{time_limit}', '{seed}', '{threads}', '{workdir}']\n"
        "build: [make]\nthreads: 2\nenv: {A: 1}\nexit_codes_ok: [0, 10, 20]\n",
    )
    cand = load_candidate(tmp_path / "c")
    assert cand.threads == 2 and cand.build == ("make",) and cand.env == {"A": "1"}
    assert cand.exit_codes_ok == {0, 10, 20} and cand.dir == (tmp_path / "c").resolve()


def test_a_task_may_have_its_own_command(tmp_path):
    make_candidate(tmp_path / "c", "command: [run, '{time_limit}']\ntasks: {fixed: {command: [run, '0.6']}}\n")
    assert load_candidate(tmp_path / "c", "fixed").command == ("run", "0.6")
    assert (
        load_candidate(tmp_path / "c", "other").command
        == load_candidate(tmp_path / "c").command
        == ("run", "{time_limit}")
    )


def test_environment_and_placeholders(task, tmp_path):
    script = (
        "import os, sys, json\n"
        "json.dump({'argv': sys.argv[1:], 'env': {k: os.environ.get(k) for k in "
        "['TCSEXAM_TIME_LIMIT', 'TCSEXAM_SEED', 'TCSEXAM_THREADS', 'OMP_NUM_THREADS', 'A', 'TMPDIR', 'SECRET']}}, "
        "open(os.path.join(os.environ['TMPDIR'], 'seen.json'), 'w'))\n"
        "open(sys.argv[2], 'w').write('0 1 0 1 1\\n')\n"
    )
    cand = load_candidate(
        make_candidate(
            tmp_path / "c",
            "command: [python3, s.py, '{instance}', '{solution}', '{time_limit}', '{seed}', '{threads}', '{workdir}']\n"
            "threads: 2\nenv: {A: x}\n",
            {"s.py": script},
        )
    )
    import json
    import os

    os.environ["SECRET"] = "leak"
    try:
        rec = run_instance(task, "g", cand, sandbox=LOCAL, limits=Limits(wall_s=5), seed=42, scratch_dir=tmp_path / "s")
    finally:
        del os.environ["SECRET"]
    assert rec.status == "ok", rec.message
    seen = json.loads((tmp_path / "s" / "work" / "seen.json").read_text())
    work = str((tmp_path / "s" / "work").resolve())
    if os.geteuid() == 0:  # a root harness runs the candidate unprivileged in a work folder it can reach
        work = seen["env"]["TMPDIR"]
    assert seen["argv"][2:] == ["5", "42", "2", work]
    assert seen["env"] == {
        "TCSEXAM_TIME_LIMIT": "5",
        "TCSEXAM_SEED": "42",
        "TCSEXAM_THREADS": "2",
        "OMP_NUM_THREADS": "2",
        "A": "x",
        "TMPDIR": work,
        "SECRET": None,
    }


def test_exit_codes_ok(task, tmp_path):
    files = {"s.py": GOOD + "raise SystemExit(10)\n"}
    plain = load_candidate(
        make_candidate(tmp_path / "a", "command: [python3, s.py, '{instance}', '{solution}']\n", files)
    )
    ok10 = load_candidate(
        make_candidate(
            tmp_path / "b", "command: [python3, s.py, '{instance}', '{solution}']\nexit_codes_ok: [0, 10]\n", files
        )
    )
    lim = Limits(wall_s=5)
    assert (
        run_instance(task, "g", plain, sandbox=LOCAL, limits=lim, seed=1, scratch_dir=tmp_path / "s1").status == "crash"
    )
    rec = run_instance(task, "g", ok10, sandbox=LOCAL, limits=lim, seed=1, scratch_dir=tmp_path / "s2")
    assert rec.status == "ok" and rec.A == 4.0 and rec.exit_code == 10


def test_missing_program_and_missing_certificate_are_invalid(task, tmp_path):
    lim = Limits(wall_s=5)
    gone = load_candidate(make_candidate(tmp_path / "a", "command: [./no-such-solver, '{instance}']\n"))
    rec = run_instance(task, "g", gone, sandbox=LOCAL, limits=lim, seed=1, scratch_dir=tmp_path / "s1")
    assert rec.status == "invalid" and "could not be started" in rec.message
    silent = load_candidate(make_candidate(tmp_path / "b", "command: ['true']\n"))
    rec = run_instance(task, "g", silent, sandbox=LOCAL, limits=lim, seed=1, scratch_dir=tmp_path / "s2")
    assert rec.status == "invalid" and rec.message == "no certificate written"


def test_checker_failure_is_infrastructure_error(task, tmp_path, monkeypatch):
    cand = load_candidate(
        make_candidate(tmp_path / "a", "command: [python3, s.py, '{instance}', '{solution}']\n", {"s.py": GOOD})
    )
    problem = task.problem_impl

    def boom(*args, **kwargs):
        raise RuntimeError("checker bug")

    monkeypatch.setattr(type(problem), "check_certificate", boom)
    rec = run_instance(task, "g", cand, sandbox=LOCAL, limits=Limits(wall_s=5), seed=1, scratch_dir=tmp_path / "s")
    assert rec.status == "infrastructure_error" and "checker bug" in rec.message


def test_bwrap_sandbox_failure_is_infrastructure_error(task, tmp_path, monkeypatch):
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap not installed")
    from tcsexam.runner.sandboxes.bwrap import BwrapSandbox

    cand = load_candidate(
        make_candidate(tmp_path / "a", "command: [python3, s.py, '{instance}', '{solution}']\n", {"s.py": GOOD})
    )
    monkeypatch.setattr(BwrapSandbox, "base_args", lambda self, tmp_mb=0: ["--ro-bind", "/no/such/dir", "/x"])
    rec = run_instance(
        task, "g", cand, sandbox=BwrapSandbox(), limits=Limits(wall_s=5), seed=1, scratch_dir=tmp_path / "s"
    )
    assert rec.status == "infrastructure_error" and "bwrap did not start" in rec.message


def test_build_step(task, tmp_path):
    lim = Limits(wall_s=30)
    src = make_candidate(
        tmp_path / "c",
        "command: [./solver, '{instance}', '{solution}']\nbuild: [sh, -c, 'cp solver.sh solver && chmod +x solver']\n",
        {"solver.sh": "#!/bin/sh\necho '0 1 0 1 1' > \"$2\"\n"},
    )
    cand = load_candidate(src)
    built, message = build_candidate(
        cand, sandbox=LOCAL, limits=lim, build_dir=tmp_path / "b", log_path=tmp_path / "build.log"
    )
    assert built is not None and built.dir == (tmp_path / "b").resolve() and "built" in message
    assert not (src / "solver").exists()  # the build ran in a copy
    rec = run_instance(task, "g", built, sandbox=LOCAL, limits=lim, seed=1, scratch_dir=tmp_path / "s")
    assert rec.status == "ok", rec.message

    broken = load_candidate(
        make_candidate(tmp_path / "d", "command: [x]\nbuild: [sh, -c, 'echo compiler says no; exit 2']\n")
    )
    built, message = build_candidate(
        broken, sandbox=LOCAL, limits=lim, build_dir=tmp_path / "b2", log_path=tmp_path / "b2.log"
    )
    assert built is None and "exit code 2" in message
    assert "compiler says no" in (tmp_path / "b2.log").read_text()


def test_cadical_through_the_harness(tmp_path):
    cadical = shutil.which("cadical")
    if cadical is None:
        pytest.skip("cadical not installed")
    try:
        from tcsexam.problems import get_problem

        get_problem("sat")
    except Exception as exc:
        pytest.skip(f"sat problem module not available: {exc}")
    (tmp_path / "f.cnf").write_text("p cnf 3 3\n1 2 0\n-1 3 0\n-2 -3 0\n")
    (tmp_path / "task.yaml").write_text(
        "id: tiny-sat\nproblem: sat\nkind: solve\ndirection: maximize\nlimits: {wall_s: 5}\n"
        f"instance_dir: {tmp_path}\ninstances:\n  - {{name: f, file: f.cnf, label: SAT}}\n"
    )
    sat = load_task(tmp_path / "task.yaml")
    cand = load_candidate(
        make_candidate(
            tmp_path / "c",
            f"command: [sh, -c, '{cadical} -q \"$0\" > \"$1\"', '{{instance}}', '{{solution}}']\n"
            "exit_codes_ok: [10, 20]\n",
        )
    )
    rec = run_instance(sat, "f", cand, sandbox=LOCAL, limits=Limits(wall_s=5), seed=1, scratch_dir=tmp_path / "s")
    assert rec.status == "ok" and rec.solved is True and rec.exit_code == 10, rec.message
