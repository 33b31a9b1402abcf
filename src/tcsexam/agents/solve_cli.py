"""`tcsexam agents solve`: a model writes the submissions of a TCSExam track (docs/agents.md,
"TCSExam tracks"). Registered by `agents.cli`; this module imports no Inspect AI (every tcsexam
command registers the flags), the handler imports `agents.tracks`."""

from __future__ import annotations

import argparse
from pathlib import Path

from tcsexam.agents.options import (
    add_budget_arguments,
    add_call_arguments,
    add_model_arguments,
    add_sample_limit_arguments,
    call_config_kwargs,
    run_exit_status,
    sample_limit_kwargs,
)
from tcsexam.errors import UsageError
from tcsexam.suites import Track

#: the tracks `agents solve` writes (tracks.AGENT_TRACKS, kept here without importing Inspect)
SOLVE_TRACKS = tuple(t.value for t in Track)


def add_solve_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solve",
        help="a model writes a track's submissions (proofs, constructions) with the judge's checker as a tool",
        description="An agent per item of a TCSExam track writes solvers/<model>/<item>/<attempt>/ "
        "(proof.v; construction.txt or solver.yaml) with generation.json beside it; a rerun resumes.",
    )
    p.add_argument("--track", required=True, choices=SOLVE_TRACKS)
    p.add_argument("--suite", default=None, help="a suite id or file: its items of the track (default items)")
    p.add_argument("--items", nargs="+", default=[], metavar="ITEM", help="these items only (task ids)")
    p.add_argument("--solvers-dir", required=True, type=Path, help="where solvers/<model>/<item>/<attempt>/ go")
    p.add_argument("--attempt", default="1", help="the attempt id (the folder's name; default 1)")
    p.add_argument(
        "--output", required=True, type=Path, help="the run's folder: run.json, logs/, samples/, generation.json"
    )
    p.add_argument(
        "--max-checks", type=int, default=10, help="checker tool calls per item (default 10; 0: none allowed)"
    )
    p.add_argument(
        "--dev-instances",
        type=int,
        default=3,
        help="solver track: development instances per item, from the problem's generator (default 3)",
    )
    p.add_argument(
        "--task-file",
        nargs="+",
        default=[],
        metavar="ITEM=FILE",
        help="an item's task file where it is not config/tasks/<item>.yaml (a workflow's run.task_files)",
    )
    p.add_argument(
        "--online-records-dir",
        type=Path,
        default=None,
        help="solver track: judge each session's candidate once on the evaluation instances and write the "
        "online protocol's records to DIR/<model>/<item>/<attempt>/records.json (config online_records_dir)",
    )
    p.add_argument(
        "--judge-seed", type=int, default=None, help="the seed of the online judge's runs (tcsexam run --seed)"
    )
    p.add_argument(
        "--judge-instances",
        nargs="+",
        default=[],
        metavar="ITEM=NAME[,NAME...]",
        help="the evaluation instances the online judge runs for an item (default all; a workflow's run.instances)",
    )
    add_model_arguments(p)
    add_budget_arguments(p)
    add_sample_limit_arguments(p, "item")
    add_call_arguments(
        p, "every command the agent runs, and the checker (the project's sandbox and limiter)", programs=False
    )
    p.set_defaults(handler=_solve)


def _solve(args: argparse.Namespace) -> int:
    from tcsexam.agents.providers import ModelConfig
    from tcsexam.agents.sandboxenv import AgentSandboxConfig
    from tcsexam.agents.tasks import AgentLimits
    from tcsexam.agents.tracks import SolveSettings, solve, summary_line
    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.logs import logger

    if args.max_checks < 0:
        raise UsageError("--max-checks must not be negative")
    if args.online_records_dir is not None and args.track != Track.SOLVER:
        raise UsageError("--online-records-dir judges Solver candidates: use it with --track solver")
    task_files = {}
    for given in args.task_file:
        item, sep, path = given.partition("=")
        if not sep or not item or not path:
            raise UsageError(f"--task-file {given!r}: give ITEM=FILE")
        if item in task_files:
            raise UsageError(f"--task-file: item {item} is given twice")
        task_files[item] = path
    extra = {} if args.judge_seed is None else {"judge_seed": args.judge_seed}
    judge_instances = {}
    for given in args.judge_instances:
        item, sep, names = given.partition("=")
        chosen = [n for n in names.split(",") if n]
        if not sep or not item or not chosen:
            raise UsageError(f"--judge-instances {given!r}: give ITEM=NAME[,NAME...]")
        judge_instances[item] = chosen
    settings = SolveSettings(
        track=args.track,
        output=args.output,
        solvers_dir=args.solvers_dir,
        attempt=args.attempt,
        model=ModelConfig.from_args(args),
        suite=args.suite,
        items=tuple(args.items),
        sandbox=AgentSandboxConfig(**call_config_kwargs(args)),
        limits=AgentLimits(**sample_limit_kwargs(args)),
        max_checks=args.max_checks,
        dev_instances=args.dev_instances,
        prices=args.prices,
        max_cost=args.max_cost,
        retry_on_error=args.retry_on_error,
        task_files=task_files,
        online_dir=args.online_records_dir,
        judge_instances=judge_instances,
        **extra,
    )
    log = logger("agents")
    with sigterm_as_exit():
        summary = solve(settings, progress=lambda line: log.info("%s", line))
    print(summary_line(summary))
    return run_exit_status(summary, log, "tcsexam agents solve", "item")
