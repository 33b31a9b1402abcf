"""The flags of `tcsexam agents generate` that providers.py and accounting.py read (model and
endpoint, cost), defined once, here. This module imports no Inspect AI: `tcsexam` registers every
command's flags on every invocation, and importing Inspect takes seconds."""

from __future__ import annotations

import argparse

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
