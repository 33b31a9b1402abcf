"""`tcsexam agents generate`: put a model to work in staged OR-Space workspaces (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

# the flags alone: importing Inspect costs seconds, and every tcsexam command registers these
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
from tcsexam.orspace.release import MODES


def register(subparsers) -> None:
    from tcsexam.agents.solve_cli import add_solve_parser

    parser = subparsers.add_parser(
        "agents",
        help="run a model as an agent in staged OR-Space workspaces (Inspect AI)",
        description="The agent stage: a model works in the workspaces `tcsexam orspace stage` made.",
    )
    sub = parser.add_subparsers(dest="agents_command", metavar="SUBCOMMAND", required=True)
    p = sub.add_parser(
        "generate",
        help="one generation run: the model works in every staged workspace; outputs for the OR-Space judges",
    )
    p.add_argument("--staged", required=True, type=Path, help="a staged folder (tcsexam orspace stage --output)")
    p.add_argument(
        "--output",
        required=True,
        type=Path,
        help="the run's folder: workspaces/, samples/, answers.jsonl, logs/ (a rerun resumes it)",
    )
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    add_model_arguments(p)
    add_budget_arguments(p)
    add_sample_limit_arguments(p)
    p.add_argument(
        "--program-time-limit",
        type=float,
        default=180.0,
        help="the limit the judge will run the program under, told to the agent (orspace execute --time-limit)",
    )
    add_call_arguments(p, "every command the agent runs (the project's sandbox and limiter)")
    p.set_defaults(handler=_generate)
    add_solve_parser(sub)  # `tcsexam agents solve`: the TCSExam tracks (agents/tracks.py)


def _generate(args) -> int:
    from tcsexam.agents.generate import GenerationSettings, generate
    from tcsexam.agents.providers import ModelConfig
    from tcsexam.agents.sandboxenv import AgentSandboxConfig
    from tcsexam.agents.tasks import AgentLimits
    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.logs import logger

    if args.program_time_limit <= 0:
        raise UsageError("--program-time-limit must be positive")
    sandbox = AgentSandboxConfig(**call_config_kwargs(args))
    limits = AgentLimits(**sample_limit_kwargs(args), program_time_limit_s=args.program_time_limit)
    settings = GenerationSettings(
        staged=args.staged,
        output=args.output,
        model=ModelConfig.from_args(args),
        modes=tuple(args.modes),
        sandbox=sandbox,
        limits=limits,
        prices=args.prices,
        max_cost=args.max_cost,
        retry_on_error=args.retry_on_error,
    )
    log = logger("agents")
    with sigterm_as_exit():
        summary = generate(settings, progress=lambda line: log.info("%s", line))
    stops = ", ".join(f"{k} {v}" for k, v in summary["stop_reasons"].items()) or "none"
    print(
        f"{summary['finished']}/{summary['samples']} samples finished ({summary['generated_now']} generated now; "
        f"stop reasons: {stops}); {summary['answers']} Explain answers; cost {summary['cost_usd']:g} USD; "
        f"outputs in {args.output}"
    )
    return run_exit_status(summary, log, "tcsexam agents", "sample")
