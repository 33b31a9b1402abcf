"""Seeded instance generation shared by `tcsexam generate` and the generated Solver task families.

Instance k (1-based) of `tcsexam generate --problem P --size N --seed S --count C` is drawn from
`numpy.random.SeedSequence(S).spawn(C)[k - 1]`, whose stream does not depend on C; its file is
`<problem>[-<format>]-n<N>-s<S>-<k><suffix>`. A generated task instance records (size, seed,
index, format) and the file's sha256 (config/tasks/*.yaml, src/tcsexam/tasks.py), so every user
regenerates the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tcsexam.problems.base import Problem

#: every instance format a problem's generator writes (the problems' `formats`; the task schema's enum)
FORMATS = ("new", "old")


def generated_name(problem, size: int, seed: int, index: int = 1, form: str = "new") -> str:
    return f"{problem.name}{problem.format_tag(form)}-n{size}-s{seed}-{index}{problem.instance_suffix}"


def generate_text(problem: Problem, size: int, seed: int, index: int = 1, form: str = "new") -> str:
    """The text of instance `index` (1-based) of the seeded family (size, seed)."""
    child = np.random.SeedSequence(seed).spawn(index)[index - 1]
    rng = np.random.default_rng(child)
    return problem.generate_as(rng, size, form)
