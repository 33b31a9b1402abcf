"""`tcsexam plan` (tcsexam.campaign.planner): the schedule, the timings' sources, the jobs of a real
config, the cluster description, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tcsexam.campaign.planner import (
    Batching,
    Cluster,
    Job,
    JobKind,
    Overheads,
    Timings,
    TimingSource,
    batch_jobs,
    campaign_jobs,
    estimate,
    load_config,
    schedule,
)
from tcsexam.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
TINY = ROOT / "config" / "test" / "config.yaml"
NONE = Overheads(job_s=0, ray_s=0, startup_s=0, tail_s=0)


def _job(work: float, threads: int = 1, kind: JobKind = JobKind.SOLVER) -> Job:
    return Job(kind, "m", "t", "1", 1, work, threads, TimingSource.MEASURED)


def test_equal_jobs_fill_every_core_and_pay_the_queue_per_submission():
    jobs = [_job(10) for _ in range(8)]
    assert schedule(jobs, Cluster(nodes=2, cores_per_node=2, queue_s=0), NONE) == 20
    assert schedule(jobs, Cluster(nodes=2, cores_per_node=2, queue_s=1), NONE) == 22
    assert schedule(jobs, Cluster(nodes=4, cores_per_node=2, queue_s=0), NONE) == 10
    # a job's overhead lengthens each job; --jobs 1 runs them one after another
    assert schedule(jobs, Cluster(nodes=2, cores_per_node=2, queue_s=0), Overheads(job_s=5, ray_s=0)) == 30
    # a Solver job also starts its own Ray; the others do not
    assert _job(10).length_s(Overheads(job_s=5, ray_s=3)) == 18
    assert _job(10, kind=JobKind.PROOF).length_s(Overheads(job_s=5, ray_s=3)) == 15
    assert schedule(jobs, Cluster(nodes=2, cores_per_node=2, queue_s=0, max_jobs=1), NONE) == 80


def test_longest_first_and_multi_thread_jobs_hold_their_cores():
    # 30 + 10 + 10 + 10 on 2 cores: the long one alone, the short ones beside it
    assert schedule([_job(10), _job(30), _job(10), _job(10)], Cluster(1, 2, 0), NONE) == 30
    # a 2-thread job of 40 s of work takes 20 s and both cores of its node
    assert schedule([_job(40, threads=2), _job(20, threads=2)], Cluster(1, 2, 0), NONE) == 30
    assert schedule([_job(40, threads=2), _job(20, threads=2)], Cluster(2, 2, 0), NONE) == 20


def test_estimate_counts_core_hours_held_and_the_ideal():
    jobs = [_job(3600), _job(1800, threads=2, kind=JobKind.PROOF)]
    est = estimate(
        jobs, Cluster(nodes=1, cores_per_node=2, queue_s=0), Overheads(job_s=36, ray_s=0, startup_s=10, tail_s=20)
    )
    assert est.submissions == 2 and est.jobs_by_kind == {"solver": 1, "proof": 1}
    assert est.ideal_core_hours == pytest.approx(1.5)
    # held: (3600 + 36) x 1 core + (900 + 36) x 2 cores
    assert est.core_hours == pytest.approx((3636 + 2 * 936) / 3600)
    assert est.wall_s == pytest.approx(10 + est.schedule_s + 20)
    assert est.ideal_wall_s == pytest.approx(5400 / 2)


def test_timings_come_from_records_and_verdicts_else_the_limit(tmp_path):
    att = tmp_path / "solver" / "m" / "sat" / "1"
    att.mkdir(parents=True)
    (att / "records.json").write_text(
        json.dumps([{"task": "sat", "instance": "a", "wall_s": 2.0}, {"task": "sat", "instance": "b", "wall_s": 4.0}])
    )
    other = tmp_path / "solver" / "m" / "sat" / "2"
    other.mkdir(parents=True)
    (other / "records.json").write_text(json.dumps([{"task": "sat", "instance": "a", "wall_s": 6.0}]))
    proof = tmp_path / "proof" / "m" / "thm" / "1"
    proof.mkdir(parents=True)
    (proof / "verdict.json").write_text(json.dumps({"item": "thm", "wall_s": 1.5}))
    t = Timings([tmp_path])
    assert t.work("sat", ["a", "b"], 60) == (4.0 + 4.0, TimingSource.MEASURED)  # median of a: 2 and 6
    assert t.work("sat", ["a", "c"], 60) == (4.0 + 4.0, TimingSource.PARTLY_MEASURED)  # c at the task's mean
    assert t.work("tsp", ["x", "y"], 60) == (120, TimingSource.LIMIT)
    assert t.work("thm", [""], 20) == (1.5, TimingSource.MEASURED)


def test_the_tiny_config_plans_its_workflows_cluster_jobs():
    config = load_config(TINY, ROOT)
    jobs = campaign_jobs(config, root=ROOT)
    kinds = {k: sum(j.kind == k for j in jobs) for k in JobKind}
    # what `snakemake -n` submits for it: 10 run, 10 construction_run, 20 proof_check
    assert kinds == {JobKind.SOLVER: 10, JobKind.CONSTRUCTION: 10, JobKind.PROOF: 20}
    assert {j.model for j in jobs} == {"demo-fast", "demo-weak"}
    solver = [j for j in jobs if j.kind == JobKind.SOLVER]
    assert all(j.instances == 2 and j.source == TimingSource.LIMIT for j in solver)
    # a hypothetical campaign: 20 models x 3 attempts
    big = campaign_jobs(config, root=ROOT, models=20, attempts=3)
    assert len(big) == 20 * 3 * 20 and len({j.model for j in big}) == 20


def test_cluster_description_as_the_test_cluster_writes_it(tmp_path):
    desc = tmp_path / "cluster.json"
    desc.write_text(json.dumps({"nodes": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "cores_per_node": 4}))
    assert Cluster.from_file(desc) == Cluster(nodes=3, cores_per_node=4)
    assert Cluster.from_file(desc, nodes=40, queue_s=30.0).nodes == 40
    desc.write_text(json.dumps({"nodes": 2, "cores_per_node": "many"}))
    with pytest.raises(InputError, match="cores_per_node must be a whole number"):
        Cluster.from_file(desc)
    with pytest.raises(InputError, match="must be >= 1"):
        Cluster(nodes=0, cores_per_node=2)


def _tcsexam(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tcsexam", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_cli_prints_the_estimate_and_refuses_a_missing_cluster_in_one_line():
    tiny = ("plan", "--configfile", str(TINY))
    out = _tcsexam(*tiny, "--nodes", "2", "--cores-per-node", "1", "--json", "--no-batch")
    assert out.returncode == 0, out.stderr
    est = json.loads(out.stdout)
    assert est["submissions"] == 40 and est["cores"] == 2 and est["wall_s"] > est["schedule_s"]
    text = _tcsexam(*tiny, "--nodes", "40", "--cores-per-node", "16", "--models", "20", "--no-batch")
    assert text.returncode == 0, text.stderr
    assert "submissions: 400" in text.stdout and "core-hours:" in text.stdout and "wall time:" in text.stdout
    assert "unbatched" in text.stdout
    bad = _tcsexam("plan", "--configfile", str(TINY))
    assert bad.returncode == 1 and bad.stderr.strip().count("\n") == 0
    assert "--cluster FILE, or --nodes and --cores-per-node" in bad.stderr


def test_batched_mode_packs_the_jobs_as_the_workflow_does_and_pays_the_overheads_once_per_batch():
    jobs = [_job(600, kind=JobKind.PROOF) for _ in range(6)] + [_job(1200)]
    jobs = [Job(j.kind, "m", f"i{n}", "1", 1, j.work_s, 1, j.source) for n, j in enumerate(jobs)]
    # 4,800 s of work in 30 min batches on one thread: three batches, the Solver run (its Ray) among them
    batches = batch_jobs(jobs, 1, Batching(target_min=30, member_overhead_s=0))
    assert len(batches) == 3 and sum(b.members for b in batches) == 7
    assert sum(b.work_s for b in batches) == 4800
    assert sum(b.kind == JobKind.SOLVER for b in batches) == 1
    over = Overheads(job_s=30, ray_s=20, startup_s=0, tail_s=0, member_s=2)
    solver_batch = next(b for b in batches if b.kind == JobKind.SOLVER)
    assert solver_batch.length_s(over) == solver_batch.work_s + 30 + 20 + 2 * solver_batch.members
    est = estimate(batches, Cluster(nodes=3, cores_per_node=1, queue_s=0), over)
    assert est.submissions == 3 and est.jobs_by_kind == {"batch": 3}
    # against one job each: 7 submissions, each paying the job's start
    alone = estimate(jobs, Cluster(nodes=3, cores_per_node=1, queue_s=0), over)
    assert alone.submissions == 7 and alone.core_hours > est.core_hours
    # the tail: a batch's members have their take and row jobs on the submitting host once it ends
    quick, slow = (Overheads(job_s=30, ray_s=20, startup_s=0, tail_s=0, member_s=2, take_s=t) for t in (0, 1))
    one = batch_jobs(jobs, 1, Batching(target_min=600))
    three = Cluster(nodes=3, cores_per_node=1, queue_s=0)
    assert len(one) == 1 and estimate(one, three, slow).wall_s - estimate(one, three, quick).wall_s == 7
    # batches that end early have theirs done while the others run
    assert estimate(batches, three, slow).wall_s - estimate(batches, three, quick).wall_s < 7
    # min_batches spreads a small campaign; the config's settings are read, the flags win
    assert len(batch_jobs(jobs, 1, Batching(target_min=600, min_batches=4))) == 4
    assert Batching.from_config({"batch": {"target_min": 10, "min_batches": 3}}, min_batches=5) == Batching(10, 5)
    with pytest.raises(InputError, match="target_min"):
        Batching.from_config({}, target_min=0)


def test_cli_batched_estimate_of_the_tiny_config():
    out = _tcsexam("plan", "--configfile", str(TINY), "--nodes", "2", "--cores-per-node", "1", "--batch")
    assert out.returncode == 0, out.stderr
    assert "batched (config batch): 40 job(s) in" in out.stdout


def test_cli_plans_batches_as_the_workflow_does_on_a_cluster_unless_told_not_to(tmp_path):
    cluster = ("--nodes", "2", "--cores-per-node", "1", "--json")
    # the config's batch.enabled: auto (its default) batches a cluster run, and a plan is of one
    auto = _tcsexam("plan", "--configfile", str(TINY), *cluster)
    assert auto.returncode == 0, auto.stderr
    batched = json.loads(auto.stdout)
    assert list(batched["jobs_by_kind"]) == ["batch"] and batched["submissions"] < 40  # of 40 short jobs
    off = tmp_path / "unbatched.yaml"
    off.write_text(TINY.read_text() + "\nbatch: {enabled: false}\n")
    assert json.loads(_tcsexam("plan", "--configfile", str(off), *cluster).stdout)["submissions"] == 40
    # the flags win over the config; a batch size asks for batches, and contradicts --no-batch
    forced = json.loads(_tcsexam("plan", "--configfile", str(off), *cluster, "--batch").stdout)
    assert forced["submissions"] == batched["submissions"]
    sized = _tcsexam("plan", "--configfile", str(off), *cluster, "--min-batches", "7")
    assert json.loads(sized.stdout)["submissions"] == 7
    bad = _tcsexam("plan", "--configfile", str(TINY), *cluster, "--no-batch", "--min-batches", "2")
    assert bad.returncode == 1 and bad.stderr.strip().count("\n") == 0
    assert "--min-batches sizes batches, --no-batch plans none" in bad.stderr
