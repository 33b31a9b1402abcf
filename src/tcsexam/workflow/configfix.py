"""The workflow config and its schema (workflow/schemas/config.schema.yaml), where every default lives.

`with_defaults` fills in the schema's defaults (what Snakemake's `validate` does), so the planner
reads values without defaults of its own.

Config values given on the command line are made to fit the schema before it validates them.

`snakemake --config run={threads: 2}` delivers `{"threads": "2"}`: Snakemake parses a nested
override without YAML's typing. The override is merged into config/config.yaml's values and the
schema fills in every other default; this module only turns strings into the numbers or Booleans
the schema asks for, so the partial nested override works as written.
"""

from __future__ import annotations

import copy
import difflib
import os
import sys
from pathlib import Path

from tcsexam.fileio import Json, JsonObject, read_yaml

_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


def _coerce(value: Json, schema: JsonObject) -> Json:
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, sub in list(value.items()):
            spec = props.get(key, extra if isinstance(extra, dict) else None)
            if spec is not None:
                value[key] = _coerce(sub, spec)
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_coerce(v, schema["items"]) for v in value]
    if not isinstance(value, str) or "string" in types:
        return value
    text = value.strip()
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            pass
    if "number" in types:
        try:
            return float(text)
        except ValueError:
            pass
    booleans = "boolean" in types or any(isinstance(e, bool) for e in schema.get("enum", []))
    if booleans and text.lower() in _TRUE | _FALSE:  # a Boolean, or one among an enum's (auto, true, false)
        return text.lower() in _TRUE
    return value


CONFIG_SCHEMA = "workflow/schemas/config.schema.yaml"


def load_config_schema(root: str | os.PathLike = ".") -> JsonObject:
    schema: JsonObject = read_yaml(Path(root) / CONFIG_SCHEMA, "config schema")  # the project's own: an object
    return schema


def with_defaults(config: JsonObject, schema: JsonObject) -> JsonObject:
    """A copy of `config` with every default of `schema` filled in, in nested objects and list items
    too (a default object is filled in first, then its own properties' defaults)."""

    def fill(value: Json, node: JsonObject) -> Json:
        if isinstance(value, list) and isinstance(node.get("items"), dict):
            return [fill(v, node["items"]) for v in value]
        if not isinstance(value, dict):
            return value
        out = dict(value)
        for key, sub in node.get("properties", {}).items():
            if key not in out and "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
            if key in out and isinstance(sub, dict):
                out[key] = fill(out[key], sub)
        return out

    filled: JsonObject = fill(config, schema)  # (an object filled is an object)
    return filled


def coerce_config(config: JsonObject, schema_path: str) -> JsonObject:
    """Convert, in place, command-line strings where the schema wants a number or a Boolean; then
    check the config against the schema and stop with one line (exit 1) on the first problem, e.g.
    `config run.sandbox: 'bwrapp' is not one of [...]` or a misspelt key with the nearest known one
    (Snakemake's own validation, which fills in the defaults, runs after this)."""
    schema = read_yaml(schema_path, "config schema")  # libyaml's parser: 3 ms, not 33
    _coerce(config, schema)
    message = config_problem(config, schema)
    if message:
        print(f"tcsexam: error: {message}", file=sys.stderr, flush=True)
        raise SystemExit(1)
    return config


def config_problem(config: JsonObject, schema: JsonObject) -> str | None:
    """One line for the config's first schema violation (None when it is valid)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return None
    where = ".".join(str(p) for p in error.absolute_path)
    text = " ".join(error.message.split())
    if len(text) > 300:
        text = text[:297] + "..."
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        unknown = [k for k in error.instance if k not in known]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(known)})"
            return f"config{' ' + where if where else ''}: unknown key {unknown[0]!r}{hint}"
    return f"config{' ' + where if where else ''}: {text}"
