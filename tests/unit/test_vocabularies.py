"""Closed vocabularies are typed once: each is a StrEnum (statuses, terminations, adoption states,
score statuses and types, protocols, tracks, task kinds and directions, sandboxes, limiters, proof and
verdict statuses, compare verdicts, OR-Space modes, solvers, contexts, failure modes), the tuples
and subsets the code uses are derived from it, and no module spells a vocabulary out again as a
literal (`("selected", "selected_provisional")` where `ADOPTED` is meant)."""

from __future__ import annotations

import ast
import enum
import importlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
#: a module-level name ending so names a vocabulary: it must be derived from its StrEnum
VOCABULARY_SUFFIXES = (
    "STATUSES",
    "TERMINATIONS",
    "MODES",
    "KINDS",
    "TRACKS",
    "VERDICTS",
    "TYPES",
    "PROTOCOLS",
    "LIMITERS",
    "DIRECTIONS",
    "SOLVERS",
    "CONTEXTS",
    "INTERFACES",
)


def _module_names() -> list[str]:
    names = []
    for path in sorted((SRC / "tcsexam").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] != "__main__":
            names.append(".".join(parts))
    return names


def closed_vocabularies() -> dict[str, frozenset[str]]:
    """`module.Enum` -> its values, for every StrEnum the package defines."""
    found = {}
    for name in _module_names():
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, type) and issubclass(value, enum.StrEnum) and value.__module__ == name:
                found[f"{name}.{value.__name__}"] = frozenset(m.value for m in value)
    return found


def _string_literals(node: ast.AST) -> set[str] | None:
    """The strings of a tuple, list or set literal of two or more string constants, else None."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) < 2:
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return None
    return {e.value for e in node.elts}


def vocabulary_copies(path: Path, vocabularies: dict[str, frozenset[str]]) -> list[str]:
    """Literal collections in `path` whose strings all belong to one vocabulary (a copy of it or of
    a subset), and module-level vocabulary names bound to a literal instead of their enum."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        strings = _string_literals(node)
        if strings is None:
            continue
        for name, values in vocabularies.items():
            if strings <= values:
                out.append(f"{path.name}:{node.lineno}: {sorted(strings)} spells out {name}")
                break
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                named = isinstance(target, ast.Name) and target.id.endswith(VOCABULARY_SUFFIXES)
                strings = _string_literals(node.value) if named else None
                if strings and all(re.fullmatch(r"[a-z][a-z0-9_]*", s) for s in strings):  # ours: snake_case
                    out.append(f"{path.name}:{node.lineno}: {target.id} is a literal, not derived from a StrEnum")
    return out


@pytest.fixture(scope="module")
def vocabularies() -> dict[str, frozenset[str]]:
    return closed_vocabularies()


def test_the_package_types_its_vocabularies(vocabularies):
    expected = {
        "tcsexam.records.Status",
        "tcsexam.records.Termination",
        "tcsexam.scoring.vocabulary.AdoptionStatus",
        "tcsexam.scoring.vocabulary.ScoreStatus",
        "tcsexam.scoring.vocabulary.ScoreType",
        "tcsexam.scoring.vocabulary.Protocol",
        "tcsexam.suites.Track",
        "tcsexam.problems.base.Kind",
        "tcsexam.problems.base.Direction",
        "tcsexam.containment.Limiter",
        "tcsexam.containment.SandboxName",
        "tcsexam.limits.UnsatProof",
        "tcsexam.proofs.ProofStatus",
        "tcsexam.attempts.verdicts.VerdictStatus",
        "tcsexam.reproduce.compare.Verdict",
        "tcsexam.orspace.release.Mode",
        "tcsexam.orspace.solvers.Solver",
        "tcsexam.orspace.conditions.Context",
        "tcsexam.orspace.conditions.Interface",
        "tcsexam.orspace.objectives.FailureMode",
        "tcsexam.scoring.twins.FindingKind",
    }
    assert expected <= set(vocabularies), sorted(expected - set(vocabularies))


def test_the_finder_finds_a_copy_a_subset_and_a_literal_vocabulary(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        'MODES = ("fast", "slow")\n'
        "def f(x):\n"
        '    return x in ("fast", "slow"), x in ("slow", "other"), x in ("fast",)\n'
    )
    found = vocabulary_copies(src, {"m.Speed": frozenset({"fast", "slow", "still"})})
    assert len(found) == 3, found
    assert sum("spells out m.Speed" in f for f in found) == 2 and "MODES is a literal" in found[-1]


def test_no_module_spells_out_a_vocabulary(vocabularies):
    copies = [c for path in sorted((SRC / "tcsexam").rglob("*.py")) for c in vocabulary_copies(path, vocabularies)]
    assert not copies, "\n".join(copies)


def test_the_vocabulary_tuples_follow_their_enums():
    from tcsexam.containment import LIMITER_CHOICES, SANDBOX_NAMES, Limiter, SandboxName
    from tcsexam.limits import UNSAT_PROOF_MODES, UnsatProof
    from tcsexam.records import STATUSES, Status
    from tcsexam.runner.limiter.types import LIMITERS
    from tcsexam.runner.sandboxes import CHOICES, SANDBOXES
    from tcsexam.scoring.vocabulary import ADOPTED, ADOPTION_STATUSES, AdoptionStatus
    from tcsexam.suites import BINARY_TRACKS, TRACKS, VERDICT_TRACKS, Track

    assert TRACKS == ("theorem", "solver", "construction", "open_conjecture") == tuple(Track)
    assert set(BINARY_TRACKS) | {Track.SOLVER, Track.CONSTRUCTION} == set(Track)
    assert Track.SOLVER not in VERDICT_TRACKS and set(VERDICT_TRACKS) < set(TRACKS)
    assert set(ADOPTED) < set(ADOPTION_STATUSES) == set(AdoptionStatus) and AdoptionStatus.EXCLUDED not in ADOPTED
    assert (
        STATUSES == set(Status)
        and LIMITERS == LIMITER_CHOICES
        and set(LIMITER_CHOICES) < set(Limiter)
        and UNSAT_PROOF_MODES == tuple(UnsatProof)
    )
    assert set(SANDBOXES) == set(SANDBOX_NAMES) == set(SandboxName) - {SandboxName.AUTO, SandboxName.NONE}
    assert CHOICES == ("auto", *SANDBOX_NAMES)
    assert all(
        type(v) is str for v in (*TRACKS, *ADOPTION_STATUSES, *LIMITERS, *CHOICES)
    )  # plain strings: YAML, argparse


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


#: names a value of a vocabulary goes by beside its enum's own (`ScoreStatus` -> score_status)
ALIASES = {"SandboxName": ("sandbox",), "AdoptionStatus": ("adoption",)}


def field_names(vocabularies: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """A variable, attribute, key or keyword name -> the vocabularies a value under that name is
    from: the enum's name in snake case (`Track`: track, `ScoreStatus`: score_status) and its aliases,
    alone or as the end of a longer name (`new_status`, `self.track`, `row["score_status"]`)."""
    names: dict[str, list[str]] = {}
    for qualified in vocabularies:
        enum_name = qualified.rpartition(".")[2]
        for name in (_snake(enum_name), *ALIASES.get(enum_name, ())):
            names.setdefault(name, []).append(qualified)
    return names


def _name_of(node: ast.AST) -> str | None:
    """The name a compared value goes by: `x`, `obj.x`, `row["x"]`, `row.get("x")`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def _vocabularies_named(name: str | None, names: dict[str, list[str]]) -> list[str]:
    if not name:
        return []
    name = name.lower()
    return [v for key, found in names.items() if name == key or name.endswith("_" + key) for v in found]


def _literals(node: ast.AST) -> set[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return {e.value for e in node.elts}
    return None


def literal_sites(path: Path, vocabularies: dict[str, frozenset[str]]) -> list[tuple[ast.Constant, str]]:
    """Where `path` writes a vocabulary's value as a string literal instead of its member: compared
    with `==`, `!=`, `in`, `not in` (`track == "solver"`, `row["status"] in ("ok",)`), passed
    as a keyword (`f(track="solver")`) or assigned (`direction = "maximize"`), when the value compared or the keyword goes by the
    vocabulary's name (see `field_names`) and every literal is one of its values."""
    names = field_names(vocabularies)
    out: list[tuple[ast.Constant, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        pairs: list[tuple[ast.AST, ast.AST]] = []
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
                pairs = [(node.left, node.comparators[0]), (node.comparators[0], node.left)]
            elif isinstance(node.ops[0], (ast.In, ast.NotIn)):
                pairs = [(node.left, node.comparators[0])]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            pairs = [(target, node.value) for target in targets if isinstance(node.value, ast.Constant)]
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                strings = _literals(kw.value) if isinstance(kw.value, ast.Constant) else None
                for vocabulary in _vocabularies_named(kw.arg, names):
                    if strings and strings <= vocabularies[vocabulary]:
                        out.append((kw.value, vocabulary))
                        break
            continue
        for value, literal in pairs:
            strings = _literals(literal)
            for vocabulary in _vocabularies_named(_name_of(value), names) if strings else []:
                if strings <= vocabularies[vocabulary]:
                    out += [(c, vocabulary) for c in ([literal] if isinstance(literal, ast.Constant) else literal.elts)]
                    break
    return out


def literal_members(path: Path, vocabularies: dict[str, frozenset[str]]) -> list[str]:
    """`literal_sites` as lines: file, line, the literal and the vocabulary meant."""
    where = path.relative_to(SRC).as_posix() if path.is_relative_to(SRC) else path.name
    return [
        f"{where}:{c.lineno}: {c.value!r} where a member of {v} is meant"
        for c, v in sorted(literal_sites(path, vocabularies), key=lambda s: (s[0].lineno, s[0].col_offset))
    ]


def test_the_member_finder_finds_comparisons_and_keywords(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(
        "def f(row, job):\n"
        '    a = job.speed == "fast"\n'
        '    b = row["new_speed"] in ("fast", "slow")\n'
        '    c = make(speed="slow")\n'
        '    d = job.speed == "other", job.colour == "fast", make(colour="slow")\n'
        '    job.speed = "still"\n'
        '    return "fast" != row.get("speed")\n'
    )
    found = literal_members(src, {"m.Speed": frozenset({"fast", "slow", "still"})})
    assert [f.split(":")[1] for f in found] == ["2", "3", "3", "4", "6", "7"], found


def test_no_module_compares_a_vocabulary_with_a_literal(vocabularies):
    found = [c for path in sorted((SRC / "tcsexam").rglob("*.py")) for c in literal_members(path, vocabularies)]
    assert not found, f"{len(found)} literal(s) where an enum member is meant:\n" + "\n".join(found)
