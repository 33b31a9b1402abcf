"""`tcsexam.formats` lists every versioned output format: each constant that holds a format's version
spells the list's current version (so a constant raised without a history entry fails here), the
histories are numbered from 1 and dated, and no version constant or literal version in src/tcsexam
is missing from the list."""

from __future__ import annotations

import ast
import datetime
import importlib
import re
from pathlib import Path

import pytest
import yaml

from tcsexam import formats, records
from tcsexam.formats import FORMATS, UNVERSIONED, Change, Format, get_format

SRC = Path(__file__).resolve().parents[2] / "src" / "tcsexam"
#: a module-level name holding a format's version (X_VERSION, X_FORMAT), and a version tag
VERSION_NAME = re.compile(r"(VERSION|FORMAT)$")
VERSION_TAG = re.compile(r"-v\d+$")
#: the keys under which a written file states its version
VERSION_KEYS = {"schema_version", "format", "version"}


def constant(where: str):
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


def mismatches(listed: tuple[Format, ...]) -> list[str]:
    """One line per constant that does not spell its format's current version."""
    return [
        f"{where} is {constant(where)!r}, but formats.py says {fmt.name} is at {fmt.spelt()!r}: "
        f"add a Change for the new version (and a reader of the old one)"
        for fmt in listed
        for where in fmt.constants
        if constant(where) != fmt.spelt()
    ]


def test_every_constant_spells_its_formats_current_version():
    assert mismatches(FORMATS) == []


def test_a_constant_raised_without_a_history_entry_is_caught(monkeypatch):
    monkeypatch.setattr(records, "SCHEMA_VERSION", 2)
    [line] = mismatches(FORMATS)
    assert line.startswith("tcsexam.records:SCHEMA_VERSION is 2, but formats.py says instance-record is at 1")
    # the entry that goes with it makes the list agree again
    fmt = get_format("instance-record")
    raised = Format(fmt.name, fmt.files, fmt.constants, (*fmt.history, Change(2, "2026-12-06", "0000000", "x")))
    assert mismatches((raised,)) == []


def test_histories_are_numbered_from_1_dated_and_named_once():
    names = [f.name for f in FORMATS] + [name for name, _ in UNVERSIONED]
    assert len(names) == len(set(names))
    for fmt in FORMATS:
        assert [c.version for c in fmt.history] == list(range(1, len(fmt.history) + 1)), fmt.name
        assert fmt.files and fmt.constants and "{}" in fmt.spelling
        for change in (*fmt.history, *fmt.kept):
            assert re.fullmatch(r"[0-9a-f]{7,40}", change.commit) and change.what, (fmt.name, change)
            datetime.date.fromisoformat(change.date)
            assert 1 <= change.version <= fmt.version
        dates = [c.date for c in fmt.history]
        assert dates == sorted(dates), fmt.name


def test_spelt_gives_a_version_as_the_constants_hold_it():
    assert get_format("index").spelt() == 1
    assert get_format("orspace-flat-prompt").spelt() == "orspace-flat-v1"
    assert get_format("workspace-record").spelt(1) == 1 and get_format("workspace-record").version == 2
    with pytest.raises(KeyError, match="no output format 'nope'"):
        get_format("nope")


def _version_sites(path: Path) -> tuple[list[str], list[str]]:
    """(module-level version constants as NAME, literal versions as `line N`) of one module."""
    tree = ast.parse(path.read_text(), str(path))
    names = []
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        for target in targets:
            if not (
                isinstance(target, ast.Name) and VERSION_NAME.search(target.id) and isinstance(value, ast.Constant)
            ):
                continue
            if type(value.value) is int or (isinstance(value.value, str) and VERSION_TAG.search(value.value)):
                names.append(target.id)
    literals = [
        f"line {key.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values)
        if isinstance(key, ast.Constant)
        and key.value in VERSION_KEYS
        and isinstance(value, ast.Constant)
        and type(value.value) is int
    ]
    return names, literals


def test_every_version_constant_of_the_source_is_listed():
    listed = {where for fmt in FORMATS for where in fmt.constants}
    unlisted, literal = [], []
    for path in sorted(SRC.rglob("*.py")):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        module = ".".join(parts)
        names, literals = _version_sites(path)
        unlisted += [f"{module}:{name}" for name in names if f"{module}:{name}" not in listed]
        literal += [f"{path.relative_to(SRC)} {where}" for where in literals]
    assert unlisted == [], "version constants not in tcsexam.formats.FORMATS"
    assert literal == [], "a file's version written as a number: name it with a constant listed in tcsexam.formats"


def test_the_finder_sees_constants_tags_and_literal_versions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        'A_VERSION = 3\nTAG_FORMAT = "x-v2"\nLOG_FORMAT = "%(message)s"\nVERSION_TIMEOUT_S = 10\n'
        'def f():\n    return {"schema_version": 1, "version": A_VERSION, "format": "x"}\n'
    )
    assert _version_sites(module) == (["A_VERSION", "TAG_FORMAT"], ["line 6"])


def test_the_reference_schema_requires_the_current_reference_version():
    schema = yaml.safe_load((SRC / "schemas" / "reference.schema.yaml").read_text())
    assert schema["properties"]["schema_version"]["const"] == get_format("reference").version


def test_the_registry_imports_nothing_of_the_package():
    tree = ast.parse(Path(formats.__file__).read_text())
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("tcsexam")]
