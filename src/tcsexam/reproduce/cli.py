"""CLI: `tcsexam manifest RUN_DIR` (`tcsexam compare` is `tcsexam.view.compare_cli`: it can build the explorer)."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import command, key_value


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
