"""The Snakemake workflow for real, on the tiny config (config/test/config.yaml).

Every test works in its own copy of the workflow (Snakefile, rules, workflow, config, envs, the demo
solvers; the instance files are linked), so runs never touch the repository's results/ or
.snakemake/. One uninterrupted local run is the baseline the other runs are compared with:

(a) the tiny config run locally gives a complete Index, the attempt table, the plots and a report;
(b) the SLURM profile on the local cluster gives an index.json equal to the local run's (skipped
    without a cluster, but failed when TCSEXAM_REQUIRE_SLURM=1);
(c) resume: the workflow and its jobs are SIGKILLed mid-run (process group), the rerun with
    --rerun-incomplete runs only the unfinished instances and ends with the baseline's Index;
(d) repair: an instance forced into infrastructure_error makes the Index incomplete; after
    `tcsexam repair` + a plain rerun it is complete again and only that instance ran;
(e) `snakemake --lint` is clean; (f) `snakemake -n` builds the Full DAG of 10 models x 3 attempts.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcsexam.records.digest import record_digest
from tcsexam.records.key import find_key

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
CONFIG = "config/test/config.yaml"
OUT = "results/test/lite/offline"
MODELS = ("demo-fast", "demo-weak")  # the reproducible demo models of config/test/config.yaml
SOLVER_TASKS = ("maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf")

pytestmark = pytest.mark.slow


def _env(ws: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["TCSEXAM_ROOT"] = str(ws)
    env.pop("RAY_ADDRESS", None)
    return env


def make_workspace(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile",):
        shutil.copy2(ROOT / name, dest / name)
    for name in ("rules", "workflow", "config", "envs"):
        shutil.copytree(ROOT / name, dest / name)
    for model in MODELS:
        shutil.copytree(ROOT / "solvers" / model, dest / "solvers" / model)
    (dest / "references").mkdir()
    (dest / "references" / "instances").symlink_to(ROOT / "references" / "instances")
    return dest


def copy_of_finished_run(finished: Path, dest: Path) -> Path:
    """A private copy of the session's finished workspace (conftest.finished_tiny_run), links kept."""
    shutil.copytree(finished, dest, symlinks=True)
    return dest


def snakemake(ws: Path, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    """snakemake in its own session: on a timeout the whole group (snakemake and every job it
    started) is killed, so a failing test leaves no job running behind it."""
    argv = [SNAKEMAKE, *args]
    with subprocess.Popen(
        argv, cwd=ws, env=_env(ws), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as child:
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise
    proc = subprocess.CompletedProcess(argv, child.returncode, out, err)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc


def records_dirs(ws: Path) -> list[Path]:
    return sorted((ws / OUT / "solver").glob("*/*/*/records"))


def record_states(ws: Path) -> dict[str, tuple[int, str]]:
    """instance record file -> (mtime_ns, content): a record rewritten by a run changes both."""
    out = {}
    for d in records_dirs(ws):
        for f in d.glob("*.json"):
            out[str(f.relative_to(ws))] = (f.stat().st_mtime_ns, f.read_text())
    return out


def index_of(ws: Path) -> dict:
    return json.loads((ws / OUT / "index.json").read_text())


def stop_ray_head(ws: Path, wait_s: float = 120) -> None:
    """Stop the workspace's shared Ray head, and wait for the detached stop the workflow's
    `onsuccess` began (it renames the state folder to `.ray-head.stopping-*` and removes it once
    the head is down): until then the results tree is still changing, and a copy of it taken
    meanwhile fails on the files that vanish under it."""
    state = ws / "results" / "test" / ".ray-head"
    subprocess.run(
        [str(BIN / "tcsexam"), "runner", "ray-head", "stop", "--state-dir", str(state)],
        env=_env(ws),
        capture_output=True,
        timeout=60,
    )
    deadline = time.monotonic() + wait_s
    while list(state.parent.glob(".ray-head.stopping-*")) and time.monotonic() < deadline:
        time.sleep(0.2)


@pytest.fixture(scope="module")
def baseline(finished_tiny_run, tmp_path_factory) -> Path:
    return copy_of_finished_run(finished_tiny_run, tmp_path_factory.mktemp("wf-baseline") / "ws")


def test_tiny_config_local_run_gives_complete_index(baseline):
    index = index_of(baseline)
    assert index["status"] == "complete", index
    assert index["suite"] == "lite" and index["solver_protocol"] == "offline"
    assert index["solver_reference_id"] == "tcsexam-test-k3-v2"
    strong, weak = index["models"]["demo-fast"], index["models"]["demo-weak"]
    assert strong["status"] == weak["status"] == "complete"
    assert strong["index"] > weak["index"] + 10, (strong["index"], weak["index"])
    assert strong["track_means"]["solver"] > weak["track_means"]["solver"]
    with open(baseline / OUT / "attempts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 20
    assert {r["score_status"] for r in rows} == {"valid"}
    solver_rows = [r for r in rows if r["track"] == "solver"]
    assert len(solver_rows) == 10 and {r["solver_protocol"] for r in solver_rows} == {"offline"}
    # every Solver row comes from a solver-score output of the right reference
    for r in solver_rows:
        rel = json.loads(
            (baseline / OUT / "solver" / r["model"] / r["item"] / r["attempt"] / "relative.json").read_text()
        )
        assert rel["relative_score"] == float(r["score"]) and rel["reference_id"] == "tcsexam-test-k3-v2"
    # the weak model's failures are data: certificate_failed TSP, crashes on MaxSAT
    tsp = json.loads((baseline / OUT / "solver/demo-weak/tsp-tsplib/1/records.json").read_text())
    assert {r["status"] for r in tsp} == {"certificate_failed"}
    for name in ("track_means.png", "solver_relative.png", "instance_scores.png", "status_counts.png"):
        data = (baseline / OUT / "plots" / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 5000
    snakemake(baseline, "--configfile", CONFIG, "--report", "report.html", timeout=300)
    html = (baseline / "report.html").read_text(errors="replace")
    assert "track_means.png" in html and "status_counts.png" in html
    # the short jobs ran in the run's fork server (docs/workflow.md), gone with the run
    server_log = (baseline / "results" / "test" / ".fork-server.log").read_text()
    served = [line for line in server_log.splitlines() if " tcsexam " in line]
    for command in ("run", "attempts verdict-row", "attempts solver-row", "proof check", "construction run", "score"):
        assert any(f" tcsexam {command} " in line for line in served), (command, server_log[-2000:])
    assert " checked sandbox " in server_log and " stopped: " not in server_log, server_log[:2000]  # warm
    assert all(" exit 0 after " in line for line in served), server_log[-2000:]
    socket_path = server_log.split("listening on ")[1].split()[0]
    assert not os.path.exists(os.path.dirname(socket_path))


def _slurm_ready() -> str | None:
    if not shutil.which("sinfo"):
        return "sinfo not installed"
    try:
        out = subprocess.run(["sinfo", "--noheader", "--format=%T"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {exc}"
    states = out.stdout.split()
    if out.returncode != 0 or not any(s in ("idle", "mixed", "allocated") for s in states):
        return f"no usable SLURM node (sinfo rc {out.returncode}: {out.stdout.strip() or out.stderr.strip()})"
    return None


@pytest.mark.slurm
def test_slurm_profile_gives_the_local_index(baseline, tmp_path):
    """The SLURM profile reruns one job of each kind that goes to the cluster (a Solver run, a
    construction run, a proof check) through sbatch, everything else on the submitting host, and
    the Index is the local run's. One of each kind, not the whole run again: what is under test is
    the profile (submission, resources, status polling, a Ray inside the job), and on a 2-core
    machine each SLURM job costs seconds of queueing."""
    why = _slurm_ready()
    if why:
        if os.environ.get("TCSEXAM_REQUIRE_SLURM") == "1":
            pytest.fail(f"TCSEXAM_REQUIRE_SLURM=1 but {why} (run .ci/start-slurm.sh)")
        pytest.skip(why)
    ws = copy_of_finished_run(baseline, tmp_path / "ws")
    rerun = {
        kind: sorted((ws / OUT / kind).glob(f"*/*/*/{done}"))[0].parent
        for kind, done in (("solver", "records.json"), ("construction", "records.json"), ("proof", "verdict.json"))
    }
    for folder in rerun.values():
        shutil.rmtree(folder)
    before = len(list((ws / ".snakemake" / "log").glob("*.log")))
    snakemake(
        ws,
        "--profile",
        "workflow/profiles/slurm",
        "--workflow-profile",
        "workflow/profiles/slurm-ci",  # CI's overlay: squeue, fast polling
        "--configfile",
        CONFIG,
        "--jobs",
        "4",
        "--config",
        "batch={enabled: false}",  # one SLURM job per rerun job: batching on SLURM (auto) is test_slurm_cluster's
        timeout=900,
    )
    logs = sorted((ws / ".snakemake" / "log").glob("*.log"), key=lambda p: p.stat().st_mtime)
    log = "".join(p.read_text() for p in logs[before:])
    submitted = log.count("has been submitted with SLURM jobid")
    assert submitted == len(rerun), f"{submitted} jobs went through sbatch (expected {len(rerun)}: {rerun})"
    for kind, folder in rerun.items():
        assert folder.is_dir(), f"the {kind} job was not rerun: {folder}"
    run_log = (rerun["solver"] / "run.log").read_text()
    # a cluster job never joins the submit host's head: a Ray of its own, or (a small task) none
    assert "on Ray at" not in run_log and ("on local Ray" in run_log or "no Ray" in run_log)
    assert index_of(ws) == index_of(baseline)


def test_resume_after_sigkill_runs_only_unfinished_instances(baseline, tmp_path):
    ws = make_workspace(tmp_path / "ws")
    total = 2 * 5 * 2  # models x tasks x instances
    proc = subprocess.Popen(
        [SNAKEMAKE, "--cores", "2", "--configfile", CONFIG],
        cwd=ws,
        env=_env(ws),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            done = len(record_states(ws))
            if done >= 4 or proc.poll() is not None:
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the workflow finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the workflow and every job it started
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    time.sleep(1.0)  # let Ray reap the killed drivers' actors
    before = record_states(ws)
    assert 0 < len(before) < total, len(before)
    assert not (ws / OUT / "index.json").exists()
    try:
        snakemake(ws, "--unlock", "--configfile", CONFIG)  # the killed run's lock
        snakemake(ws, "--cores", "2", "--configfile", CONFIG, "--rerun-incomplete")
    finally:
        stop_ray_head(ws)
    after = record_states(ws)
    assert len(after) == total
    for path, state in before.items():
        assert after[path] == state, f"{path} was executed again although it had finished"
    assert index_of(ws) == index_of(baseline)


def test_repair_infrastructure_error(baseline, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(baseline, ws, symlinks=True)
    base = ws / OUT / "solver/demo-weak/coloring-dimacs/1"
    victim = base / "records" / "queen5_5.json"
    rec = json.loads(victim.read_text())
    rec.update(status="infrastructure_error", A=None, reward=None, message="ray worker lost (forced by the test)")
    rec["digest"] = record_digest(rec, find_key(victim))  # as the harness would (an unsealed edit is set aside)
    victim.write_text(json.dumps(rec))
    records = json.loads((base / "records.json").read_text())
    records = [rec if r["instance"] == "queen5_5" else r for r in records]
    (base / "records.json").write_text(json.dumps(records))
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
        index = index_of(ws)
        assert index["status"] == "incomplete"
        weak = index["models"]["demo-weak"]
        assert weak["index"] is None
        assert [(i["item"], i["reason"]) for i in weak["issues"]] == [("coloring-dimacs", "judge_failed")]
        assert index["models"]["demo-fast"] == index_of(baseline)["models"]["demo-fast"]
        row = json.loads((base / "row.json").read_text())
        assert row["score_status"] == "judge_failed" and "infrastructure_error" in row["note"]

        before = record_states(ws)
        rep = subprocess.run(
            [
                str(BIN / "tcsexam"),
                "repair",
                "--records-dir",
                str(base / "records"),
                "--output",
                str(base / "records.json"),
            ],
            cwd=ws,
            env=_env(ws),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert rep.returncode == 0, rep.stderr
        assert not victim.exists() and not (base / "records.json").exists()
        # the documented rerun: a plain run (the row and everything after it were made from a
        # records.json that is gone: they are set aside and rebuilt)
        snakemake(ws, "--cores", "2", "--configfile", CONFIG)
    finally:
        stop_ray_head(ws)
    after = record_states(ws)
    changed = sorted(p for p in after if before.get(p) != after[p])
    assert changed == [str(victim.relative_to(ws))], changed
    assert json.loads(victim.read_text())["status"] == "ok"
    assert index_of(ws) == index_of(baseline)


def test_lint_is_clean():
    proc = snakemake(ROOT, "--lint", timeout=300, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in text, text[-4000:]


def test_dry_run_builds_the_full_dag_of_10_models_and_3_attempts(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "workflow_dag.py"),
            "--models",
            "10",
            "--attempts",
            "3",
            "--workdir",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=_env(ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = dict(line.split()[1:3] for line in proc.stdout.splitlines() if line.startswith("job "))
    assert jobs["run"] == "390" and jobs["attempts_solver_row"] == "390", proc.stdout  # 10 x 13 x 3
    assert jobs["attempts_verdict_rows"] == "10" and jobs["score"] == "1", proc.stdout


def test_workflow_with_run_sandbox_docker(tmp_path):
    """The tiny config with `run.sandbox: docker` against a real engine: every Solver record ran in
    the candidate image (its id recorded), and index.json says so, without a `local` warning."""
    from tcsexam.errors import InputError
    from tcsexam.runner.sandboxes import get_sandbox

    box = get_sandbox("docker")
    try:
        box.check_available()
    except InputError as exc:
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("TCSEXAM_REQUIRE_DOCKER") == "1":
            pytest.fail(f"the Docker engine must run here: {exc}")
        pytest.skip(str(exc))
    ws = make_workspace(tmp_path / "ws")
    config = ws / "config" / "test" / "docker.yaml"
    config.write_text((ws / CONFIG).read_text().replace("\nrun:\n", "\nrun:\n  sandbox: docker\n", 1))
    try:
        snakemake(ws, "--cores", "2", "--configfile", str(config.relative_to(ws)), timeout=1200)
    finally:
        stop_ray_head(ws)
    image = box.image_id()
    for path in (ws / OUT / "solver").glob("*/*/*/records.json"):
        for record in json.loads(path.read_text()):
            assert record["sandbox"] == "docker" and record["sandbox_image"] == image, (path, record)
    index = index_of(ws)
    assert index["status"] == "complete"
    assert all(m["solver_sandboxes"] == ["docker"] for m in index["models"].values())
    assert index["warnings"] == []


def test_local_sandbox_is_warned_about_in_index(baseline, tmp_path):
    """A run in which candidates ran under `local` says so in index.json (and on the report's
    figure). One model is enough to see the warning (each model's runs rerun under the new sandbox)."""
    ws = make_workspace(tmp_path / "ws")
    config = ws / "config" / "test" / "local.yaml"
    text = (ws / CONFIG).read_text().replace("\nrun:\n", "\nrun:\n  sandbox: local\n", 1)
    config.write_text("".join(line for line in text.splitlines(True) if not line.startswith("  - name: demo-weak")))
    try:
        snakemake(ws, "--cores", "2", "--configfile", str(config.relative_to(ws)))
    finally:
        stop_ray_head(ws)
    index = index_of(ws)
    assert list(index["models"]) == ["demo-fast"], index["models"]
    assert index["models"]["demo-fast"]["solver_sandboxes"] == ["local"]
    assert len(index["warnings"]) == 1 and "sandbox local" in index["warnings"][0], index["warnings"]
    default = index_of(baseline)  # the tiny config leaves `auto`: the strongest sandbox here
    assert all("local" not in m["solver_sandboxes"] or default["warnings"] for m in default["models"].values())
