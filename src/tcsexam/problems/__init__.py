"""Problem modules (one per problem) and the registry `get_problem(name)`.

Names: maxcut, sat, tsp, coloring, maxsat (Solver track) and the construction kinds in
CONSTRUCTIONS. Modules are imported on first use.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.problems.base import CheckResult, Problem

#: the Solver track's problems: one module each, `tcsexam.problems.<name>`
SOLVER_PROBLEMS: tuple[str, ...] = ("maxcut", "sat", "tsp", "coloring", "maxsat")
#: the construction kinds: every public module of tcsexam.problems.constructions but its command
#: module `cli` (docs/constructions.md)
CONSTRUCTIONS: tuple[str, ...] = tuple(
    m.name
    for m in pkgutil.iter_modules([str(Path(__file__).parent / "constructions")])
    if not m.name.startswith("_") and m.name != "cli"
)
#: problem name -> its module; the module defines one concrete `Problem` subclass, named by the module
PROBLEMS: dict[str, str] = {
    **{name: f"tcsexam.problems.{name}" for name in SOLVER_PROBLEMS},
    **{name: f"tcsexam.problems.constructions.{name}" for name in CONSTRUCTIONS},
}


@cache
def get_problem(name: str) -> Problem:
    """The problem implementation called `name`; InputError for an unknown name."""
    try:
        module_name = PROBLEMS[name]
    except KeyError:
        raise InputError(f"unknown problem {name!r}; known problems: {', '.join(sorted(PROBLEMS))}") from None
    module = importlib.import_module(module_name)
    (cls,) = (
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, Problem) and v.__module__ == module_name and not inspect.isabstract(v)
    )
    return cls()


__all__ = ["CONSTRUCTIONS", "PROBLEMS", "CheckResult", "Problem", "get_problem"]
