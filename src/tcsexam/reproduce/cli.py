"""CLI: `tcsexam manifest RUN_DIR` and `tcsexam compare BASELINE CANDIDATE`."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import at_least, command, key_value


def register(subparsers) -> None:
    p = command(subparsers, "manifest", _manifest)
    p.add_argument("run_dir", metavar="RUN_DIR", help="results/<suite>/<protocol> of a finished evaluation")
    p.add_argument("--output", metavar="FILE", help="default: RUN_DIR/manifest.json")
    p.add_argument("--reference", help="the reference the run used: lite, full or a path (default: the suite's)")
    p.add_argument("--solvers-dir", help="candidate folders <dir>/<model>/<task>/<attempt> (default: solvers)")
    p.add_argument(
        "--verdicts-dir", help="checker verdicts <dir>/<model>/<item>/<attempt>.json (default: config/verdicts)"
    )
    p.add_argument("--suite", help="the run's suite file where it is not config/suites/<suite id>.yaml")
    task_file_help = "a Solver task file other than config/tasks/<task>.yaml (repeatable)"
    p.add_argument("--task-file", action="append", default=[], metavar="TASK=FILE", help=task_file_help)

    c = command(subparsers, "compare", _compare)
    c.add_argument("baseline", metavar="BASELINE", help="the published / earlier run directory")
    c.add_argument("candidate", metavar="CANDIDATE", help="the run to check against it")
    c.add_argument("--output", required=True, metavar="compare.json")
    c.add_argument("--report", metavar="compare.html", help="also write a self-contained HTML page")
    c.add_argument("--plot", metavar="deltas.png", help="also write a PNG of the deltas with their intervals")
    c.add_argument(
        "--view", metavar="DIR", help="also build the results explorer of CANDIDATE with this comparison (tcsexam view)"
    )
    c.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")
    c.add_argument("--seed", type=int, default=None, help="bootstrap seed (default 20260925)")
    c.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0 whatever the verdict (the workflow's compare rule; the verdict is in the output)",
    )


def _manifest(args: argparse.Namespace) -> int:
    """write (or rebuild) a run's provenance manifest.json

    Rebuild RUN_DIR/manifest.json (results/<suite>/<protocol>) from the finished run: tcsexam version and git
    commit, Python and package versions, OS, kernel, CPU, cores, memory, limiter and sandbox, the reference
    file's sha256, every Solver task file's sha256, limits and instance sha256s, every candidate's hash, status
    counts and solver time, and the other tracks' verdict files' sha256. Input locations default to those the
    run's previous manifest recorded."""
    from pathlib import Path

    from tcsexam.reproduce.manifest import Sources, sources_from_manifest, write_manifest

    base = sources_from_manifest(Path(args.run_dir)) or Sources()
    task_files = dict(base.task_files)
    for spec in args.task_file:
        task, path = key_value(spec, "--task-file", "TASK=FILE")
        task_files[task] = path
    sources = Sources(
        reference=args.reference or base.reference,
        solvers_dir=args.solvers_dir or base.solvers_dir,
        verdicts_dir=args.verdicts_dir or base.verdicts_dir,
        task_files=task_files,
        suite=args.suite or base.suite,
    )
    out = write_manifest(args.run_dir, args.output, sources)
    from tcsexam.logs import say_for

    say_for("manifest", "provenance")(f"manifest -> {out}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    """compare two runs: differing inputs, deltas with paired bootstrap intervals, a verdict

    Compare two run directories (results/<suite>/<protocol>). Verdict: identical (every score equal bit for
    bit), reproduced (every delta's 95% interval contains 0), differs (some interval excludes 0; named),
    incomparable (different suite, protocol, reference, instance set or limits; named). Exit code 0
    identical/reproduced, 3 differs, 4 incomparable."""
    from tcsexam.errors import InputError
    from tcsexam.fileio import atomic_write_json, atomic_write_text
    from tcsexam.reproduce.compare import EXIT_CODES, compare_runs
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

    resamples = at_least(args.resamples, 1, "--resamples", default=DEFAULT_RESAMPLES)
    seed = at_least(args.seed, 0, "--seed", default=DEFAULT_SEED)
    result = compare_runs(args.baseline, args.candidate, seed=seed, resamples=resamples)
    html = plot = None
    if args.report:
        from tcsexam.reproduce.compare_report import render_html

        html = render_html(result)
    if args.plot:
        from tcsexam.reproduce.compare_report import render_png

        plot = render_png(result)
    try:
        atomic_write_json(args.output, result)
        if html is not None:
            atomic_write_text(args.report, html)
        if plot is not None:
            from tcsexam.fileio import atomic_write_bytes

            atomic_write_bytes(args.plot, plot)
    except OSError as exc:
        raise InputError(f"cannot write the comparison: {exc}") from None
    if args.view:
        from tcsexam.view.collect import collect_run
        from tcsexam.view.site import comparison_view, write_site

        site = write_site(collect_run(args.candidate, args.view), args.view, comparison_view(result))
        print(f"view -> {site}")
    print(f"verdict: {result['verdict']}")
    for reason in result["reasons"]:
        print(f"  {reason}")
    if result["inputs"]["differ"]:
        print(f"inputs that differ: {', '.join(result['inputs']['differ'])}")
    if "machine_speed" in result:
        from tcsexam.reproduce.compare_speed import speed_lines

        print("\n".join(speed_lines(result["machine_speed"])))
    print(f"-> {args.output}")
    return 0 if args.exit_zero else EXIT_CODES[result["verdict"]]
