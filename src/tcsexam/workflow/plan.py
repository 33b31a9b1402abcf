"""The workflow's plan: which jobs and attempt rows a validated config asks for.

Used by rules/common.smk (the input functions), so the rules files hold only rules. Pure reading
of the config, the suite, the task files and the folders: nothing here runs anything.

Layout (one tree per suite and protocol, so Lite/Full and online/offline never mix):

    <results>/<suite>/<protocol>/
        solver/<model>/<task>/<attempt>/{records/, records.json, run.log, relative.json, row.json, score.log}
        tracks/<model>/{rows.json, rows.log}     (theorem, construction, open_conjecture rows)
        missing/solver/<model>/<task>/<attempt>/{row.json, row.log}
        cohort.json  attempts.csv  index.json  plots/*.png
    <results>/reference/<reference id>/<task>/seed<k>/{records/, records.json, run.log}
"""

from __future__ import annotations

import math
import os
import shlex
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError


@dataclass(frozen=True)
class Planned:
    model: str
    track: str
    item: str
    attempt: str
    row: str  #: the row file the attempt table reads


class Plan:
    def __init__(self, config: dict[str, Any], root: str | os.PathLike = "."):
        self.config = config
        self.root = Path(root)
        self.run = config.get("run", {})
        self.results = config.get("results_dir", "results")
        self.solvers_dir = config.get("solvers_dir", "solvers")
        self.verdicts_dir = config.get("verdicts_dir", "config/verdicts")
        self.protocol = config.get("protocol", "offline")
        self.reference = config.get("reference") or self.suite.id
        self._tasks: dict[str, Any] = {}
        self.models: dict[str, list[str]] = {}
        for spec in config["models"]:
            if spec["name"] in self.models:
                raise InputError(f"config models: {spec['name']!r} is listed twice")
            self.models[spec["name"]] = [str(a) for a in spec.get("attempts", ["1"])]

    # ---- suite and tasks ------------------------------------------------------------------

    @cached_property
    def suite(self):
        from tcsexam.suites import load_suite

        spec = self.config.get("suite", "lite")
        path = self.root / spec if spec.endswith((".yaml", ".yml")) else spec
        return load_suite(path)

    @property
    def out(self) -> str:
        """<results>/<suite>/<protocol>: the tree of this evaluation."""
        return f"{self.results}/{self.suite.id}/{self.protocol}"

    @property
    def solver_tasks(self) -> list[str]:
        return list(self.suite.tracks["solver"])

    def task_file(self, task: str) -> str:
        return self.run.get("task_files", {}).get(task) or f"config/tasks/{task}.yaml"

    def task(self, task: str):
        """The task definition (loaded once per task)."""
        from tcsexam.tasks import load_task

        if task not in self._tasks:
            self._tasks[task] = load_task(self.root / self.task_file(task))
        return self._tasks[task]

    def instances(self, task: str) -> list[str]:
        chosen = self.run.get("instances", {}).get(task)
        if chosen:
            return list(chosen)
        return [inst.name for inst in self.task(task).instances]

    def candidate(self, model: str, task: str, attempt: str) -> str:
        return f"{self.solvers_dir}/{model}/{task}/{attempt}"

    def has_candidate(self, model: str, task: str, attempt: str) -> bool:
        return (self.root / self.candidate(model, task, attempt) / "solver.yaml").is_file()

    def verdict(self, model: str, item: str, attempt: str) -> str:
        return f"{self.verdicts_dir}/{model}/{item}/{attempt}.json"

    # ---- attempt rows ---------------------------------------------------------------------

    @cached_property
    def planned(self) -> list[Planned]:
        rows = []
        for model, attempts in self.models.items():
            for track in ("theorem", "solver", "construction", "open_conjecture"):
                for item in self.suite.tracks[track]:
                    for attempt in attempts:
                        rows.append(Planned(model, track, item, attempt, self._row_path(model, track, item, attempt)))
        return rows

    def _row_path(self, model: str, track: str, item: str, attempt: str) -> str:
        if track == "solver":
            if self.has_candidate(model, item, attempt):
                return f"{self.out}/solver/{model}/{item}/{attempt}/row.json"
        elif (self.root / self.verdict(model, item, attempt)).is_file():
            return f"{self.out}/tracks/{model}/{item}/{attempt}/row.json"
        return f"{self.out}/missing/{track}/{model}/{item}/{attempt}/row.json"

    def row_files(self, wildcards=None) -> list[str]:
        """Solver rows (one file per attempt) + one rows file per model for the other tracks."""
        files = [p.row for p in self.planned if p.track == "solver"]
        files += [f"{self.out}/tracks/{model}/rows.json" for model in self.models]
        return files

    def verdict_files(self, wildcards) -> list[str]:
        """The verdict files present for a model (inputs of its rows job, so a new one reruns it)."""
        return [
            self.verdict(p.model, p.item, p.attempt)
            for p in self.planned
            if p.model == wildcards.model and p.track != "solver" and "/tracks/" in p.row
        ]

    def attempts_arg(self, wildcards) -> str:
        return " ".join(shlex.quote(a) for a in self.models[wildcards.model])

    def solver_runs(self) -> list[Planned]:
        return [p for p in self.planned if p.track == "solver" and "/missing/" not in p.row]

    def records_files(self, wildcards=None) -> list[str]:
        return [f"{self.out}/solver/{p.model}/{p.item}/{p.attempt}/records.json" for p in self.solver_runs()]

    def missing_reason(self, wildcards) -> str:
        if wildcards.track == "solver":
            where = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
            return f"no submission: {where}/solver.yaml does not exist"
        return f"no checker verdict: {self.verdict(wildcards.model, wildcards.item, wildcards.attempt)} does not exist"

    def cohort_models(self) -> str:
        return " ".join(shlex.quote(f"{m}={len(a)}") for m, a in self.models.items())

    # ---- Solver jobs ----------------------------------------------------------------------

    def candidate_files(self, candidate: str) -> list[str]:
        """Every file of a candidate folder, by the same rule as the record key's candidate hash
        (`tcsexam.runner.store.candidate_files`): a changed source reruns its job, and `tcsexam run`
        then reruns the instances; a file the hash ignores never reruns a job."""
        from tcsexam.runner.store import candidate_files

        folder = candidate if os.path.isabs(candidate) else os.path.join(self.root, candidate)
        if not os.path.isdir(folder):
            return [f"{candidate}/solver.yaml"]
        files = [os.path.normpath(os.path.join(candidate, rel)) for rel in candidate_files(folder)]
        return files or [f"{candidate}/solver.yaml"]

    def run_inputs(self, wildcards) -> list[str]:
        cand = self.candidate(wildcards.model, wildcards.task, wildcards.attempt)
        return [*self.candidate_files(cand), self.task_file(wildcards.task)]

    def task_files_arg(self, wildcards=None) -> str:
        """`--task-file TASK=FILE ...` for the task files a config overrides (the manifest)."""
        files = self.run.get("task_files", {})
        return " ".join(f"--task-file {shlex.quote(f'{t}={p}')}" for t, p in sorted(files.items()))

    def instances_arg(self, task: str) -> str:
        """`--instances ...` when the config runs a subset of the task's instances."""
        chosen = self.run.get("instances", {}).get(task)
        if not chosen:
            return ""
        return "--instances " + " ".join(shlex.quote(n) for n in chosen)

    def runtime_min(self, task: str, threads: int, n: int | None = None, attempt: int = 1) -> int:
        """Minutes a Solver job may need: every instance may use its whole limit on every try."""
        t = self.task(task)
        n = len(self.instances(task)) if n is None else n
        tries = 1 + int(self.run.get("max_retries", 2))
        seconds = n * t.limits.wall_s * 1.2 / max(1, threads) + 120
        return max(5, math.ceil(seconds * min(tries, attempt + 1) / 60))

    def priority(self, task: str) -> int:
        """Scheduling priority of a Solver job: its worst-case length in seconds (longest first)."""
        t = self.task(task)
        return int(len(self.instances(task)) * t.limits.wall_s)

    def mem_mb(self, task: str, threads: int) -> int:
        return int(self.task(task).limits.mem_mb) * threads + int(self.run.get("mem_mb", 1536))

    # ---- references -----------------------------------------------------------------------

    @cached_property
    def reference_build(self) -> dict[str, Any]:
        return self.config.get("reference_build", {})

    @cached_property
    def reference_suites(self) -> dict[str, Any]:
        from tcsexam.suites import load_suite

        return {
            name: load_suite(self.root / name if name.endswith((".yaml", ".yml")) else name)
            for name in self.reference_build.get("outputs", {})
        }

    @property
    def reference_tasks(self) -> list[str]:
        tasks: list[str] = []
        for suite in self.reference_suites.values():
            tasks += [t for t in suite.tracks["solver"] if t not in tasks]
        return tasks

    @property
    def reference_out(self) -> str:
        return f"{self.results}/reference/{self.reference_build.get('id', 'tcsexam-bundled-k3-v2')}"

    def reference_candidate(self, task: str) -> str:
        return f"{self.reference_build.get('solvers_dir', 'solvers/reference')}/{task}"

    def reference_runs(self, task: str) -> list[str]:
        return [
            f"{self.reference_out}/{task}/seed{s}/records.json" for s in self.reference_build.get("seeds", [1, 2, 3])
        ]

    def reference_outputs(self) -> list[str]:
        return list(self.reference_build.get("outputs", {}).values())

    def check(self) -> None:
        """Fail early, with one line, on a config the rules cannot run."""
        for task, names in self.run.get("instances", {}).items():
            if task not in self.solver_tasks and task not in self.reference_tasks:
                raise InputError(f"config run.instances: {task!r} is not a Solver task of the suite")
            known = {i.name for i in self.task(task).instances}
            unknown = [n for n in names if n not in known]
            if unknown:
                raise InputError(f"config run.instances.{task}: unknown instance(s) {', '.join(unknown)}")
