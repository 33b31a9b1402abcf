"""A judge model behind an OpenAI-compatible chat-completions endpoint (stdlib HTTP only).

- Settings: `JudgeSettings.from_env()` reads `TCSEXAM_JUDGE_BASE_URL`, `TCSEXAM_JUDGE_MODEL`,
  `TCSEXAM_JUDGE_API_KEY` (falling back to `OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`);
  explicit values (config, CLI) win. Requests use temperature 0 and
  `response_format: {"type": "json_object"}`.
- Retries: HTTP 429, 5xx, connection errors, timeouts and malformed/incomplete judgments are
  retried up to `max_attempts` times with exponential backoff (`backoff_s * 2**k`, capped at
  `max_backoff_s`); a `Retry-After` header (seconds or HTTP date) is honoured. Other 4xx fail at
  once. What still fails raises `JudgeError`: a judgment is never silently replaced by zeros.
- Cache: a validated judgment is stored on disk under `cache_dir`, keyed by the sha256 of
  (judge model, prompt sha256, canonical JSON of the input); a hit skips the endpoint.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcsexam.fileio import atomic_write_json
from tcsexam.orspace.judge_prompt import PROMPT_SHA256, PROMPT_VERSION, SYSTEM_PROMPT

SCORE_RANGES = {"reasoning": 35.0, "grounding": 20.0, "answer_quality": 10.0}


class JudgeError(Exception):
    """The judge gave no valid judgment after every retry (or cannot be reached / configured)."""


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

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> JudgeSettings:
        env = dict(os.environ if env is None else env)
        values = {
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


def judgment_schema(criterion_ids: list[str], penalty_cap: float) -> dict[str, Any]:
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


def validate_judgment(judgment: Any, criterion_ids: list[str], penalty_cap: float) -> None:
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


@dataclass
class JudgeClient:
    settings: JudgeSettings
    sleep: Callable[[float], None] = time.sleep
    calls: int = 0  # HTTP requests made (tests and logs)
    cache_hits: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        return self.settings.model

    prompt_version = PROMPT_VERSION
    prompt_sha256 = PROMPT_SHA256

    def cache_key(self, payload: dict[str, Any]) -> str:
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        blob = json.dumps([self.settings.model, PROMPT_SHA256, canonical], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        if self.settings.cache_dir is None:
            return None
        return self.settings.cache_dir / key[:2] / f"{key}.json"

    def judge(self, payload: dict[str, Any], criterion_ids: list[str], penalty_cap: float) -> dict[str, Any]:
        """A validated judgment for `payload` (from the cache or the endpoint)."""
        key = self.cache_key(payload)
        path = self._cache_path(key)
        if path is not None and path.exists():
            try:
                cached = json.loads(path.read_text(encoding="utf-8"))
                validate_judgment(cached.get("judgment"), criterion_ids, penalty_cap)
                if cached.get("model") == self.settings.model and cached.get("prompt_sha256") == PROMPT_SHA256:
                    self.cache_hits += 1
                    return cached["judgment"]
            except (OSError, ValueError, AttributeError):
                pass  # a damaged cache entry is ignored and rewritten
        judgment = self._request_valid(payload, criterion_ids, penalty_cap)
        if path is not None:
            atomic_write_json(
                path,
                {
                    "model": self.settings.model,
                    "prompt_version": PROMPT_VERSION,
                    "prompt_sha256": PROMPT_SHA256,
                    "key": key,
                    "judgment": judgment,
                },
            )
        return judgment

    def _request_body(self, payload: dict[str, Any]) -> bytes:
        return json.dumps(
            {
                "model": self.settings.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1)},
                ],
            }
        ).encode("utf-8")

    def _backoff(self, attempt: int, retry_after: float | None) -> None:
        delay = min(self.settings.max_backoff_s, self.settings.backoff_s * (2**attempt))
        if retry_after is not None:
            delay = min(max(delay, retry_after), max(self.settings.max_backoff_s, retry_after))
        self.sleep(delay)

    def _request_valid(self, payload: dict[str, Any], criterion_ids: list[str], penalty_cap: float) -> dict[str, Any]:
        body = self._request_body(payload)
        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        last = "no attempt made"
        for attempt in range(self.settings.max_attempts):
            retry_after = None
            self.calls += 1
            request = urllib.request.Request(self.settings.endpoint, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.settings.timeout_s) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                status = exc.code
                retry_after = _retry_after(exc.headers)
                detail = exc.read()[:200].decode("utf-8", "replace") if exc.fp else ""
                last = f"HTTP {status} {' '.join(detail.split())}".strip()
                if status != 429 and status < 500:
                    raise JudgeError(f"judge endpoint {self.settings.endpoint}: {last}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                last = f"{type(reason).__name__}: {reason}"
            else:
                try:
                    judgment = self._parse(raw)
                    validate_judgment(judgment, criterion_ids, penalty_cap)
                    return judgment
                except ValueError as exc:
                    last = f"malformed judgment: {exc}"
            self.log.append(f"attempt {attempt + 1}: {last}")
            if attempt + 1 < self.settings.max_attempts:
                self._backoff(attempt, retry_after)
        raise JudgeError(f"judge gave no valid judgment after {self.settings.max_attempts} attempts: {last}")

    @staticmethod
    def _parse(raw: bytes) -> Any:
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
