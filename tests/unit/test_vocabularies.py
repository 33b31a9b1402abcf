"""Closed vocabularies are typed once: each is a StrEnum (statuses, terminations, adoption states,
score statuses and types, protocols, tracks, task kinds and directions, limiters, proof and
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
        "tcsexam.tasks.Kind",
        "tcsexam.tasks.Direction",
        "tcsexam.runner.limiter.types.Limiter",
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
    from tcsexam.limits import UNSAT_PROOF_MODES, UnsatProof
    from tcsexam.records import STATUSES, Status
    from tcsexam.runner.limiter.types import LIMITERS, Limiter
    from tcsexam.scoring.vocabulary import ADOPTED, ADOPTION_STATUSES, AdoptionStatus
    from tcsexam.suites import BINARY_TRACKS, TRACKS, VERDICT_TRACKS, Track

    assert TRACKS == ("theorem", "solver", "construction", "open_conjecture") == tuple(Track)
    assert set(BINARY_TRACKS) | {Track.SOLVER, Track.CONSTRUCTION} == set(Track)
    assert Track.SOLVER not in VERDICT_TRACKS and set(VERDICT_TRACKS) < set(TRACKS)
    assert set(ADOPTED) < set(ADOPTION_STATUSES) == set(AdoptionStatus) and AdoptionStatus.EXCLUDED not in ADOPTED
    assert STATUSES == set(Status) and LIMITERS == tuple(Limiter) and UNSAT_PROOF_MODES == tuple(UnsatProof)
    assert all(type(v) is str for v in (*TRACKS, *ADOPTION_STATUSES, *LIMITERS))  # plain strings: YAML, argparse
