"""Input functions of rules/orspace.smk: the validated `orspace:` config, its targets and runtimes."""

from __future__ import annotations

import os
from typing import Any


class OrspaceRuns:
    """The validated `orspace:` config: run settings, targets, runtime estimates, explain args."""

    def __init__(self, orspace: dict[str, Any] | None):
        self.runs: dict[str, dict[str, Any]] = dict((orspace or {}).get("runs", {}))
        self.out: str = (orspace or {}).get("output_dir", "results/orspace")

    def run(self, wildcards) -> dict[str, Any]:
        return self.runs[wildcards.run]

    def targets(self, wildcards=None) -> list[str]:
        out = []
        for name, run in self.runs.items():
            out.append(f"{self.out}/{name}/objectives.json")
            if "explain" in run:
                out.append(f"{self.out}/{name}/explain.json")
        return out

    @staticmethod
    def count(run: dict[str, Any]) -> int:
        root = run["workspaces"]
        if not os.path.isdir(root):
            return 0
        total = 0
        for mode in run["modes"]:
            for base in (os.path.join(root, "Workspace_OR"), root):
                folder = os.path.join(base, f"{mode}_workspaces")
                if os.path.isdir(folder):
                    total += len(os.listdir(folder))
            total += sum(1 for d in os.listdir(root) if d.startswith("or_space_") and d.endswith(f"_{mode}"))
        return total

    def execute_runtime(self, wildcards, attempt) -> int:
        """Minutes: every program may use its whole limit, plus start-up slack."""
        run = self.runs[wildcards.run]
        n = max(1, self.count(run))
        return int(10 + attempt * n * run["time_limit_s"] / run["workers"] / 60)

    def explain_args(self, wildcards) -> str:
        run = self.run(wildcards)
        ex = run["explain"]
        rubrics = ex.get("rubrics") or os.path.join(run["release"], "evaluation", "explain_evaluation", "rubrics.jsonl")
        args = [
            f"--rubrics '{rubrics}'",
            f"--answers '{ex['answers']}'",
            f"--workspaces '{ex.get('workspaces') or run['workspaces']}'",
            f"--penalty-setting {ex['penalty_setting']}",
        ]
        args.append(f"--judge-cache '{ex['judge_cache']}'" if ex["judge"] else "--no-judge")
        return " ".join(args)
