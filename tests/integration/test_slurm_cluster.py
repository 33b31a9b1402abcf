"""The workflow with the SLURM profile on a multi-node cluster (.ci/start-slurm-cluster.sh: each
compute node in its own network, UTS, mount and PID namespaces, with its own hostname, address,
/tmp, /var/tmp and /dev/shm; the host's other folders are the shared file system).

One test, because each step needs the one before: the tiny config (config/test/config.yaml) runs
from nothing across both nodes, batched as batch.enabled: auto does on a cluster (6 batch jobs of its 40 cluster jobs,
sized by the local run's timings: docs/workflow.md, SLURM) (every SLURM job's node is read back from the controller and the
Solver jobs' logs name the node they ran on); mid-run one node is powered off (every process on it
dies at once, the batch it ran with it); once the controller has given its jobs up it is powered on again, with what it left
in its private /tmp; the run, or its rerun with the same command, ends with the index.json of the
local run (conftest.finished_tiny_run). Nothing the lost node left (a Solver attempt half done, its
heartbeat, its Ray, its scratch) stops the other node or itself after the reboot.

Skipped without the cluster (its description /etc/tcsexam-cluster/cluster.json, or
$TCSEXAM_SLURM_CLUSTER), failed instead when TCSEXAM_REQUIRE_SLURM_CLUSTER=1 (CI). Powering a node
off needs root (the cluster script does it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from test_workflow import CONFIG, OUT, ROOT, SNAKEMAKE, _env, index_of, make_workspace, snakemake

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

CLUSTER_SCRIPT = ROOT / ".ci" / "start-slurm-cluster.sh"
DESCRIPTION = Path(os.environ.get("TCSEXAM_SLURM_CLUSTER", "/etc/tcsexam-cluster/cluster.json"))
PROFILE_ARGS = ("--profile", "workflow/profiles/slurm", "--workflow-profile", "workflow/profiles/slurm-ci")
# batching (few, long jobs) as on any cluster: batch.enabled is left at auto, which the main process
# and the Snakemake inside each SLURM job must both resolve to batched (tcsexam.workflow.batching.decide;
# else the jobs find no rule run_batch); sized by the local run's timings into 6 batch jobs: both
# nodes finish one while more are left, so a node can be lost in the middle of one
BATCH = ("--config", "batch={target_min: 30, min_batches: 6, timings: [timings]}")
USABLE = ("idle", "mixed", "allocated", "completing")


def _slurm_env(cluster: dict) -> dict[str, str]:
    env = dict(os.environ)
    env["SLURM_CONF"] = cluster["slurm_conf"]
    return env


def _cluster_or_why() -> tuple[dict | None, str | None]:
    if not shutil.which("sinfo"):
        return None, "sinfo not installed"
    if not DESCRIPTION.is_file():
        return None, f"no multi-node cluster description {DESCRIPTION} (run .ci/start-slurm-cluster.sh)"
    cluster = json.loads(DESCRIPTION.read_text())
    try:
        out = subprocess.run(
            ["sinfo", "--noheader", "--Node", "--format=%N %T"],
            capture_output=True,
            text=True,
            timeout=10,
            env=_slurm_env(cluster),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"sinfo failed: {exc}"
    states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
    usable = [n["name"] for n in cluster["nodes"] if states.get(n["name"]) in USABLE]
    if out.returncode != 0 or len(usable) < 2:
        return (
            None,
            f"fewer than 2 usable nodes (sinfo rc {out.returncode}: {out.stdout.strip() or out.stderr.strip()})",
        )
    return cluster, None


@pytest.fixture
def cluster() -> dict:
    cluster, why = _cluster_or_why()
    if why:
        if os.environ.get("TCSEXAM_REQUIRE_SLURM_CLUSTER") == "1":
            pytest.fail(f"TCSEXAM_REQUIRE_SLURM_CLUSTER=1 but {why}")
        pytest.skip(why)
    if os.geteuid() != 0:
        pytest.skip("powering a node off needs root (.ci/start-slurm-cluster.sh stop-node)")
    return cluster


def _cluster_cmd(cluster: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), *args], env=_slurm_env(cluster), capture_output=True, text=True, timeout=120
    )


def _jobs(cluster: dict, ws: Path) -> dict[str, tuple[str, str, str]]:
    """SLURM job id -> (node, state, comment) of every job this workspace's runs submitted, from the
    controller (MinJobAge keeps finished jobs visible)."""
    ids = set()
    for log in (ws / ".snakemake" / "log").glob("*.log"):
        ids.update(re.findall(r"submitted with SLURM jobid (\d+)", log.read_text(errors="replace")))
    if not ids:
        return {}
    out = subprocess.run(
        ["squeue", "--noheader", "--states=all", f"--jobs={','.join(sorted(ids))}", "--format=%i|%N|%T|%k"],
        capture_output=True,
        text=True,
        timeout=20,
        env=_slurm_env(cluster),
    )
    jobs = {}
    for line in out.stdout.splitlines():
        job, node, state, comment = line.split("|", 3)
        jobs[job] = (node, state, comment)
    return jobs


def _start_workflow(ws: Path, cluster: dict) -> subprocess.Popen:
    env = _env(ws)
    env["SLURM_CONF"] = cluster["slurm_conf"]
    return subprocess.Popen(
        [SNAKEMAKE, *PROFILE_ARGS, "--configfile", CONFIG, "--jobs", "4", *BATCH],
        cwd=ws,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_tiny_config_across_nodes_survives_a_lost_node(cluster, finished_tiny_run, monkeypatch):
    local_index = index_of(finished_tiny_run)
    names = [n["name"] for n in cluster["nodes"]]
    victim = names[-1]
    ws = make_workspace(Path(tempfile.mkdtemp(prefix="slurm-cluster-", dir=cluster["shared"])) / "ws")
    shutil.copytree(finished_tiny_run / "results", ws / "timings", symlinks=True)  # what sizes the batches
    monkeypatch.setenv("SLURM_CONF", cluster["slurm_conf"])  # snakemake() passes os.environ on
    proc = _start_workflow(ws, cluster)
    stopped = False
    try:
        # wait until both nodes finished a job and the victim runs one: then power it off
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            jobs = _jobs(cluster, ws).values()
            done_on = {node for node, state, _ in jobs if state == "COMPLETED"}
            running_on_victim = any(node == victim and state == "RUNNING" for node, state, _ in jobs)
            if set(names) <= done_on and running_on_victim:
                break
            time.sleep(0.5)
        assert proc.poll() is None, "the workflow ended before a node could be stopped"
        down = _cluster_cmd(cluster, "stop-node", victim)
        assert down.returncode == 0, down.stderr
        stopped = True
        lost = {job for job, (node, state, _) in _jobs(cluster, ws).items() if node == victim and state == "RUNNING"}
        # the controller gives the lost jobs up (NODE_FAIL: SlurmdTimeout), Snakemake resubmits
        # them to the node that works; then the lost node is powered on again (a reboot) with what
        # it left in its /tmp, and takes jobs again
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if all(_jobs(cluster, ws).get(j, ("", "RUNNING", ""))[1] != "RUNNING" for j in lost):
                break
            time.sleep(1)
        up = _cluster_cmd(cluster, "start-node", victim)
        assert up.returncode == 0, f"{victim} did not come back: {up.stderr}"
        stopped = False
        first_rc = proc.wait(timeout=1800)
        # resume: the same command again (a no-op when the first run already recovered by itself)
        snakemake(ws, *PROFILE_ARGS, "--configfile", CONFIG, "--jobs", "4", *BATCH, timeout=1800)
        jobs = _jobs(cluster, ws)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if stopped:
            up = _cluster_cmd(cluster, "start-node", victim)
            assert up.returncode == 0, f"{victim} did not come back: {up.stderr}"
        # a failed test leaves no job of its own in the queue
        left = [j for j, (_, state, _) in _jobs(cluster, ws).items() if state in ("PENDING", "RUNNING")]
        if left:
            subprocess.run(["scancel", *left], env=_slurm_env(cluster), capture_output=True, timeout=30)

    # batched with batch.enabled left at auto: every submission a batch job (SLURM's comment names the
    # rule), and each ran its members (a job's Snakemake that planned no batches has no rule for it)
    rules = {comment.split("_wildcards_")[0] for _, _, comment in jobs.values()}
    assert rules == {"rule_run_batch"}, rules
    assert len(list((ws / OUT / "batches").glob("*.json"))) == 6
    # every cluster job ran on a node of this cluster, on both of them, and the lost ones failed
    nodes = {node for node, _, _ in jobs.values()}
    assert set(names) <= nodes, f"jobs ran on {nodes}, not on every node of {names}"
    assert lost and all(jobs[j][1] in ("NODE_FAIL", "FAILED", "CANCELLED", "TIMEOUT") for j in lost), (
        lost,
        {j: jobs.get(j) for j in lost},
    )
    # the Solver jobs' own logs name the node they ran on (tcsexam run's plan line)
    hosts = set()
    for log in (ws / OUT / "solver").glob("*/*/*/run.log"):
        hosts.update(re.findall(r"uid \d+ on (\S+) \(SLURM job", log.read_text(errors="replace")))
    assert hosts and hosts <= set(names), hosts
    assert index_of(ws) == local_index, f"first run rc {first_rc}; index differs from the local run's"
    shutil.rmtree(ws.parent, ignore_errors=True)
