"""`tcsexam agents solve`: a model writes the submissions of a TCSExam track (docs/agents.md,
"TCSExam tracks"). Registered by `agents.cli`; this module imports no Inspect AI (every tcsexam
command registers the flags), the handler imports `agents.tracks`."""

from __future__ import annotations

import argparse
from pathlib import Path

from tcsexam.agents.options import add_budget_arguments, add_model_arguments
from tcsexam.errors import UsageError
from tcsexam.runner.cli import RUN_HELP
from tcsexam.runner.limiter.types import LIMITER_OPTION
from tcsexam.runner.sandboxes import SANDBOX_OPTION
from tcsexam.suites import Track

#: the tracks `agents solve` writes (tracks.AGENT_TRACKS, kept here without importing Inspect)
SOLVE_TRACKS = (Track.THEOREM.value, Track.OPEN_CONJECTURE.value, Track.CONSTRUCTION.value)


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
    add_model_arguments(p)
    add_budget_arguments(p)
    limits = p.add_argument_group("per-item limits (Inspect's; 0: none)")
    limits.add_argument("--message-limit", type=int, default=100, help="messages per item (default 100)")
    limits.add_argument("--token-limit", type=int, default=0, help="tokens per item (default none)")
    limits.add_argument("--time-limit", type=int, default=3600, help="wall-clock seconds per item (default 3600)")
    limits.add_argument("--working-limit", type=int, default=0, help="working seconds per item (default none)")
    limits.add_argument("--retry-on-error", type=int, default=1, help="Inspect's retries of an item that errored")
    calls = p.add_argument_group("every command the agent runs, and the checker (the project's sandbox and limiter)")
    calls.add_argument("--sandbox", **SANDBOX_OPTION)
    calls.add_argument("--allow-unsandboxed", action="store_true", help=RUN_HELP["allow_unsandboxed"])
    calls.add_argument("--limiter", **LIMITER_OPTION)
    calls.add_argument("--call-time-limit", type=float, default=120.0, help="wall-clock seconds per call (120)")
    calls.add_argument("--call-mem-mb", type=int, default=4096, help="memory per call (4096)")
    calls.add_argument("--call-nproc", type=int, default=256, help="processes and threads per call (256)")
    calls.add_argument("--workspace-mb", type=int, default=1024, help="what the workspace may hold (1024)")
    calls.add_argument("--scratch-root", default=None, help="parent of the per-item scratch folders ($TMPDIR)")
    p.set_defaults(handler=_solve)


def _none_if_zero(value: int, flag: str) -> int | None:
    if value < 0:
        raise UsageError(f"{flag} must not be negative")
    return value or None


def _solve(args: argparse.Namespace) -> int:
    from tcsexam.agents.providers import ModelConfig
    from tcsexam.agents.sandboxenv import AgentSandboxConfig
    from tcsexam.agents.tasks import AgentLimits
    from tcsexam.agents.tracks import SolveSettings, solve, summary_line
    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.logs import logger

    for flag in ("call_time_limit", "call_mem_mb", "call_nproc", "workspace_mb"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")
    if args.max_checks < 0:
        raise UsageError("--max-checks must not be negative")
    settings = SolveSettings(
        track=args.track,
        output=args.output,
        solvers_dir=args.solvers_dir,
        attempt=args.attempt,
        model=ModelConfig.from_args(args),
        suite=args.suite,
        items=tuple(args.items),
        sandbox=AgentSandboxConfig(
            sandbox=args.sandbox,
            allow_unsandboxed=args.allow_unsandboxed,
            limiter=args.limiter,
            call_time_s=args.call_time_limit,
            call_mem_mb=args.call_mem_mb,
            call_nproc=args.call_nproc,
            workspace_mb=args.workspace_mb,
            scratch_root=args.scratch_root,
        ),
        limits=AgentLimits(
            message_limit=_none_if_zero(args.message_limit, "--message-limit"),
            token_limit=_none_if_zero(args.token_limit, "--token-limit"),
            time_limit_s=_none_if_zero(args.time_limit, "--time-limit"),
            working_limit_s=_none_if_zero(args.working_limit, "--working-limit"),
        ),
        max_checks=args.max_checks,
        prices=args.prices,
        max_cost=args.max_cost,
        retry_on_error=args.retry_on_error,
    )
    log = logger("agents")
    with sigterm_as_exit():
        summary = solve(settings, progress=lambda line: log.info("%s", line))
    print(summary_line(summary))
    if not summary["complete"]:
        first, why = next(iter(summary["incomplete"].items()))
        log.error(
            "tcsexam agents solve: %d item(s) incomplete, first %s: %s; rerun the same command to generate them "
            "(finished items are not asked again)",
            len(summary["incomplete"]),
            first,
            why,
        )
        return 1
    return 0
