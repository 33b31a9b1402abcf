"""The reference-build part of the workflow's plan (`tcsexam.workflow.plan.Plan` inherits it;
docs/workflow.md): the `reference_build` config's suites and tasks, the tasks carried over from an
earlier reference instead of rebuilt, each task's reference solver and its K seeded runs."""

from __future__ import annotations

from functools import cached_property

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.layout import reference_dir
from tcsexam.suites import load_suite
from tcsexam.workflow.plan_base import PlanBase


class ReferenceBuildPlan(PlanBase):
    @cached_property
    def reference_build(self) -> JsonObject:
        section: JsonObject = self.config["reference_build"]  # (an object: the config schema's)
        return section

    @cached_property
    def reference_suites(self) -> JsonObject:
        return {
            name: load_suite(self.root / name if name.endswith((".yaml", ".yml")) else name)
            for name in self.reference_build["outputs"]
        }

    @property
    def reference_suite_tasks(self) -> list[str]:
        """Every Solver task of the reference outputs' suites."""
        tasks: list[str] = []
        for suite in self.reference_suites.values():
            tasks += [t for t in suite.tracks["solver"] if t not in tasks]
        return tasks

    @property
    def reference_carried(self) -> list[str]:
        """Tasks whose frozen values are carried over from `reference_build.carry.reference`
        (written under the new id by `tcsexam reference merge --carry-to`) instead of rebuilt."""
        return [t for t in self.reference_build["carry"].get("tasks", []) if t in self.reference_suite_tasks]

    @property
    def reference_tasks(self) -> list[str]:
        """Tasks the reference target runs (K seeded runs each): those not carried over."""
        carried = set(self.reference_carried)
        return [t for t in self.reference_suite_tasks if t not in carried]

    @property
    def reference_carry_source(self) -> str:
        source: str = self.reference_build["carry"].get("reference", "")
        return source

    def reference_task_file(self, task: str) -> str:
        """The one-task reference the merge reads: built from runs, or carried over."""
        name = "carried" if task in self.reference_carried else "reference"
        return f"{self.reference_out}/{task}/{name}-{task}.json"

    @property
    def reference_out(self) -> str:
        return str(reference_dir(self.results, self.reference_build["id"]))

    def reference_candidate(self, task: str) -> str:
        """The task's reference solver: `<solvers_dir>/<task>` where that folder exists, else the
        folder of its problem, `<solvers_dir>/<problem>`, which serves every task of the problem
        (a task's own command, if any, under `tasks:` in its solver.yaml)."""
        solvers = self.reference_build["solvers_dir"]
        if (self.root / solvers / task).is_dir():
            return f"{solvers}/{task}"
        return f"{solvers}/{self.task(task).problem}"

    def reference_runs(self, task: str) -> list[str]:
        return [f"{self.reference_out}/{task}/seed{s}/records.json" for s in self.reference_build["seeds"]]

    def reference_outputs(self) -> list[str]:
        return list(self.reference_build["outputs"].values())

    def check_reference_build(self) -> None:
        """The carry-over names tasks of the reference outputs' suites and an existing reference."""
        carry = self.reference_build["carry"]
        if carry.get("tasks"):
            unknown = [t for t in carry["tasks"] if t not in self.reference_suite_tasks]
            if unknown:
                raise InputError(
                    f"config reference_build.carry.tasks: {unknown[0]!r} is in no reference output's suite"
                )
            if not carry.get("reference"):
                raise InputError("config reference_build.carry: tasks need a reference file to carry from")
            if not (self.root / carry["reference"]).is_file():
                raise InputError(f"config reference_build.carry.reference: {carry['reference']} does not exist")
