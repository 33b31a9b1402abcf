"""A judge model behind an OpenAI-compatible chat-completions endpoint, called through the `openai`
client (the model layer of the agent stage for such endpoints), with its own retries off.

- Settings: `JudgeSettings.from_env()` reads `TCSEXAM_JUDGE_BASE_URL`, `TCSEXAM_JUDGE_MODEL`,
  `TCSEXAM_JUDGE_API_KEY` (falling back to `OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`);
  explicit values (config, CLI) win. Requests use temperature 0 and
  `response_format: {"type": "json_object"}`.
- Retries: HTTP 429, 5xx, connection errors, timeouts and malformed/incomplete judgments are
  retried up to `max_attempts` times with exponential backoff (`backoff_s * 2**k`, capped at
  `max_backoff_s`); a `Retry-After` header (seconds or HTTP date) is honoured. Other 4xx fail at
  once. What still fails raises `JudgeError`: a judgment is never silently replaced by zeros.
- Prompts: `judge` asks for an Explain judgment (`judge_prompt.py`); `ask` takes any system prompt
  and validator (the attribution judge, `attribution_judge.py`). `last_raw` is the text of the
  last reply, kept in the cache entry too.
- Cache: a validated judgment is stored on disk under `cache_dir`, keyed by the sha256 of
  (judge model, prompt sha256, canonical JSON of the input, and the repeat index when above 0); a
  hit skips the endpoint. `repeat` K > 0 asks the same judgment afresh (a self-consistency
  repeat, `judge_agreement`).
- Cost: every reply's `usage` (`prompt_tokens`, `completion_tokens`, summed over the attempts of
  one judgment) is recorded per judgment (`last_usage`, stored in the cache entry too); with prices
  (USD per million input and output tokens of the judge model) each judgment gets a `cost` and the
  client a total. With `max_cost`, a judgment whose estimated cost (the dearest judgment so far
  this run, else the request's bytes / 4 input tokens plus `ESTIMATED_OUTPUT_TOKENS`) would take the
  new spending of this run past the budget raises `BudgetExceeded` before anything is sent; cache
  hits cost nothing new, so a rerun with the cache continues where the budget stopped.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, atomic_write_json, read_yaml
from tcsexam.orspace.judge_prompt import PROMPT_SHA256, PROMPT_VERSION, SYSTEM_PROMPT

SCORE_RANGES = {"reasoning": 35.0, "grounding": 20.0, "answer_quality": 10.0}
ESTIMATED_OUTPUT_TOKENS = 1000


class JudgeError(Exception):
    """The judge gave no valid judgment after every retry (or cannot be reached / configured)."""


class BudgetExceeded(Exception):
    """The next judgment would take the judge's spending past `max_cost` (nothing was sent)."""


def load_prices(path: str | Path, model: str) -> tuple[float, float] | None:
    """(USD per million input tokens, per million output tokens) of `model` from a YAML/JSON file
    `{model: {input_per_mtok: x, output_per_mtok: y}}`; None when the model is not listed."""
    data = read_yaml(Path(path), "judge prices file")
    entry = data.get(model) if isinstance(data, dict) else None
    if entry is None:
        return None
    try:
        prices = float(entry["input_per_mtok"]), float(entry["output_per_mtok"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: {model}: needs numbers input_per_mtok and output_per_mtok") from None
    if min(prices) < 0:
        raise InputError(f"{path}: {model}: prices must not be negative")
    return prices


@dataclass
class JudgeSettings:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_attempts: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    cache_dir: Path | None = None
    prices: tuple[float, float] | None = None  #: USD per million input, output tokens
    max_cost: float | None = None  #: USD of new judgments this run
    repeat: int = 0  #: which repeat of the same judgment (> 0: a fresh call, cached on its own)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> JudgeSettings:
        env = dict(os.environ if env is None else env)
        values: dict[str, Any] = {
            "base_url": env.get("TCSEXAM_JUDGE_BASE_URL") or env.get("OPENAI_BASE_URL") or "",
            "model": env.get("TCSEXAM_JUDGE_MODEL") or env.get("OPENAI_MODEL") or "",
            "api_key": env.get("TCSEXAM_JUDGE_API_KEY") or env.get("OPENAI_API_KEY") or None,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if not values["base_url"]:
            raise JudgeError("no judge endpoint: set TCSEXAM_JUDGE_BASE_URL (or OPENAI_BASE_URL) or --judge-base-url")
        if not values["model"]:
            raise JudgeError("no judge model: set TCSEXAM_JUDGE_MODEL (or OPENAI_MODEL) or --judge-model")
        if values.get("cache_dir") is not None:
            values["cache_dir"] = Path(values["cache_dir"])
        return cls(**values)

    @property
    def endpoint(self) -> str:
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"


def judgment_schema(criterion_ids: list[str], penalty_cap: float) -> JsonObject:
    """The JSON schema a judgment must satisfy for the given semantic criteria."""
    verdict = {
        "type": "object",
        "required": ["verdict", "justification"],
        "properties": {"verdict": {"type": "boolean"}, "justification": {"type": "string"}},
    }
    return {
        "type": "object",
        "required": [
            "criteria",
            "reasoning",
            "grounding",
            "answer_quality",
            "hallucination_penalty",
            "unsupported_claims",
        ],
        "properties": {
            "criteria": {
                "type": "object",
                "required": list(criterion_ids),
                "properties": {cid: verdict for cid in criterion_ids},
                "additionalProperties": False,
            },
            **{name: {"type": "number", "minimum": 0, "maximum": top} for name, top in SCORE_RANGES.items()},
            # the cap is applied by the scorer (min(penalty, cap)); a negative penalty is malformed
            "hallucination_penalty": {"type": "number", "minimum": 0},
            "unsupported_claims": {"type": "array", "items": {"type": "string"}},
        },
    }


def validate_judgment(judgment: Json, criterion_ids: list[str], penalty_cap: float) -> None:
    """Raise ValueError with a one-line reason when the judgment is malformed or incomplete."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(judgment_schema(criterion_ids, penalty_cap))
    errors = sorted(validator.iter_errors(judgment), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "judgment"
        raise ValueError(f"{where}: {err.message}")


def _retry_after(headers: Any, now: float | None = None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _openai():
    """The `openai` package (imported when a judgment is requested: heavy)."""
    import openai

    return openai


def _usage(raw: bytes, name: str) -> int:
    """A token count of a chat-completions reply's `usage` (0 when the reply has none)."""
    try:
        value = json.loads(raw).get("usage", {}).get(name, 0)
    except (ValueError, AttributeError):
        return 0
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else 0


@dataclass
class JudgeClient:
    settings: JudgeSettings
    sleep: Callable[[float], None] = time.sleep
    calls: int = 0  # HTTP requests made (tests and logs)
    cache_hits: int = 0
    log: list[str] = field(default_factory=list)
    usages: list[JsonObject] = field(default_factory=list)  #: one per judgment, in order
    last_usage: JsonObject | None = None
    last_raw: str | None = None  #: the text of the last reply (`ask`)
    spent: float = 0.0  #: cost of this run's endpoint calls (cache hits excluded)
    _client: Any = field(default=None, repr=False)  #: the `openai.OpenAI` client, made on first use

    def _cost(self, tokens_in: int, tokens_out: int) -> float | None:
        if self.settings.prices is None:
            return None
        price_in, price_out = self.settings.prices
        return tokens_in / 1e6 * price_in + tokens_out / 1e6 * price_out

    def _record_usage(self, tokens_in: int, tokens_out: int, cached: bool) -> None:
        cost = self._cost(tokens_in, tokens_out)
        self.last_usage = {"input_tokens": tokens_in, "output_tokens": tokens_out, "cost": cost, "cached": cached}
        self.usages.append(self.last_usage)
        if not cached and cost is not None:
            self.spent += cost

    def _check_budget(self, body: bytes) -> None:
        if self.settings.max_cost is None:
            return
        paid = [u["cost"] for u in self.usages if not u["cached"] and u["cost"] is not None]
        estimate = max(paid) if paid else (self._cost(len(body) // 4, ESTIMATED_OUTPUT_TOKENS) or 0.0)
        if self.spent + estimate > self.settings.max_cost:
            raise BudgetExceeded(
                f"judge budget max_judge_cost {self.settings.max_cost:g} USD would be exceeded "
                f"(spent {self.spent:.4f} USD this run, next judgment estimated {estimate:.4f} USD)"
            )

    def cost_summary(self) -> JsonObject:
        priced = [u["cost"] for u in self.usages if u["cost"] is not None]
        return {
            "judgments": len(self.usages),
            "cached": sum(u["cached"] for u in self.usages),
            "input_tokens": sum(u["input_tokens"] for u in self.usages),
            "output_tokens": sum(u["output_tokens"] for u in self.usages),
            "prices_per_mtok": list(self.settings.prices) if self.settings.prices else None,
            "total_cost": sum(priced) if self.settings.prices else None,
            "spent_this_run": self.spent if self.settings.prices else None,
            "max_cost": self.settings.max_cost,
        }

    @property
    def model(self) -> str:
        return self.settings.model

    prompt_version = PROMPT_VERSION
    prompt_sha256 = PROMPT_SHA256

    def cache_key(self, payload: JsonObject, prompt_sha256: str = PROMPT_SHA256) -> str:
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        parts: list[object] = [self.settings.model, prompt_sha256, canonical]
        if self.settings.repeat:  # repeat 0 keeps the keys of the judgments cached before repeats existed
            parts.append(["repeat", self.settings.repeat])
        blob = json.dumps(parts, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        if self.settings.cache_dir is None:
            return None
        return self.settings.cache_dir / key[:2] / f"{key}.json"

    def judge(self, payload: JsonObject, criterion_ids: list[str], penalty_cap: float) -> JsonObject:
        """A validated Explain judgment for `payload` (from the cache or the endpoint)."""
        judgment: JsonObject = self.ask(  # an object: `validate_judgment` accepted it
            payload,
            system_prompt=SYSTEM_PROMPT,
            prompt_version=PROMPT_VERSION,
            validate=lambda j: validate_judgment(j, criterion_ids, penalty_cap),
        )
        return judgment

    def ask(
        self,
        payload: JsonObject,
        *,
        system_prompt: str,
        prompt_version: str,
        validate: Callable[[Json], None],
    ) -> Json:
        """A reply to `payload` under `system_prompt` that `validate` accepts (it raises ValueError
        otherwise), from the cache or the endpoint. `last_raw` is then the reply's text (also on a
        malformed last reply, when `JudgeError` is raised)."""
        prompt_sha = hashlib.sha256(system_prompt.encode("utf-8")).hexdigest()
        key = self.cache_key(payload, prompt_sha)
        path = self._cache_path(key)
        self.last_raw = None
        if path is not None and path.exists():
            try:
                cached = json.loads(path.read_text(encoding="utf-8"))
                validate(cached.get("judgment"))
                if cached.get("model") == self.settings.model and cached.get("prompt_sha256") == prompt_sha:
                    self.cache_hits += 1
                    usage = cached.get("usage") or {}
                    self._record_usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)), True)
                    self.last_raw = cached.get("raw")
                    return cached["judgment"]
            except (OSError, ValueError, AttributeError, TypeError):
                pass  # a damaged cache entry is ignored and rewritten
        body = self._request_body(payload, system_prompt)
        self._check_budget(body)
        judgment, (tokens_in, tokens_out) = self._request_valid(json.loads(body), validate)
        self._record_usage(tokens_in, tokens_out, False)
        if path is not None:
            atomic_write_json(
                path,
                {
                    "model": self.settings.model,
                    "prompt_version": prompt_version,
                    "prompt_sha256": prompt_sha,
                    "key": key,
                    "judgment": judgment,
                    "raw": self.last_raw,
                    "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
                },
            )
        return judgment

    def _request_body(self, payload: JsonObject, system_prompt: str = SYSTEM_PROMPT) -> bytes:
        return json.dumps(
            {
                "model": self.settings.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": system_prompt},
                    {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1)},
                ],
            }
        ).encode("utf-8")

    def _backoff(self, attempt: int, retry_after: float | None) -> None:
        delay = min(self.settings.max_backoff_s, self.settings.backoff_s * (2**attempt))
        if retry_after is not None:
            delay = min(max(delay, retry_after), max(self.settings.max_backoff_s, retry_after))
        self.sleep(delay)

    def _request_valid(self, request: JsonObject, validate: Callable[[Any], None]) -> tuple[Any, tuple[int, int]]:
        """A validated reply and the tokens (in, out) of every reply it took."""
        tokens = [0, 0]
        last = "no attempt made"
        for attempt in range(self.settings.max_attempts):
            retry_after = None
            self.calls += 1
            try:
                raw = self._post(request)
            except _openai().APIStatusError as exc:
                status = exc.status_code
                retry_after = _retry_after(exc.response.headers)
                detail = exc.response.text[:200] if exc.response is not None else ""
                last = f"HTTP {status} {' '.join(detail.split())}".strip()
                if status != 429 and status < 500:
                    raise JudgeError(f"judge endpoint {self.settings.endpoint}: {last}") from None
            except _openai().APIConnectionError as exc:  # timeouts included
                reason = exc.__cause__ or exc
                last = f"{type(reason).__name__}: {reason}"
            else:
                for i, name in enumerate(("prompt_tokens", "completion_tokens")):
                    tokens[i] += _usage(raw, name)
                try:
                    self.last_raw = self._content(raw)
                    judgment = self._parse(raw)
                    validate(judgment)
                    return judgment, (tokens[0], tokens[1])
                except ValueError as exc:
                    last = f"malformed judgment: {exc}"
            self.log.append(f"attempt {attempt + 1}: {last}")
            if attempt + 1 < self.settings.max_attempts:
                self._backoff(attempt, retry_after)
        raise JudgeError(f"judge gave no valid judgment after {self.settings.max_attempts} attempts: {last}")

    def _post(self, request: JsonObject) -> bytes:
        """One chat-completions call through the `openai` client (the agents' model layer for
        OpenAI-compatible endpoints), its own retries off: the raw reply body."""
        if self._client is None:
            base = self.settings.endpoint.removesuffix("/chat/completions")
            self._client = _openai().OpenAI(
                base_url=base, api_key=self.settings.api_key or "none", timeout=self.settings.timeout_s, max_retries=0
            )
        response = self._client.chat.completions.with_raw_response.create(**request)
        body: bytes = response.http_response.content
        return body

    @staticmethod
    def _content(raw: bytes) -> str | None:
        """The message text of a reply (None when it is no chat completion), kept on the record."""
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return raw[:2000].decode("utf-8", "replace")
        return content if isinstance(content, str) else None

    @staticmethod
    def _parse(raw: bytes) -> Json:
        try:
            envelope = json.loads(raw)
            content = envelope["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ValueError(f"not a chat-completions response ({type(exc).__name__})") from None
        if not isinstance(content, str):
            raise ValueError("message content is not text")
        text = content.strip()
        if text.startswith("```"):  # some servers fence JSON despite json_object mode
            text = text.strip("`")
            text = text[4:] if text.lower().startswith("json") else text
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"content is not JSON: {exc}") from None
