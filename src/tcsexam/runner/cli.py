"""`tcsexam run` (one candidate on a task, with resume) and `tcsexam repair`."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import command, pick, sigterm_as_exit
from tcsexam.logs import say_for
from tcsexam.records import STATUSES
from tcsexam.runner.options import add_run_options, run_options
from tcsexam.runner.solver.run_outputs import KEEP_MAX_MB, Keep


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
    from tcsexam.runner.observers.heartbeat import Heartbeat, heartbeat_path
    from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job

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
