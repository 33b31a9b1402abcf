"""CLI: `tcsexam view RUN [CANDIDATE] --output DIR`."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import at_least, command


def register(subparsers) -> None:
    p = command(subparsers, "view", _view)
    p.add_argument(
        "run",
        metavar="RUN",
        help="results/<suite>/<protocol> of a run, or a results folder holding one run (the baseline when CANDIDATE is given)",
    )
    p.add_argument(
        "candidate", metavar="CANDIDATE", nargs="?", help="a second run: the site shows it compared with RUN"
    )
    p.add_argument("--output", metavar="DIR", help="the site's folder (default: <shown run>/view)")
    p.add_argument(
        "--compare", metavar="compare.json", help="a `tcsexam compare` result whose candidate is RUN (no recomputation)"
    )
    p.add_argument("--orspace", metavar="DIR", help="OR-Space results to include (<DIR>/<run>/<condition>/*.json)")
    p.add_argument(
        "--report",
        metavar="DIR",
        help="also write the report's leaderboard.html, constructions.png, proofs.png and cost.png",
    )
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples of the comparison (default 10000)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed of the comparison (default 20260925)")
    p.add_argument(
        "--verify-records",
        action="store_true",
        help="check every record against its digest and list those that fail as issues (slower)",
    )
    p.add_argument("--serve", type=int, metavar="PORT", help="after building, serve the folder on 127.0.0.1:PORT")


def _view(args: argparse.Namespace) -> int:
    """build the static results explorer of a run (or of two runs compared)

    Write a folder that opens from file:// with no server and no network: index.html with the leaderboard
    (Index with its interval, track means, status with its reasons), the Solver tasks (each model's score, the
    reference, status counts, score distributions), every instance record (status, A, reference mean and scale,
    z, Phi, time, memory, termination, message, stderr tail, links to the record and certificate, the anytime
    trace), the construction and proof attempts with their checker verdicts, OR-Space results, provenance and
    issues. With CANDIDATE (or --compare) the site shows CANDIDATE and its comparison with RUN: per model, task
    and instance the differences with compare's verdicts, the instances whose status changed first."""
    from pathlib import Path

    from tcsexam.errors import InputError, UsageError
    from tcsexam.fileio import read_json
    from tcsexam.view.collect import collect_run
    from tcsexam.view.site import comparison_view, write_site

    if args.candidate and args.compare:
        raise UsageError("give either CANDIDATE or --compare, not both")
    from tcsexam.view.collect import resolve_run

    if args.candidate:
        args.run, args.candidate = str(resolve_run(args.run)), str(resolve_run(args.candidate))
    shown = resolve_run(args.candidate or args.run)
    output = Path(args.output) if args.output else shown / "view"
    comparison = None
    if args.candidate:
        from tcsexam.reproduce.compare import compare_runs
        from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

        resamples = at_least(args.resamples, 1, "--resamples", default=DEFAULT_RESAMPLES)
        seed = at_least(args.seed, 0, "--seed", default=DEFAULT_SEED)
        comparison = compare_runs(args.run, args.candidate, seed=seed, resamples=resamples)
    elif args.compare:
        comparison = read_json(args.compare, "comparison")
        if not isinstance(comparison, dict) or "verdict" not in comparison:
            raise InputError(f"{args.compare}: not a `tcsexam compare` result (no 'verdict')")
    run = collect_run(shown, output, orspace_dir=args.orspace, verify_records=args.verify_records)
    index = write_site(run, output, comparison_view(comparison) if comparison is not None else None)
    print(f"view -> {index} ({run.meta['n_records']} Solver records, {len(run.tasks)} tasks)")
    if args.report:
        from tcsexam.view.report import write_report

        for path in write_report(run, args.report, site=output):
            print(f"report -> {path}")
    if args.serve is not None:
        from tcsexam.view.serve import serve

        serve(output, args.serve)
    return 0
