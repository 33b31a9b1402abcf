"""Problem modules (one per problem) and the registry `get_problem(name)`.

Names: maxcut, sat, tsp, coloring, maxsat. Modules are imported on first use.
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
}


@cache
def get_problem(name: str) -> Problem:
    """The problem implementation called `name`; InputError for an unknown name."""
    try:
        module_name, class_name = PROBLEMS[name]
    except KeyError:
        raise InputError(f"unknown problem {name!r}; known problems: {', '.join(sorted(PROBLEMS))}") from None
    module = importlib.import_module(module_name)
    return getattr(module, class_name)()


__all__ = ["PROBLEMS", "CheckResult", "Problem", "get_problem"]
