"""CLI: `tcsexam compare BASELINE CANDIDATE` (`tcsexam.reproduce.compare`), with `--view` the
results explorer of CANDIDATE with the comparison (the explorer sits above the comparison, so the
command that joins them lives here)."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import at_least, command


def register(subparsers) -> None:
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
