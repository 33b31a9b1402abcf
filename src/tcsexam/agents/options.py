"""The flags of the `tcsexam agents` commands, defined once, here: model and endpoint, cost
(providers.py and accounting.py read them), per-sample limits and how the agent's commands are
contained (`sample_limit_kwargs`, `call_config_kwargs`). This module imports no Inspect AI:
`tcsexam` registers every command's flags on every invocation, and importing Inspect takes seconds."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TypedDict

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import UsageError
from tcsexam.fileio import JsonObject
from tcsexam.orspace.solvers import LICENSED
from tcsexam.runner.limiter.types import LIMITER_OPTION
from tcsexam.runner.sandboxes import SANDBOX_OPTION

DEFAULT_MAX_CONNECTIONS = 4
DEFAULT_MAX_SAMPLES = 4
DEFAULT_MAX_SANDBOXES = 4
DEFAULT_MAX_RETRIES = 6
DEFAULT_TIMEOUT_S = 1800


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The model flags of `tcsexam agents generate` (defined once, here)."""
    group = parser.add_argument_group("model and endpoint")
    group.add_argument(
        "--model",
        required=True,
        help="an Inspect model (openai/gpt-4o, anthropic/..., mockllm/model), or with --base-url the model "
        "name the OpenAI-compatible endpoint serves",
    )
    group.add_argument("--model-name", default=None, help="the label of this model in results (default: --model)")
    group.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, ...)")
    group.add_argument(
        "--api-key-env",
        default=None,
        metavar="NAME",
        help="the NAME of the environment variable holding the API key (the key itself is never a flag)",
    )
    group.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, help="concurrent requests")
    group.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES, help="samples in flight")
    group.add_argument("--max-sandboxes", type=int, default=DEFAULT_MAX_SANDBOXES, help="sandboxes alive at once")
    group.add_argument(
        "--max-retries", type=int, default=DEFAULT_MAX_RETRIES, help="retries of a model call (429, 5xx, timeouts)"
    )
    group.add_argument(
        "--timeout", type=int, default=DEFAULT_TIMEOUT_S, help="seconds for one model call, all retries together"
    )
    group.add_argument("--attempt-timeout", type=int, default=None, help="seconds for one HTTP attempt")
    group.add_argument("--temperature", type=float, default=None, help="sampling temperature (provider default)")
    group.add_argument("--max-tokens", type=int, default=None, help="the longest reply (provider default)")
    group.add_argument("--seed", type=int, default=None, help="the provider's sampling seed, where it takes one")


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The cost flags of `tcsexam agents generate` (defined once, here)."""
    group = parser.add_argument_group("cost")
    group.add_argument(
        "--prices",
        default=None,
        metavar="PRICES.yaml",
        help="USD per million tokens, the judge's format: {model: {input_per_mtok: x, output_per_mtok: y}}",
    )
    group.add_argument(
        "--max-cost",
        type=float,
        default=None,
        metavar="USD",
        help="the run's cost limit: no sample starts once it is spent (needs --prices listing the model)",
    )


def add_sample_limit_arguments(parser: argparse.ArgumentParser, what: str = "sample") -> None:
    """Inspect's per-sample limits (`sample_limit_kwargs` reads them); `what` names a sample."""
    group = parser.add_argument_group(f"per-{what} limits (Inspect's; 0: none)")
    group.add_argument("--message-limit", type=int, default=100, help=f"messages per {what} (default 100)")
    group.add_argument("--token-limit", type=int, default=0, help=f"tokens per {what} (default none)")
    group.add_argument("--time-limit", type=int, default=3600, help=f"wall-clock seconds per {what} (default 3600)")
    group.add_argument("--working-limit", type=int, default=0, help=f"working seconds per {what} (default none)")
    group.add_argument("--retry-on-error", type=int, default=1, help=f"Inspect's retries of a {what} that errored")


def _none_if_zero(value: int, flag: str) -> int | None:
    if value < 0:
        raise UsageError(f"{flag} must not be negative")
    return value or None


class SampleLimitKwargs(TypedDict):
    """`tasks.AgentLimits`' keyword arguments of a sample's limits (None: none)."""

    message_limit: int | None
    token_limit: int | None
    time_limit_s: int | None
    working_limit_s: int | None


def sample_limit_kwargs(args: argparse.Namespace) -> SampleLimitKwargs:
    """`tasks.AgentLimits`' keyword arguments from `add_sample_limit_arguments`' flags (0: none)."""
    if args.retry_on_error < 0:
        raise UsageError("--retry-on-error must not be negative")
    return {
        "message_limit": _none_if_zero(args.message_limit, "--message-limit"),
        "token_limit": _none_if_zero(args.token_limit, "--token-limit"),
        "time_limit_s": _none_if_zero(args.time_limit, "--time-limit"),
        "working_limit_s": _none_if_zero(args.working_limit, "--working-limit"),
    }


def add_call_arguments(parser: argparse.ArgumentParser, title: str, *, programs: bool = True) -> None:
    """How every command the agent runs is contained (`call_config_kwargs` reads them): the
    project's sandbox and limiter, the limits of each call; with `programs` also the programs'
    interpreter, image and solver licences (`orspace execute`'s)."""
    group = parser.add_argument_group(title)
    group.add_argument("--sandbox", **SANDBOX_OPTION)
    group.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="the agent's commands are trusted: --sandbox auto may fall back to local (not contained)",
    )
    group.add_argument("--limiter", **LIMITER_OPTION)
    group.add_argument("--call-time-limit", type=float, default=120.0, help="wall-clock seconds per call (120)")
    group.add_argument("--call-mem-mb", type=int, default=4096, help="memory per call (4096)")
    group.add_argument("--call-nproc", type=int, default=256, help="processes and threads per call (256)")
    group.add_argument("--workspace-mb", type=int, default=1024, help="what the workspace copy may hold (1024)")
    group.add_argument("--scratch-root", default=None, help="parent of the per-sample scratch folders ($TMPDIR)")
    if programs:
        group.add_argument("--python", default=None, help="the agent's python3 (default: orspace execute's)")
        group.add_argument("--docker-image", default=None, help="image of --sandbox docker (as orspace execute)")
        group.add_argument(
            "--licence", nargs="+", default=[], metavar="SOLVER=PATH", help="full solver licences, read-only"
        )


class CallConfigKwargs(TypedDict, total=False):
    """What `call_config_kwargs` gives: `sandboxenv.AgentSandboxConfig`'s fields the flags set."""

    sandbox: SandboxName
    allow_unsandboxed: bool
    limiter: Limiter
    call_time_s: float
    call_mem_mb: int
    call_nproc: int
    workspace_mb: int
    scratch_root: str | None
    python: str | None
    docker_image: str | None
    licences: tuple[tuple[str, str], ...]


def call_config_kwargs(args: argparse.Namespace) -> CallConfigKwargs:
    """`sandboxenv.AgentSandboxConfig`'s keyword arguments from `add_call_arguments`' flags."""
    for flag in ("call_time_limit", "call_mem_mb", "call_nproc", "workspace_mb"):
        if getattr(args, flag) <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be positive")
    kwargs: CallConfigKwargs = {
        "sandbox": args.sandbox,
        "allow_unsandboxed": args.allow_unsandboxed,
        "limiter": args.limiter,
        "call_time_s": args.call_time_limit,
        "call_mem_mb": args.call_mem_mb,
        "call_nproc": args.call_nproc,
        "workspace_mb": args.workspace_mb,
        "scratch_root": args.scratch_root,
    }
    if hasattr(args, "licence"):
        licences = []
        for value in args.licence:
            solver, sep, path = value.partition("=")
            if not sep or solver not in LICENSED or not path:
                raise UsageError(f"--licence {value!r}: expected gurobi=PATH or copt=PATH")
            licences.append((solver, str(Path(path).resolve())))
        kwargs["python"] = args.python
        kwargs["docker_image"] = args.docker_image
        kwargs["licences"] = tuple(licences)
    return kwargs


def run_exit_status(summary: JsonObject, log: Any, command: str, unit: str) -> int:
    """A generation run's exit status from its summary: 0 when every sample is final; else one ERROR
    line naming how many `unit`s are incomplete and the first with its reason, and 1."""
    if summary["complete"]:
        return 0
    first, why = next(iter(summary["incomplete"].items()))
    log.error(
        "%s: %d %s(s) incomplete, first %s: %s; rerun the same command to generate them "
        "(finished %ss are not asked again)",
        command,
        len(summary["incomplete"]),
        unit,
        first,
        why,
        unit,
    )
    return 1
