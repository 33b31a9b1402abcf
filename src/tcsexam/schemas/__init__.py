"""JSON Schemas of the files users write, and one way to turn a violation into one error line.

Each `<name>.schema.yaml` beside this file describes one file format (`solver.yaml`, checker
verdicts, suites, ...); the loaders call `check(data, name, source)` first and keep in Python only
the rules a schema cannot say (cross-file identities, case-insensitive names, duplicates).

Error lines name the file, the field and what is wrong: `FILE: FIELD: MESSAGE`. A schema node may
carry `x-message`, the sentence to use when that node fails (`{value!r}` is the offending value),
or a mapping from the failed keyword (`type`, `multipleOf`, ...) to its sentence with `default` for
the others; otherwise the message comes from the failed keyword (a missing key, an unknown key, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.fileio import Json, read_yaml

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


def check(data: Json, schema: str, source: str | Path, where: Callable[[list], str] | None = None) -> None:
    """Raise InputError(`source: field: what is wrong`) when `data` violates schema `schema`.
    `where`, when given, turns the failing value's path (a list of keys) into the `source: field`
    part in the file format's own words (e.g. "FILE: task 't' instance 'G1'")."""
    error = first_error(_validator(schema), data)
    if error is not None:
        at = where(list(error.absolute_path)) if where else f"{source}: {location(error)}"
        raise InputError(f"{at}: {describe(error, load_schema(schema))}")
