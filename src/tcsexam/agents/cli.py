"""`tcsexam agents generate`: put a model to work in staged OR-Space workspaces (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

from tcsexam.errors import UsageError
from tcsexam.orspace.release import MODES
from tcsexam.orspace.solvers import LICENSED
from tcsexam.runner.cli import RUN_HELP
from tcsexam.runner.limiter.types import LIMITER_OPTION
from tcsexam.runner.sandboxes import SANDBOX_OPTION


def register(subparsers) -> None:
    # the flags alone (importing Inspect costs seconds: every tcsexam command registers this)
    from tcsexam.agents.options import add_budget_arguments, add_model_arguments
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
    limits = p.add_argument_group("per-sample limits (Inspect's; 0: none)")
    limits.add_argument("--message-limit", type=int, default=100, help="messages per sample (default 100)")
    limits.add_argument("--token-limit", type=int, default=0, help="tokens per sample (default none)")
    limits.add_argument("--time-limit", type=int, default=3600, help="wall-clock seconds per sample (default 3600)")
    limits.add_argument("--working-limit", type=int, default=0, help="working seconds per sample (default none)")
    limits.add_argument(
        "--program-time-limit",
        type=float,
        default=180.0,
        help="the limit the judge will run the program under, told to the agent (orspace execute --time-limit)",
    )
    limits.add_argument("--retry-on-error", type=int, default=1, help="Inspect's retries of a sample that errored")
    calls = p.add_argument_group("every command the agent runs (the project's sandbox and limiter)")
    calls.add_argument("--sandbox", **SANDBOX_OPTION)
    calls.add_argument("--allow-unsandboxed", action="store_true", help=RUN_HELP["allow_unsandboxed"])
    calls.add_argument("--limiter", **LIMITER_OPTION)
    calls.add_argument("--call-time-limit", type=float, default=120.0, help="wall-clock seconds per call (120)")
    calls.add_argument("--call-mem-mb", type=int, default=4096, help="memory per call (4096)")
    calls.add_argument("--call-nproc", type=int, default=256, help="processes and threads per call (256)")
    calls.add_argument("--workspace-mb", type=int, default=1024, help="what the workspace copy may hold (1024)")
    calls.add_argument("--python", default=None, help="the agent's python3 (default: orspace execute's)")
    calls.add_argument("--docker-image", default=None, help="image of --sandbox docker (as orspace execute)")
    calls.add_argument(
        "--licence", nargs="+", default=[], metavar="SOLVER=PATH", help="full solver licences, read-only"
    )
    calls.add_argument("--scratch-root", default=None, help="parent of the per-sample scratch folders ($TMPDIR)")
    p.set_defaults(handler=_generate)
    add_solve_parser(sub)  # `tcsexam agents solve`: the TCSExam tracks (agents/tracks.py)


def _positive_or_none(value: int | None, flag: str) -> int | None:
    if value is None or value == 0:
        return None
    if value < 0:
        raise UsageError(f"{flag} must not be negative")
    return value


def _generate(args) -> int:
    from tcsexam.agents.generate import GenerationSettings, generate
    from tcsexam.agents.providers import ModelConfig
    from tcsexam.agents.sandboxenv import AgentSandboxConfig
    from tcsexam.agents.tasks import AgentLimits
    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.logs import logger

    licences = []
    for value in args.licence:
        solver, sep, path = value.partition("=")
        if not sep or solver not in LICENSED or not path:
            raise UsageError(f"--licence {value!r}: expected gurobi=PATH or copt=PATH")
        licences.append((solver, str(Path(path).resolve())))
    for flag in ("call_time_limit", "call_mem_mb", "call_nproc", "workspace_mb", "program_time_limit"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")
    sandbox = AgentSandboxConfig(
        sandbox=args.sandbox,
        allow_unsandboxed=args.allow_unsandboxed,
        limiter=args.limiter,
        call_time_s=args.call_time_limit,
        call_mem_mb=args.call_mem_mb,
        call_nproc=args.call_nproc,
        workspace_mb=args.workspace_mb,
        python=args.python,
        licences=tuple(licences),
        docker_image=args.docker_image,
        scratch_root=args.scratch_root,
    )
    limits = AgentLimits(
        message_limit=_positive_or_none(args.message_limit, "--message-limit"),
        token_limit=_positive_or_none(args.token_limit, "--token-limit"),
        time_limit_s=_positive_or_none(args.time_limit, "--time-limit"),
        working_limit_s=_positive_or_none(args.working_limit, "--working-limit"),
        program_time_limit_s=args.program_time_limit,
    )
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
    if not summary["complete"]:
        first, why = next(iter(summary["incomplete"].items()))
        log.error(
            "tcsexam agents: %d sample(s) incomplete, first %s: %s; rerun the same command to generate them "
            "(finished samples are not asked again)",
            len(summary["incomplete"]),
            first,
            why,
        )
        return 1
    return 0
