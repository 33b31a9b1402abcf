"""The Snakemake workflow's helpers: everything `rules/*.smk` computes (which jobs, which files,
which resources) lives here so that it is tested like the rest of the package; the rules only wire.

`Plan` plans the TCSExam run (rules/common.smk and the Solver, track, index and reference rules);
`OrspaceRuns` the OR-Space runs (rules/orspace.smk). Both load on first use, so that the light
`tcsexam doctor` command (`doctor_cli`, here because `--config` judges a config through `Plan`)
pays for neither unless it is given a config.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tcsexam.workflow.orspace import OrspaceRuns
    from tcsexam.workflow.plan import Plan

_LAZY = {"OrspaceRuns": "tcsexam.workflow.orspace", "Plan": "tcsexam.workflow.plan"}

__all__ = ["OrspaceRuns", "Plan"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
