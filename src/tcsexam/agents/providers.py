"""Which model an agent run talks to, and how: model construction from config.

A model is one `ModelConfig`:

- **An Inspect provider by name**: `model: openai/gpt-4o`, `anthropic/claude-sonnet-4-5`,
  `google/gemini-2.5-pro`, `mockllm/model`, ... (anything `inspect_ai.model.get_model` knows). The
  provider's own key variable (`OPENAI_API_KEY`, ...) is used unless `api_key_env` names another.
- **Any OpenAI-compatible endpoint** (vLLM, a llama.cpp server, Ollama, SGLang, a hosted API) by
  `base_url` and the model name the endpoint serves (`model: Qwen/Qwen2.5-Coder-7B-Instruct`,
  `base_url: http://gpu-node:8000/v1`). It goes through Inspect's `openai-api` provider (chat
  completions, function calling), so the transcript in the `.eval` log names it
  `openai-api/<service>/<model>` where `<service>` is the config's `name` made safe.
  `api_key_env` names the variable holding the key; without one the endpoint gets the placeholder
  key `no-key` (local servers take any key).

**Keys.** Config holds only the *name* of the environment variable (`api_key_env`); the key is read
from the environment when the model is built, handed to the provider's client and kept nowhere
else: not in this object (`public()` is what records and manifests keep), not in Inspect's `.eval`
log (Inspect redacts authentication arguments; the key is passed as the client's `api_key`, not
as a model argument) and not in the agent's sandbox (which gets a clean environment).

**Retries.** `max_retries` and `timeout_s` (all attempts of one model call together) and
`attempt_timeout_s` (one HTTP attempt) are Inspect's `GenerateConfig` settings: HTTP 429, 5xx,
connection errors and timeouts are retried with Inspect's exponential back-off and jitter (from 3 s,
at most 30 min between tries), other 4xx fail at once. The OpenAI client's own retries are switched off for
OpenAI-compatible endpoints so that `max_retries` counts every retry. A call that still fails is a
`model_error` (an infrastructure failure, never the model's score).

**Sampling.** `temperature`, `max_tokens` and `seed` go to every model call (None: the provider's
default); they are part of `public()`, so every record says what the model ran with.

**Concurrency per endpoint.** `max_connections` (concurrent requests to this model),
`max_samples` (samples in flight) and `max_sandboxes` (sandboxes alive at once) are passed to
Inspect (`eval_kwargs()`).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from inspect_ai.model import GenerateConfig, Model, get_model

from tcsexam.agents.options import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_SAMPLES,
    DEFAULT_MAX_SANDBOXES,
    DEFAULT_TIMEOUT_S,
)
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject

OPENAI_COMPATIBLE = "openai-compatible"
PLACEHOLDER_KEY = "no-key"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ModelConfig:
    """One model and its endpoint. `model` is an Inspect model spec (`provider/name`) unless
    `base_url` is set, in which case it is the name the OpenAI-compatible endpoint serves."""

    model: str
    name: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_samples: int = DEFAULT_MAX_SAMPLES
    max_sandboxes: int = DEFAULT_MAX_SANDBOXES
    max_retries: int = DEFAULT_MAX_RETRIES
    timeout_s: int = DEFAULT_TIMEOUT_S
    attempt_timeout_s: int | None = None
    temperature: float | None = None  #: sampling (None: the provider's default)
    max_tokens: int | None = None  #: the longest reply (None: the provider's default)
    seed: int | None = None  #: the provider's sampling seed, where it takes one

    def __post_init__(self) -> None:
        where = f"model {self.name or self.model!r}"
        # the values as given: `from_mapping` passes a config's values unchecked, so their types are
        # checked here (as `object`: the annotations say what they must be, not what they are)
        model: object = self.model
        retries: object = self.max_retries
        attempt_timeout: object = self.attempt_timeout_s
        temperature: object = self.temperature
        max_tokens: object = self.max_tokens
        seed: object = self.seed
        if not isinstance(model, str) or not model.strip():
            raise InputError(f"{where}: model must be a non-empty string")
        if self.base_url is None and "/" not in self.model:
            raise InputError(
                f"{where}: model must be an Inspect model spec 'provider/name' (e.g. openai/gpt-4o), "
                "or give base_url for an OpenAI-compatible endpoint"
            )
        if self.base_url is not None and not re.match(r"^https?://", self.base_url):
            raise InputError(f"{where}: base_url must start with http:// or https:// (got {self.base_url!r})")
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            raise InputError(
                f"{where}: api_key_env must be the NAME of an environment variable (got something that is not one)"
            )
        for key in ("max_connections", "max_samples", "max_sandboxes", "timeout_s"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{where}: {key} must be a positive integer (got {value!r})")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise InputError(f"{where}: max_retries must be a non-negative integer (got {retries!r})")
        if attempt_timeout is not None and (not isinstance(attempt_timeout, int) or attempt_timeout < 1):
            raise InputError(f"{where}: attempt_timeout_s must be a positive integer (got {attempt_timeout!r})")
        if temperature is not None and (
            not isinstance(temperature, (int, float)) or isinstance(temperature, bool) or temperature < 0
        ):
            raise InputError(f"{where}: temperature must be a non-negative number (got {temperature!r})")
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
        ):
            raise InputError(f"{where}: max_tokens must be a positive integer (got {max_tokens!r})")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise InputError(f"{where}: seed must be an integer (got {seed!r})")
        if not self.name:
            object.__setattr__(self, "name", self.model)

    @classmethod
    def from_mapping(cls, data: Json, where: str = "model") -> ModelConfig:
        """From a config mapping (the workflow's `agents.models[*]`); unknown keys are errors, and a
        key given where its name belongs (`api_key`) is refused."""
        if not isinstance(data, dict):
            raise InputError(f"{where}: a model must be a mapping")
        if "api_key" in data:
            raise InputError(
                f"{where}: api_key is not accepted in config: name its environment variable in api_key_env"
            )
        if not data.get("model"):
            raise InputError(f"{where}: model is required")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        unknown = sorted(set(data) - known - {"provider", "limits", "prices"})
        if unknown:
            raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}")
        provider = data.get("provider")
        if provider is not None and provider != OPENAI_COMPATIBLE and "base_url" not in data:
            if not str(values.get("model", "")).startswith(f"{provider}/"):
                values["model"] = f"{provider}/{values.get('model', '')}"
        if provider == OPENAI_COMPATIBLE and not data.get("base_url"):
            raise InputError(f"{where}: provider {OPENAI_COMPATIBLE} needs base_url")
        return cls(**values)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ModelConfig:
        """From the flags `options.add_model_arguments` defines."""
        return cls(
            model=args.model,
            name=args.model_name or "",
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            max_connections=args.max_connections,
            max_samples=args.max_samples,
            max_sandboxes=args.max_sandboxes,
            max_retries=args.max_retries,
            timeout_s=args.timeout,
            attempt_timeout_s=args.attempt_timeout,
            temperature=args.temperature,
            max_tokens=args.max_tokens,
            seed=args.seed,
        )

    @property
    def provider(self) -> str:
        """`openai-compatible` for an endpoint by base URL, else the Inspect provider's name."""
        return OPENAI_COMPATIBLE if self.base_url is not None else self.model.split("/", 1)[0]

    @property
    def service(self) -> str:
        """The `<service>` of `openai-api/<service>/<model>`: the config name made safe."""
        slug = re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")
        return slug or "endpoint"

    @property
    def inspect_spec(self) -> str:
        """The model as Inspect names it (in the `.eval` log and in `model_usage`)."""
        if self.base_url is not None:
            return f"openai-api/{self.service}/{self.model}"
        return self.model

    @property
    def price_keys(self) -> tuple[str, ...]:
        """Names a prices file may list this model under, first match wins: the config name, the
        model as configured, the Inspect spec, the bare model name."""
        bare = self.model.split("/", 1)[1] if self.base_url is None else self.model
        return tuple(dict.fromkeys((self.name, self.model, self.inspect_spec, bare)))

    def public(self) -> JsonObject:
        """What records and manifests keep: no key, only its variable's name."""
        return {**asdict(self), "provider": self.provider, "inspect_model": self.inspect_spec}

    def api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the environment (never stored). A named variable that is unset is an error."""
        env = os.environ if env is None else env
        if self.api_key_env is None:
            return PLACEHOLDER_KEY if self.base_url is not None else None
        value = env.get(self.api_key_env)
        if not value:
            raise InputError(
                f"model {self.name}: environment variable {self.api_key_env} (api_key_env) is not set: "
                f"export {self.api_key_env}=<your key> before the run"
            )
        return value

    def generate_config(self) -> GenerateConfig:
        """Inspect's GenerateConfig with this endpoint's retries, timeouts and connection cap."""
        return GenerateConfig(
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            attempt_timeout=self.attempt_timeout_s,
            max_connections=self.max_connections,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def inspect_model(self, env: dict[str, str] | None = None) -> Model:
        """A fresh `inspect_ai.model.Model` for this config (the key read from the environment now)."""
        key = self.api_key(env)
        if self.base_url is not None:
            return get_model(
                self.inspect_spec,
                config=self.generate_config(),
                base_url=self.base_url,
                api_key=key,
                memoize=False,
                max_retries=0,  # the OpenAI client's own retries: Inspect's max_retries counts them all
            )
        return get_model(self.model, config=self.generate_config(), api_key=key, memoize=False)

    def eval_kwargs(self) -> dict[str, int]:
        """The concurrency caps of this endpoint as `inspect_ai.eval` arguments."""
        return {
            "max_samples": self.max_samples,
            "max_sandboxes": self.max_sandboxes,
            "max_connections": self.max_connections,
            "max_retries": self.max_retries,
            "timeout": self.timeout_s,
        }
