"""Config values given on the command line, made to fit the schema before it validates them.

`snakemake --config run={threads: 2}` delivers `{"threads": "2"}`: Snakemake parses a nested
override without YAML's typing. The override is merged into config/config.yaml's values and the
schema fills in every other default; this module only turns strings into the numbers or Booleans
the schema asks for, so the partial nested override works as written.
"""

from __future__ import annotations

from typing import Any

_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
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
    if "boolean" in types and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    return value


def coerce_config(config: dict[str, Any], schema_path: str) -> dict[str, Any]:
    """Convert, in place, command-line strings where the schema wants a number or a Boolean."""
    import yaml

    with open(schema_path, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    _coerce(config, schema)
    return config
