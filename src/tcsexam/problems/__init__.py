"""Problem modules (one per problem) and the registry `get_problem(name)`.

Names: maxcut, sat, tsp, coloring, maxsat (Solver track) and the construction kinds in
CONSTRUCTIONS. Modules are imported on first use.
"""

from __future__ import annotations

import importlib
from functools import cache

from tcsexam.errors import InputError
from tcsexam.problems.base import CheckResult, Problem

#: problem name -> (module, class)
PROBLEMS: dict[str, tuple[str, str]] = {
    "maxcut": ("tcsexam.problems.maxcut", "MaxCut"),
    "sat": ("tcsexam.problems.sat", "Sat"),
    "tsp": ("tcsexam.problems.tsp", "Tsp"),
    "coloring": ("tcsexam.problems.coloring", "Coloring"),
    "maxsat": ("tcsexam.problems.maxsat", "MaxSat"),
    # construction kinds (tcsexam.problems.constructions; docs/constructions.md)
    "cap_set": ("tcsexam.problems.constructions.cap_set", "CapSet"),
    "golomb_ruler": ("tcsexam.problems.constructions.golomb_ruler", "GolombRuler"),
    "ramsey_coloring": ("tcsexam.problems.constructions.ramsey_coloring", "RamseyColoring"),
    "sidon_set": ("tcsexam.problems.constructions.sidon_set", "SidonSet"),
    "covering_design": ("tcsexam.problems.constructions.covering_design", "CoveringDesign"),
    "kissing_config": ("tcsexam.problems.constructions.kissing_config", "KissingConfig"),
    "difference_cover": ("tcsexam.problems.constructions.difference_cover", "DifferenceCover"),
    "spherical_code": ("tcsexam.problems.constructions.spherical_code", "SphericalCode"),
}

#: the construction kinds among PROBLEMS
CONSTRUCTIONS: tuple[str, ...] = tuple(name for name, (module, _) in PROBLEMS.items() if ".constructions." in module)


@cache
def get_problem(name: str) -> Problem:
    """The problem implementation called `name`; InputError for an unknown name."""
    try:
        module_name, class_name = PROBLEMS[name]
    except KeyError:
        raise InputError(f"unknown problem {name!r}; known problems: {', '.join(sorted(PROBLEMS))}") from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)()


__all__ = ["CONSTRUCTIONS", "PROBLEMS", "CheckResult", "Problem", "get_problem"]
