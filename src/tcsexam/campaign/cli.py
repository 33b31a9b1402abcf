"""`tcsexam plan`: a campaign's core-hours, submissions and wall time before it starts
(tcsexam.campaign.planner; docs/workflow.md, "Planning a campaign")."""

from __future__ import annotations

import argparse
import json
import os

from tcsexam.errors import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="what a campaign costs on a cluster: core-hours, submissions, wall time (nothing runs)",
        description=(
            "Estimate, for a workflow config and a cluster (nodes, cores per node, the queue's delay per "
            "submission), the SLURM submissions, core-hours and wall time of the workflow's cluster jobs "
            "(Solver runs, construction runs, proof checks), from measured timings (--timings: earlier "
            "runs' results) or the tasks' wall limits, and the measured per-job overheads."
        ),
    )
    p.add_argument("--configfile", default="config/config.yaml", help="the workflow config (over config/config.yaml)")
    p.add_argument(
        "--cluster", metavar="FILE", help="a cluster description (JSON/YAML: nodes, cores_per_node, queue_s, max_jobs)"
    )
    p.add_argument("--nodes", type=int, help="nodes (overrides --cluster)")
    p.add_argument("--cores-per-node", type=int, help="cores per node (overrides --cluster)")
    p.add_argument("--queue-overhead", type=float, dest="queue_s", metavar="SECONDS", help="queue delay per submission")
    p.add_argument("--jobs", type=int, dest="max_jobs", help="Snakemake's --jobs: jobs submitted or running at once")
    p.add_argument("--job-overhead", type=float, metavar="SECONDS", help="seconds a cluster job takes beyond its work")
    p.add_argument("--ray-start", type=float, metavar="SECONDS", help="seconds more per Solver job: its own Ray")
    p.add_argument("--startup", type=float, metavar="SECONDS", help="Snakemake's start before the first submission")
    p.add_argument("--tail", type=float, metavar="SECONDS", help="local jobs after the last cluster job")
    p.add_argument(
        "--timings", nargs="+", default=[], metavar="DIR", help="results trees of earlier runs: their measured wall_s"
    )
    p.add_argument("--models", type=int, help="plan N models instead of the config's (a hypothetical campaign)")
    p.add_argument("--attempts", type=int, help="K attempts per model instead of the config's")
    p.add_argument(
        "--batch",
        action=argparse.BooleanOptionalAction,
        help=(
            "batched mode: the jobs packed into few, long batch jobs as the workflow packs them on a cluster "
            "(config batch.enabled: auto, its default, or true); --no-batch: one job each (as batch.enabled: "
            "false). Default: the config's batch.enabled"
        ),
    )
    p.add_argument(
        "--batch-target-min", type=float, metavar="MIN", help="batched: minutes per batch (batch.target_min)"
    )
    p.add_argument("--min-batches", type=int, help="batched: at least this many batch jobs (batch.min_batches)")
    p.add_argument("--member-overhead", type=float, metavar="SECONDS", help="batched: seconds per batch member")
    p.add_argument(
        "--take-overhead",
        type=float,
        metavar="SECONDS",
        help="batched: seconds of local jobs (take, row) per member on the submitting host after its batch",
    )
    p.add_argument("--json", action="store_true", help="the estimate and its inputs as JSON")
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from tcsexam.campaign import planner

    override = {
        "nodes": args.nodes,
        "cores_per_node": args.cores_per_node,
        "queue_s": args.queue_s,
        "max_jobs": args.max_jobs,
    }
    if args.cluster:
        cluster = planner.Cluster.from_file(args.cluster, **override)
    elif args.nodes is None or args.cores_per_node is None:
        raise InputError("tcsexam plan: give --cluster FILE, or --nodes and --cores-per-node")
    else:
        cluster = planner.Cluster(**{k: v for k, v in override.items() if v is not None})
    overheads = planner.Overheads.given(
        job_s=args.job_overhead,
        ray_s=args.ray_start,
        startup_s=args.startup,
        tail_s=args.tail,
        member_s=args.member_overhead,
        take_s=args.take_overhead,
    )
    for name, value in (("--models", args.models), ("--attempts", args.attempts)):
        if value is not None and value < 1:
            raise InputError(f"tcsexam plan: {name} {value} must be >= 1")
    # a batch size given asks for batches (as it always has); with --no-batch it is a contradiction
    sizing = [
        f
        for f, v in (("--batch-target-min", args.batch_target_min), ("--min-batches", args.min_batches))
        if v is not None
    ]
    if sizing and args.batch is False:
        raise InputError(f"tcsexam plan: {sizing[0]} sizes batches, --no-batch plans none: give one of them")
    root = os.environ.get("TCSEXAM_ROOT", ".")
    config = planner.load_config(args.configfile, root)
    jobs = planner.campaign_jobs(
        config, root=root, timings=planner.Timings(args.timings), models=args.models, attempts=args.attempts
    )
    batched = planner.batched(config, True if sizing else args.batch)
    if batched:
        batching = planner.Batching.from_config(
            config,
            target_min=args.batch_target_min,
            min_batches=args.min_batches,
            member_overhead_s=args.member_overhead,
        )
        jobs = planner.batch_jobs(jobs, int(((config.get("run") or {}).get("threads")) or 1), batching)
    est = planner.estimate(jobs, cluster, overheads)
    if args.json:
        print(json.dumps(est.to_json(), indent=2, sort_keys=True))
    else:
        models = args.models or len(config["models"])
        mode = "batched" if batched else "unbatched"
        print(planner.render(est, f"{args.configfile}: {models} model(s), suite {config.get('suite')}, {mode}"))
    return 0
