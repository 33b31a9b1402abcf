"""A workflow run on a SLURM cluster, measured, against `tcsexam plan`'s estimate of it.

Runs the config with the SLURM profile (and CI's overlay) in a fresh workspace on the cluster's
shared folder (or reads a finished one: --workspace), then takes from the controller (squeue; the
test cluster keeps finished jobs for MinJobAge) each job's submit, start and end, and from the
results each job's work (the records' and verdicts' wall_s), and prints:

- submissions, wall time; Snakemake's start (its log's first line to the first submission) and the
  tail (the last cluster job's end to the workflow's end);
- per job kind: the job's length beyond its work (median, mean) and the queue (submit to start);
- `tcsexam plan`'s estimate for the same config and cluster, with the overheads given (the
  planner's defaults unless --job-overhead/--startup/--tail/--queue), and the ratio measured /
  estimated.

    SLURM_CONF=/etc/tcsexam-cluster/slurm.conf .venv/bin/python benchmarks/slurm_campaign.py \
        --cluster /etc/tcsexam-cluster/cluster.json [--configfile config/test/config.yaml] [--jobs 4]
        [--workspace DIR] [--nodes N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "src"))

from tcsexam.campaign import planner  # noqa: E402

BATCH = "batch"  # rule run_batch: several of the others in one job (config batch)
RULE_KIND = {
    "run": planner.JobKind.SOLVER,
    "construction_run": planner.JobKind.CONSTRUCTION,
    "proof_check": planner.JobKind.PROOF,
}


def run_workflow(ws: Path, configfile: str, jobs: int, config: list[str]) -> tuple[float, float]:
    from test_workflow import SNAKEMAKE, _env

    env = _env(ws)
    env["SLURM_CONF"] = os.environ.get("SLURM_CONF", "/etc/slurm/slurm.conf")
    argv = [SNAKEMAKE, "--profile", "workflow/profiles/slurm", "--workflow-profile", "workflow/profiles/slurm-ci"]
    start = time.time()
    proc = subprocess.run(
        [*argv, "--configfile", configfile, "--jobs", str(jobs), *(["--config", *config] if config else [])],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
    )
    end = time.time()
    if proc.returncode != 0:
        sys.exit(f"snakemake failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return start, end


def slurm_jobs(ws: Path) -> list[dict]:
    ids = set()
    for log in (ws / ".snakemake" / "log").glob("*.log"):
        ids.update(re.findall(r"submitted with SLURM jobid (\d+)", log.read_text(errors="replace")))
    out = subprocess.run(
        ["squeue", "--noheader", "--states=all", f"--jobs={','.join(sorted(ids))}", "--format=%i|%V|%S|%e|%N|%T|%k"],
        capture_output=True,
        text=True,
        check=True,
    )
    jobs = []
    for line in out.stdout.splitlines():
        job, submit, start, end, node, state, comment = line.split("|", 6)
        ts = [datetime.fromisoformat(t).timestamp() for t in (submit, start, end)]
        batch = re.fullmatch(r"rule_run_batch_wildcards_(.+)", comment)
        m = re.fullmatch(r"rule_(\w+?)_wildcards_(.+)_([^_]+)_(\d+)", comment)
        if batch:
            what = {"kind": BATCH, "model": "", "item": batch.group(1), "attempt": ""}
        elif m and m.group(1) in RULE_KIND:
            what = {"kind": RULE_KIND[m.group(1)], "model": m.group(2), "item": m.group(3), "attempt": m.group(4)}
        else:
            continue
        jobs.append(
            {
                "id": job,
                **what,
                "submit": ts[0],
                "start": ts[1],
                "end": ts[2],
                "node": node,
                "state": state,
            }
        )
    return jobs


def _batch_config(config: list[str]) -> dict:
    """The `batch` settings among Snakemake --config values (`batch={enabled: true, ...}`)."""
    import yaml

    for item in config:
        key, _, value = item.partition("=")
        if key == "batch":
            return yaml.safe_load(value) or {}
    return {}


def job_work(ws: Path, out: str, job: dict) -> float:
    if job["kind"] == BATCH:  # its members' work, from the batch's summary
        summary = json.loads((ws / out / "batches" / f"{job['item']}.json").read_text())
        members = [dict(zip(("kind", "model", "item", "attempt"), m["key"].split("/"))) for m in summary["members"]]
        return sum(job_work(ws, out, m) for m in members)
    folder = ws / out / job["kind"] / job["model"] / job["item"] / job["attempt"]
    if job["kind"] == planner.JobKind.PROOF:
        return float(json.loads((folder / "verdict.json").read_text()).get("wall_s") or 0.0)
    return sum(float(r.get("wall_s") or 0.0) for r in json.loads((folder / "records.json").read_text()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cluster", required=True, help="the cluster description (.ci/start-slurm-cluster.sh writes one)")
    ap.add_argument(
        "--configfile", default="config/test/config.yaml", help="relative: the workspace's; absolute: copied into it"
    )
    ap.add_argument("--jobs", type=int, default=4, help="Snakemake's --jobs")
    ap.add_argument("--workspace", help="a finished workspace to read instead of running")
    ap.add_argument("--nodes", type=int, help="nodes the run had (default: the description's)")
    ap.add_argument("--job-overhead", type=float)
    ap.add_argument("--ray-start", type=float)
    ap.add_argument("--startup", type=float)
    ap.add_argument("--tail", type=float)
    ap.add_argument("--queue", type=float)
    ap.add_argument("--member-overhead", type=float, help="seconds per member of a batch job (batched runs)")
    ap.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE", help="Snakemake --config (e.g. batch=...)")
    ap.add_argument(
        "--timings-from",
        metavar="DIR",
        help="an earlier run's results tree, copied into the workspace as timings/ (config batch.timings: [timings])",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    desc = json.loads(Path(args.cluster).read_text())
    if args.workspace:
        ws = Path(args.workspace)
        logs = sorted((ws / ".snakemake" / "log").glob("*.log"))
        t0 = datetime.strptime(logs[0].name.split(".")[0], "%Y-%m-%dT%H%M%S").timestamp()
        t1 = max(p.stat().st_mtime for p in logs)
    else:
        from test_workflow import make_workspace

        ws = make_workspace(Path(tempfile.mkdtemp(prefix="slurm-campaign-", dir=desc["shared"])) / "ws")
        if os.path.isabs(args.configfile):
            shutil.copy2(args.configfile, ws / "config" / "benchmark.yaml")
            args.configfile = "config/benchmark.yaml"
        if args.timings_from:
            shutil.copytree(args.timings_from, ws / "timings", symlinks=True)
        t0, t1 = run_workflow(ws, args.configfile, args.jobs, args.config)
    config = planner.load_config(ws / args.configfile, ws)
    out = f"{config['results_dir']}/{config['suite']}/{config.get('protocol', 'offline')}"
    jobs = [j for j in slurm_jobs(ws) if j["state"] == "COMPLETED"]
    for j in jobs:
        j["work"] = job_work(ws, out, j)
        j["over"] = j["end"] - j["start"] - j["work"]
    kinds = {}
    for kind in [*planner.JobKind, BATCH]:
        mine = [j for j in jobs if j["kind"] == kind]
        if mine:
            kinds[str(kind)] = {
                "jobs": len(mine),
                "overhead_median_s": statistics.median(j["over"] for j in mine),
                "overhead_mean_s": statistics.fmean(j["over"] for j in mine),
                "queue_mean_s": statistics.fmean(j["start"] - j["submit"] for j in mine),
            }
    # the queue as the planner means it: a core coming free (or the submission, if later) to the
    # next job starting on that node
    gaps, last_on = [], {}
    for j in sorted(jobs, key=lambda j: j["start"]):
        prev = last_on.get(j["node"])
        gaps.append(j["start"] - (j["submit"] if prev is None else max(j["submit"], prev)))
        last_on[j["node"]] = j["end"]
    others = [j["over"] for j in jobs if j["kind"] in (planner.JobKind.CONSTRUCTION, planner.JobKind.PROOF)]
    solver = [j["over"] for j in jobs if j["kind"] == planner.JobKind.SOLVER]
    job_s = statistics.median(others) if others else None
    ray_s = statistics.median(solver) - job_s if solver and job_s is not None else None
    # a batch job: each member's wall in the batch beyond its work (member_s), and the batch's length
    # beyond its members' walls (the job's start, Snakemake in it, the batch's Ray head)
    member_over, batch_over = [], []
    for j in jobs:
        if j["kind"] == BATCH:
            summary = json.loads((ws / out / "batches" / f"{j['item']}.json").read_text())
            walls = 0.0
            for m in summary["members"]:
                kind, model, item, attempt = m["key"].split("/")
                work = job_work(ws, out, {"kind": kind, "model": model, "item": item, "attempt": attempt})
                member_over.append(m["wall_s"] - work)
                walls += m["wall_s"]
            batch_over.append(j["end"] - j["start"] - walls / max(1, summary["threads"]))
    first_submit = min(j["submit"] for j in jobs)
    last_end = max(j["end"] for j in jobs)
    measured = {
        "wall_s": t1 - t0,
        "submissions": len(jobs),
        "startup_s": first_submit - t0,
        "schedule_s": last_end - first_submit,
        "tail_s": t1 - last_end,
        "nodes_used": sorted({j["node"] for j in jobs}),
        "overhead_mean_s": statistics.fmean(j["over"] for j in jobs),
        "job_overhead_s": job_s,
        "ray_s": ray_s,
        "queue_s": statistics.median(gaps),
        "member_overhead_s": statistics.median(member_over) if member_over else None,
        "batch_overhead_s": statistics.median(batch_over) if batch_over else None,
        "kinds": kinds,
    }
    cluster = planner.Cluster.from_file(args.cluster, nodes=args.nodes, queue_s=args.queue, max_jobs=args.jobs)
    overheads = planner.Overheads.given(
        job_s=args.job_overhead,
        ray_s=args.ray_start,
        startup_s=args.startup,
        tail_s=args.tail,
        member_s=args.member_overhead,
    )
    timings = planner.Timings([ws / config["results_dir"]])
    planned = planner.campaign_jobs(config, root=ws, timings=timings)
    batch = {**(config.get("batch") or {}), **_batch_config(args.config)}
    if any(j["kind"] == BATCH for j in jobs):  # the run was batched (batch.enabled auto on SLURM): so is the plan
        batching = planner.Batching.from_config({"batch": batch})
        planned = planner.batch_jobs(planned, int(config.get("run", {}).get("threads", 1)), batching)
    est = planner.estimate(planned, cluster, overheads)
    report = {
        "workspace": str(ws),
        "measured": measured,
        "estimate": {
            "wall_s": est.wall_s,
            "schedule_s": est.schedule_s,
            "submissions": est.submissions,
            "core_hours": est.core_hours,
            "overheads": est.overheads,
            "cluster": est.cluster,
        },
        "ratio_measured_to_estimate": measured["wall_s"] / est.wall_s,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        m = measured
        print(f"workspace {ws}")
        print(
            f"measured: {m['submissions']} submissions on {', '.join(m['nodes_used'])}; wall {m['wall_s']:.0f} s = "
            f"start {m['startup_s']:.0f} + jobs {m['schedule_s']:.0f} + tail {m['tail_s']:.0f}"
        )
        if m["job_overhead_s"] is not None and m["ray_s"] is not None:
            print(
                f"  per job beyond its work: {m['job_overhead_s']:.1f} s (construction, proof: median), "
                f"+{m['ray_s']:.1f} s for a Solver job (its Ray); a free core to the next job's start {m['queue_s']:.1f} s"
            )
        if m["member_overhead_s"] is not None:
            print(
                f"  batches: a member's wall beyond its work {m['member_overhead_s']:.1f} s (median); a batch beyond "
                f"its members {m['batch_overhead_s']:.1f} s (job start, Snakemake, the batch's Ray)"
            )
        for kind, k in kinds.items():
            print(
                f"  {kind}: {k['jobs']} jobs, beyond their work median {k['overhead_median_s']:.1f} s, "
                f"mean {k['overhead_mean_s']:.1f} s; queue {k['queue_mean_s']:.1f} s"
            )
        print(
            f"estimate: wall {est.wall_s:.0f} s = start {est.overheads['startup_s']:g} + jobs {est.schedule_s:.0f} "
            f"+ tail {est.wall_s - est.overheads['startup_s'] - est.schedule_s:.0f} (job overhead {est.overheads['job_s']:g} s, Ray {est.overheads['ray_s']:g} s, "
            f"queue {cluster.queue_s:g} s)"
        )
        print(f"ratio measured / estimate: {report['ratio_measured_to_estimate']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
