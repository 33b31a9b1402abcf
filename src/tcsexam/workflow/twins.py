"""The twins part of the workflow's plan (`tcsexam.workflow.plan.Plan` inherits it; docs/twins.md).

`twins: {seed: S, copies: K, score_on: originals|twins, threshold: D}` in the config: every Solver
task of the suite gets K twin sets (seeds S .. S + K - 1) made by `tcsexam twins make` (rule
`twins_make`, the reference carried over), every offline Solver attempt runs on each twin set too
under the same limits (rule `twins_run`) and is scored against the twin reference (rule
`twins_solver_row`); `tcsexam score --twins` reports the paired differences. Every offline Solver
attempt's candidate is also scanned (rule `scan_candidate`, `tcsexam scan-candidate`), with or
without twins. With `score_on: twins` the attempt table's Solver rows are the first twin set's and
the cohort's reference is the merged twin reference (rule `twins_reference`).

Layout under <results>/<suite>/<protocol>/twins/s<seed>/:

    tasks/<task>/{task.yaml, reference.json, map.json, instances/}   tcsexam twins make
    reference.json                                                  the tasks' twin references merged
    solver/<model>/<task>/<attempt>/{records.json, relative.json, row.json, records/}
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.scoring.reference import resolve_reference_path
from tcsexam.twins.make import twin_name
from tcsexam.workflow.agent_tracks import after_agents
from tcsexam.workflow.plan_base import PlanBase


class TwinsPlan(PlanBase):
    # ---- settings -------------------------------------------------------------------------------

    @property
    def twins(self) -> JsonObject | None:
        return self.config.get("twins") or None

    @property
    def twin_seeds(self) -> list[int]:
        tw = self.twins
        if tw is None or self.online:
            return []
        return [int(tw["seed"]) + k for k in range(int(tw.get("copies", 1)))]

    @property
    def score_on_twins(self) -> bool:
        tw = self.twins
        return bool(self.twin_seeds) and tw is not None and tw.get("score_on", "originals") == "twins"

    @property
    def twins_root(self) -> str:
        return f"{self.out}/twins"

    def twin_task_dir(self, seed: int | str, task: str) -> str:
        return f"{self.twins_root}/s{seed}/tasks/{task}"

    def twin_attempt_dir(self, seed: int | str, model: str, task: str, attempt: str) -> str:
        return f"{self.twins_root}/s{seed}/solver/{model}/{task}/{attempt}"

    def twin_reference_file(self, seed: int | str) -> str:
        return f"{self.twins_root}/s{seed}/reference.json"

    def check_twins(self) -> None:
        if self.twins is not None and self.online:
            raise InputError(
                "config twins: the online protocol runs no candidate, so there is nothing to run on twins "
                "(remove twins: or use protocol: offline)"
            )

    # ---- inputs of the rules --------------------------------------------------------------------

    def reference_path(self) -> str:
        """The evaluation's reference as a file (twins_make's input and argument)."""
        path = resolve_reference_path(self.reference)
        if not path.is_absolute() and not path.exists() and (self.root / path).exists():
            path = self.root / path
        return str(path)

    def twins_make_inputs(self, wildcards) -> list[str]:
        """The task file and its generated instances. The reference is read, not an input: it is
        frozen, and as an input it would make the workflow rebuild it (it is the `reference`
        target's output) as a side effect of an evaluation."""
        return [self.task_file(wildcards.task), *self.generated_inputs(wildcards.task)]

    def twin_run_inputs(self, wildcards) -> list[str]:
        cand = self.candidate(wildcards.model, wildcards.task, wildcards.attempt)
        return [*self.candidate_files(cand), f"{self.twin_task_dir(wildcards.seed, wildcards.task)}/task.yaml"]

    def twin_instances_arg(self, wildcards) -> str:
        """`--instances ...` of the twins of the config's subset of a task (run.instances)."""
        chosen = self.run["instances"].get(wildcards.task)
        if not chosen:
            return ""
        names = [twin_name(self.task(wildcards.task).id, int(wildcards.seed), n) for n in chosen]
        return "--instances " + " ".join(shlex.quote(n) for n in names)

    def twin_references(self, wildcards) -> list[str]:
        return [f"{self.twin_task_dir(wildcards.seed, t)}/reference.json" for t in self.solver_tasks]

    def _twin_files(self, name: str, seeds: list[int] | None = None) -> list[str]:
        return [
            f"{self.twin_attempt_dir(s, p.model, p.item, p.attempt)}/{name}"
            for s in (self.twin_seeds if seeds is None else seeds)
            for p in self.solver_runs()
        ]

    @after_agents
    def scan_files(self, wildcards=None) -> list[str]:
        """scan.json of every offline Solver attempt (the online protocol runs no candidate)."""
        if self.online:
            return []
        return [f"{self.layout.attempt_dir(p.model, p.item, p.attempt)}/scan.json" for p in self.solver_runs()]

    @after_agents
    def score_inputs(self, wildcards=None) -> list[str]:
        """Everything `tcsexam score` reads beyond the table and the cohort: the solver-score outputs
        on the originals and on every twin set, the scans."""
        return [*self.relative_files(), *self._twin_files("relative.json"), *self.scan_files()]

    def twin_row_files(self) -> list[str]:
        return self._twin_files("row.json", self.twin_seeds[:1])

    def score_rows(self, rows: list[str]) -> list[str]:
        """The attempt table's row files: with score_on: twins the Solver rows of the first twin set."""
        if not self.score_on_twins:
            return rows
        originals = {str(self.layout.solver_row(p.model, p.item, p.attempt)) for p in self.solver_runs()}
        return [r for r in rows if r not in originals] + self.twin_row_files()

    def cohort_reference(self) -> str:
        return self.twin_reference_file(self.twin_seeds[0]) if self.score_on_twins else self.reference

    def cohort_inputs(self, wildcards=None) -> list[str]:
        return [self.twin_reference_file(self.twin_seeds[0])] if self.score_on_twins else []

    @property
    def score_solver_dir(self) -> str:
        """`--solver-scores` of the score rule: the scores the Index is made of."""
        if self.score_on_twins:
            return f"{self.twins_root}/s{self.twin_seeds[0]}/solver"
        return f"{self.out}/solver"

    def score_twin_args(self, wildcards=None) -> str:
        """The score rule's `--originals` (scans; twin differences) and `--twins` options."""
        if self.online:
            return ""
        out = f"--originals {shlex.quote(str(Path(self.out) / 'solver'))}"
        tw = self.twins
        if self.twin_seeds and tw is not None:  # twin seeds only with a twins config
            threshold = float(tw["threshold"])  # the schema's default fills it in
            out += f" --twins {shlex.quote(self.twins_root)} --twin-threshold {threshold!r}"
        return out
