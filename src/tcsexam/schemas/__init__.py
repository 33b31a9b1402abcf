"""JSON Schemas of the files users write, and one way to turn a violation into one error line.

Each `<name>.schema.yaml` beside this file describes one file format (`solver.yaml`, checker
verdicts, suites, ...); the loaders call `check(data, name, source)` first and keep in Python only
the rules a schema cannot say (cross-file identities, case-insensitive names, duplicates).

Data once found valid is remembered (`PassedChecks`): a workflow checks each task file when it
plans, and its jobs, each a new process, then skip jsonschema (its import alone cost 0.1-0.18 s
of a row job's 0.26 s).

Error lines name the file, the field and what is wrong: `FILE: FIELD: MESSAGE`. A schema node may
carry `x-message`, the sentence to use when that node fails (`{value!r}` is the offending value),
or a mapping from the failed keyword (`type`, `multipleOf`, ...) to its sentence with `default` for
the others; otherwise the message comes from the failed keyword (a missing key, an unknown key, ...).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import Json, read_yaml
from tcsexam.paths import cache_dir, harness_owned

SCHEMA_DIR = Path(__file__).parent
MESSAGE_MAX = 200


@cache
def load_schema(name: str) -> dict[str, Any]:
    schema = read_yaml(SCHEMA_DIR / f"{name}.schema.yaml", "schema")
    if not isinstance(schema, dict):
        raise TypeError(f"{SCHEMA_DIR / name}.schema.yaml is not a mapping")
    return schema


@cache
def _validator(name: str):
    """The schema's validator. The schema itself is checked against the draft's metaschema by
    tests/unit/test_schemas.py, not here: every short command loads a schema, and that check
    cost 0.12 s of each one's 0.4 s start."""
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema(name))


def location(error) -> str:
    """`a/b/0` for the failing value's path, `(top level)` at the root."""
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def _x_message(error, root: dict[str, Any]) -> str | None:
    """The `x-message` of the deepest schema node on the failed path that describes a field (the
    root's only for an error at the top level)."""
    found, depth, node, i = None, 0, root, 0
    path = list(error.absolute_schema_path)
    while isinstance(node, dict):
        if "x-message" in node and (depth > 0 or not error.absolute_path):
            found = node["x-message"]
        if i >= len(path) or path[i] not in node:
            break
        key, child = path[i], node[path[i]]
        i += 1
        if key in ("properties", "patternProperties", "prefixItems", "anyOf", "oneOf", "allOf"):
            if i >= len(path):
                break
            depth += key not in ("anyOf", "oneOf", "allOf")
            node, i = child[path[i]], i + 1
        else:
            depth += key in ("items", "additionalProperties")
            node = child
    return found


def describe(error, root: dict[str, Any] | None = None) -> str:
    """One line for a jsonschema ValidationError: a missing or unknown key by name, else the
    `x-message` of the field's schema node, else jsonschema's own message."""
    node = error.schema if isinstance(error.schema, dict) else {}
    x_message = _x_message(error, root) if root is not None else node.get("x-message")
    if error.validator == "required":
        missing = [key for key in error.validator_value if key not in error.instance]
        message = f"missing key {missing[0]!r}" if missing else error.message
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = sorted(node.get("properties", {}))
        extra = sorted(str(k) for k in error.instance if k not in known)
        message = f"unknown key(s) {', '.join(extra)}; known: {', '.join(known)}"
    elif isinstance(x_message, dict):  # one sentence per failed keyword, else `default`
        chosen = x_message.get(error.validator, x_message.get("default"))
        message = chosen.format(value=error.instance) if chosen else error.message
    elif x_message is not None:
        message = x_message.format(value=error.instance)
    else:
        message = error.message
    message = " ".join(message.split())
    return message if len(message) <= MESSAGE_MAX else message[: MESSAGE_MAX - 3] + "..."


def first_error(validator, data: Json):
    """The most relevant violation at the level where it happened (not descending into the
    alternatives of anyOf/oneOf, whose field-level message says more), or None."""
    from jsonschema.exceptions import by_relevance

    errors = list(validator.iter_errors(data))
    return max(errors, key=by_relevance()) if errors else None


class PassedChecks:
    """The (schema, data) pairs that passed `check`, as empty files named by the sha256 of the
    schema file, the installed jsonschema (its module's path and mtime), the schema's name and the
    data's canonical JSON, under `cache_dir()/schema-passed`. Only a file this user owns in a
    folder nobody else can write counts (`harness_owned`); data that JSON cannot encode
    canonically, or a cache that cannot be written, is simply checked every time. Only passes are
    kept: a violation is always found again, with its message."""

    def __init__(self, root: Path | None = None):
        self.root = root if root is not None else cache_dir() / "schema-passed"

    def key(self, schema: str, data: Json) -> str | None:
        try:
            text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):  # a YAML date, a non-string key: no canonical form
            return None
        digest = hashlib.sha256()
        for part in (_schema_sha256(schema), _jsonschema_stamp(), schema, text):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def passed(self, key: str) -> bool:
        return harness_owned(self._path(key))

    def remember(self, key: str) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
        except OSError:
            pass  # a read-only or full cache: the next process checks again


@cache
def _schema_sha256(name: str) -> str:
    return hashlib.sha256((SCHEMA_DIR / f"{name}.schema.yaml").read_bytes()).hexdigest()


@cache
def _jsonschema_stamp() -> str:
    """Which jsonschema would check (another version could judge differently), without importing it."""
    spec = importlib.util.find_spec("jsonschema")
    origin = spec.origin if spec is not None else None
    try:
        return f"{origin}:{os.stat(origin).st_mtime_ns}" if origin else "absent"
    except OSError:
        return "absent"


PASSED = PassedChecks()


def check(data: Json, schema: str, source: str | Path, where: Callable[[list], str] | None = None) -> None:
    """Raise InputError(`source: field: what is wrong`) when `data` violates schema `schema`.
    `where`, when given, turns the failing value's path (a list of keys) into the `source: field`
    part in the file format's own words (e.g. "FILE: task 't' instance 'G1'"). Data that passed
    before (`PASSED`) is not checked again."""
    key = PASSED.key(schema, data)
    if key is not None and PASSED.passed(key):
        return
    error = first_error(_validator(schema), data)
    if error is not None:
        at = where(list(error.absolute_path)) if where else f"{source}: {location(error)}"
        raise InputError(f"{at}: {describe(error, load_schema(schema))}")
    if key is not None:
        PASSED.remember(key)
