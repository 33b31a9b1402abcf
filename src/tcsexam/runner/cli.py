"""`tcsexam run` (one candidate on a task, with resume) and `tcsexam repair`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tcsexam.cliutil import command, pick, sigterm_as_exit
from tcsexam.limits import DEFAULT_SEED, seed_option
from tcsexam.logs import say_for
from tcsexam.records import STATUSES
from tcsexam.runner.batch import DEFAULT_BUILD_TIMEOUT_S
from tcsexam.runner.limiter.types import LIMITER_OPTION
from tcsexam.runner.ray.contract import DEFAULT_MAX_RETRIES
from tcsexam.runner.run_outputs import KEEP_MAX_MB, Keep
from tcsexam.runner.sandboxes import SANDBOX_OPTION

if TYPE_CHECKING:
    from tcsexam.runner.batch import RunOptions

#: the help lines of the options that say how a candidate runs (`tcsexam run`, `tcsexam construction run`)
RUN_HELP = {
    "workers": "concurrent runs (default: this job's CPUs // the candidate's threads; "
    "with --ray-address: the cluster's CPUs // threads)",
    "ray_address": "use an existing Ray cluster (also RAY_ADDRESS); default: this user's default Ray head when "
    "one is alive (`tcsexam runner ray-head start`; TCSEXAM_RAY_HEAD=none: never), else a local Ray",
    "ray_head": "use the shared Ray head whose state folder is DIR (`tcsexam runner ray-head start --state-dir DIR`), "
    "waiting for it while it starts; a local Ray when none is alive there",
    "no_ray": "run in this process, one instance at a time (same executor; debugging)",
    "allow_unsandboxed": "the candidates are trusted: `--sandbox auto` may fall back to local "
    "(records and index.json say so)",
    "seed": "seed passed to the candidate ({seed}, TCSEXAM_SEED): 1..2^31-1, default %(default)s",
    "max_retries": "resubmissions after an infrastructure failure (lost actor, ...); default %(default)s",
    "build_timeout": "wall limit of the candidate's build step (default 600)",
    "no_progress": "no progress bar on stderr",
}


def positive_mb(text: str) -> int:
    """`--keep-max-mb`: a whole number of MiB >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of MiB, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 MiB, not {value}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    run = command(sub, "run", _run)
    run.add_argument("--task", required=True, help="task id (config/tasks/<id>.yaml) or a task file")
    run.add_argument("--candidate", required=True, metavar="DIR", help="candidate folder with solver.yaml")
    run.add_argument("--attempt", default=None, metavar="ID", help="attempt id stored in every record")
    output_help = "records.json: the JSON list of instance records in task order"
    run.add_argument("--output", required=True, metavar="FILE", help=output_help)
    records_help = "per-instance record files (default: records/ beside --output)"
    run.add_argument("--records-dir", default=None, metavar="DIR", help=records_help)
    add_run_options(run)
    only_help = "run only these instances (records.json then lists only them)"
    run.add_argument("--instances", nargs="+", default=None, metavar="NAME", help=only_help)
    keep_help = (
        "what is kept beside the records for re-checking them later (tcsexam check --record): all (final "
        "certificates and the DRAT proofs of UNSAT answers), proofs, certificates or none; default %(default)s"
    )
    run.add_argument("--keep", type=Keep, choices=list(Keep), default=Keep.ALL, help=keep_help)
    max_help = "the largest certificate or proof kept, in MiB (a bigger one is checked, not kept); default %(default)s"
    run.add_argument("--keep-max-mb", type=positive_mb, default=KEEP_MAX_MB, metavar="MB", help=max_help)
    every_help = "log a progress line (done/planned, rate, ETA) this often; 0: never (default %(default)s)"
    run.add_argument("--progress-every", type=float, default=60.0, metavar="SECONDS", help=every_help)
    _register_repair(sub)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options saying how a candidate runs: its pool (workers, Ray), sandbox, limiter, seed,
    retries, build timeout, progress bar (read back by `run_options`)."""
    h = RUN_HELP
    parser.add_argument("--workers", type=int, default=None, metavar="N", help=h["workers"])
    ray_where = parser.add_mutually_exclusive_group()
    ray_where.add_argument("--ray-address", default=None, metavar="ADDR", help=h["ray_address"])
    ray_where.add_argument("--ray-head", default=None, metavar="DIR", help=h["ray_head"])
    parser.add_argument("--no-ray", action="store_true", help=h["no_ray"])
    parser.add_argument("--sandbox", **SANDBOX_OPTION)
    parser.add_argument("--allow-unsandboxed", action="store_true", help=h["allow_unsandboxed"])
    parser.add_argument("--seed", type=seed_option, default=DEFAULT_SEED, help=h["seed"])
    parser.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES, metavar="K", help=h["max_retries"])
    timeout = DEFAULT_BUILD_TIMEOUT_S
    parser.add_argument("--build-timeout", type=float, default=timeout, metavar="SECONDS", help=h["build_timeout"])
    parser.add_argument("--limiter", **LIMITER_OPTION)
    parser.add_argument("--no-progress", action="store_true", help=h["no_progress"])


def run_options(args: argparse.Namespace) -> RunOptions:
    """The `RunOptions` of the options `add_run_options` declared."""
    from tcsexam.runner.batch import PoolOptions, RunOptions

    pool = PoolOptions(
        workers=args.workers,
        use_ray=not args.no_ray,
        ray_address=args.ray_address,
        ray_head=args.ray_head,
        max_retries=args.max_retries,
    )
    return RunOptions(
        sandbox=args.sandbox,
        limiter=args.limiter,
        allow_unsandboxed=args.allow_unsandboxed,
        build_timeout_s=args.build_timeout,
        progress=not args.no_progress,
        pool=pool,
    )


def _register_repair(sub: argparse._SubParsersAction) -> None:
    rep = command(sub, "repair", _repair)
    rep.add_argument("--records-dir", required=True, metavar="DIR")
    statuses = sorted(STATUSES) + ["any"]
    status_help = "statuses to redo (default infrastructure_error; 'any' for all)"
    rep.add_argument("--status", nargs="+", default=None, metavar="STATUS", choices=statuses, help=status_help)
    rep.add_argument("--instances", nargs="+", default=None, metavar="NAME", help="only these instances")
    output_help = (
        "also set aside this records.json when records were moved or it fails its checks "
        "(does not parse, a record fails its digest or differs from the stored one)"
    )
    rep.add_argument("--output", default=None, metavar="FILE", help=output_help)
    rep.add_argument("--dry-run", action="store_true", help="say what would move, move nothing")


def _run(args: argparse.Namespace) -> int:
    """run a candidate solver on a task's instances (Ray fan-out, resumable)

    Run one candidate on every instance of a task under the task's fixed limits. Each finished
    instance is written at once to the records folder; a rerun reuses records whose key (candidate
    files, instance file, limits, harness version, sandbox, seed) matches and runs only the rest.
    Exit 0 whatever the solver did; 1 on bad input."""
    from tcsexam.runner.heartbeat import Heartbeat, heartbeat_path
    from tcsexam.runner.orchestrate import RunHooks, TaskJob, run_job

    say = say_for("run", "runner")
    beat = Heartbeat(heartbeat_path(args.output), progress_every_s=args.progress_every or None, log=say)
    job = TaskJob(
        **pick(
            args,
            "task",
            "output",
            "attempt",
            "records_dir",
            "instances",
            "seed",
            "keep",
            "keep_max_mb",
            candidate_dir="candidate",
        )
    )
    with sigterm_as_exit(), beat.closing():
        run_job(job, run_options(args), RunHooks(log=say, heartbeat=beat))
    return 0


def _repair(args: argparse.Namespace) -> int:
    """move chosen instance records aside so the next run redoes them

    Move records into <records-dir>/.repaired/<timestamp>/ (nothing is deleted). Default: the
    infrastructure_error records; with --instances and no --status: those instances whatever their
    status. Damaged record files (unparseable, failing their digest, another instance's) are always
    moved. Then rerun `tcsexam run`: only the moved instances execute."""
    from pathlib import Path

    from tcsexam.fileio import aside_dir, move_aside
    from tcsexam.records.store import REPAIRED_DIR, records_file_problem, repair

    result = repair(args.records_dir, statuses=args.status, instances=args.instances, dry_run=args.dry_run)
    for name in result.unknown_instances:
        say_for("repair", "runner")(f"WARNING: no record for instance {name!r} in {args.records_dir}")
    out = Path(args.output) if args.output else None
    # records.json is stale when records moved, and untrustworthy when it fails its own checks
    out_problem = None
    if out is not None and out.exists():
        out_problem = "records were moved" if result.moved else records_file_problem(out, args.records_dir)
    if not result.moved and out_problem is None:
        print(f"tcsexam repair: nothing to repair in {args.records_dir} ({result.kept} records kept)")
        return 0
    verb = "would move" if args.dry_run else "moved"
    if result.moved:
        where = f" to {result.destination}" if result.destination else ""
        listed = ", ".join(f"{name} ({status})" for name, status in result.moved)
        print(f"tcsexam repair: {verb} {len(result.moved)} record(s){where}: {listed}; {result.kept} kept")
    if out_problem is not None and out is not None:
        if args.dry_run:
            print(f"tcsexam repair: would set aside {out} ({out_problem})")
        else:
            dest = result.destination or aside_dir(Path(args.records_dir) / REPAIRED_DIR)
            moved = move_aside(out, dest, out_problem)
            print(f"tcsexam repair: set aside stale {out} ({out_problem}) -> {moved}")
    if not args.dry_run:
        print("tcsexam repair: rerun `tcsexam run` with the same options (or `snakemake`) to redo them")
    return 0
