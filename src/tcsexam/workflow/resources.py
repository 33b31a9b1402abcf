"""What the workflow's small jobs ask the executor for (SLURM: runtime in minutes, memory in MB,
CPUs): one definition for every rule file, so `rules/orspace.smk` (self-contained) and the rules
the Snakefile includes ask for the same."""

from __future__ import annotations


def one_cpu_job(runtime: int = 10, mem_mb: int = 1024) -> dict[str, int]:
    """The resources of a one-CPU job (rows, tables, scores, merges, the judge): `resources:
    **one_cpu_job()`."""
    return {"runtime": runtime, "mem_mb": mem_mb, "cpus_per_task": 1}
