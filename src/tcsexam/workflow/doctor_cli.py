"""`tcsexam doctor`: one line per external piece, what works here and, for what does not, the
consequence and the fix (docs/doctor.md)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the annotations' types: the handlers import tcsexam.doctor when they run
    from tcsexam.doctor import CheckOptions, Need

#: the exit status when a piece the checked configuration needs is missing or broken (1 and 2 stay
#: what they are for every command: bad input, usage)
NEEDED_MISSING_EXIT = 3


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="what works here: sandboxes, limiters, coqc, the DRAT checker, SLURM, the browser (docs/doctor.md)",
        description=(
            "Check every external piece the pipeline uses and print one line each: ok with its version and path, "
            "or missing/broken with the consequence and the fix (skipped: not judged on its own, a piece it needs does not work). "
            "Exit 0 when everything the bundled default (or --config's run) needs works, "
            f"{NEEDED_MISSING_EXIT} when a piece it needs is missing or broken; optional pieces (Docker, "
            "Apptainer, SLURM, the browser, ...) never fail it."
        ),
    )
    p.add_argument(
        "--json", action="store_true", help="the checks as JSON (name, health, detail, consequence, fix, needed)"
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="judge what this workflow config needs (its sandbox, its proof tasks' Coq release) instead of the bundled "
        "default's (config/config.yaml)",
    )
    p.set_defaults(handler=_doctor)


def _config_options(path: str) -> tuple[Iterable[Need], CheckOptions]:
    """(needs, run_checks options) of a workflow config file, through the workflow's own Plan."""
    from tcsexam.doctor import needs_of, plan_options
    from tcsexam.errors import InputError
    from tcsexam.fileio import read_yaml
    from tcsexam.paths import project_root
    from tcsexam.workflow.plan import Plan

    config = read_yaml(path, "workflow config")
    if not isinstance(config, dict):
        raise InputError(f"{path}: a workflow config is a mapping, not {type(config).__name__}")
    plan = Plan(config, project_root())  # the workflow's own folder: where its relative paths start
    plan.check()
    return needs_of(plan), plan_options(plan)


def _doctor(args: argparse.Namespace) -> int:
    """the checks, printed; exit NEEDED_MISSING_EXIT when a needed piece does not work"""
    import json
    import sys

    from tcsexam.doctor import DEFAULT_NEEDS, failures, run_checks

    needs: Iterable[Need] = DEFAULT_NEEDS
    options: CheckOptions = {}
    if args.config is not None:
        needs, options = _config_options(args.config)
    checks = run_checks(needs, **options)
    failed = failures(checks)
    if args.json:
        json.dump({"ok": not failed, "checks": [c.to_json() for c in checks]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for check in checks:
            print(check.line())
        what = "the bundled default" if args.config is None else args.config
        optional = [c.name for c in checks if c.failed and not c.needed]
        also = f" ({len(optional)} optional not working: {', '.join(optional)})" if optional else ""
        if failed:
            print(
                f"doctor: {what} cannot run fully here: {', '.join(c.name for c in failed)} {'is' if len(failed) == 1 else 'are'} "
                f"missing or broken{also}"
            )
        else:
            print(f"doctor: everything {what} needs works here{also}")
    sys.stdout.flush()
    return NEEDED_MISSING_EXIT if failed else 0
