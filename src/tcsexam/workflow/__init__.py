"""The Snakemake workflow's helpers: everything `rules/*.smk` computes (which jobs, which files,
which resources) lives here so that it is tested like the rest of the package; the rules only wire.

`Plan` plans the TCSExam run (rules/common.smk and the Solver, track, index and reference rules);
`OrspaceRuns` the OR-Space runs (rules/orspace.smk).
"""

from tcsexam.workflow.orspace import OrspaceRuns
from tcsexam.workflow.plan import Plan

__all__ = ["OrspaceRuns", "Plan"]
