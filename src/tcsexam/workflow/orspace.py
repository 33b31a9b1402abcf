"""Input functions of rules/orspace.smk: the validated `orspace:` config, its conditions, targets,
runtimes and explain arguments.

Every run is evaluated under one or more stage conditions (`orspace.conditions`; a run without
`conditions` has the one default condition). Per run and condition (its slug) everything lives in
`<output_dir>/<run>/<slug>/`: `staged/` (the staged release, leakage-audited), `predictions.jsonl`,
`objectives.json`, `explain.json`; `<output_dir>/<run>/effects.json` and `effects.html` compare the
conditions of the run.
"""

from __future__ import annotations

import os
import shlex

from tcsexam.fileio import JsonObject
from tcsexam.orspace.conditions import Condition

#: the judges' cache when `explain.judge_cache` is not set (Explain and attribution judges)
JUDGE_CACHE = "results/orspace/.judge-cache"


class OrspaceRuns:
    """The validated `orspace:` config: run settings, conditions, targets, runtimes, explain args."""

    def __init__(self, orspace: JsonObject | None):
        self.runs: dict[str, JsonObject] = dict((orspace or {}).get("runs", {}))
        self.out: str = (orspace or {}).get("output_dir", "results/orspace")
        self.bootstrap: JsonObject = dict((orspace or {}).get("bootstrap", {}))
        self.conditions: dict[str, dict[str, JsonObject]] = {}
        for name, run in self.runs.items():
            entries = run.get("conditions") or [{}]
            by_slug: dict[str, JsonObject] = {}
            for entry in entries:
                slug = Condition.from_dict(entry, f"orspace.runs.{name}.conditions").slug
                if slug in by_slug:
                    raise ValueError(f"orspace.runs.{name}.conditions: condition {slug} given twice")
                by_slug[slug] = entry
            self.conditions[name] = by_slug
            if run.get("attribution_judge") and not run.get("attribute", True):
                raise ValueError(f"orspace.runs.{name}: attribution_judge needs attribute")
            explain = run.get("explain") or {}
            if explain.get("second_judge_model") and not explain.get("judge"):
                raise ValueError(f"orspace.runs.{name}.explain: second_judge_model needs judge: true")

    def run(self, wildcards) -> JsonObject:
        return self.runs[wildcards.run]

    def condition(self, wildcards) -> Condition:
        return Condition.from_dict(self.conditions[wildcards.run][wildcards.cond])

    def has_explain(self, name: str, slug: str) -> bool:
        return bool(self.conditions[name][slug].get("answers") or (self.runs[name].get("explain") or {}).get("answers"))

    def targets(self, wildcards=None) -> list[str]:
        out = []
        for name in self.runs:
            for slug in self.conditions[name]:
                out.append(f"{self.out}/{name}/{slug}/objectives.json")
                if self.has_explain(name, slug):
                    out.append(f"{self.out}/{name}/{slug}/explain.json")
            out.append(f"{self.out}/{name}/effects.html")
        if self.runs:
            out.append(f"{self.out}/leaderboard.html")
        return out

    def audit(self, name: str) -> str | None:
        """The reference audit of a run (`references` set), else None."""
        refs = self.runs[name].get("references") or {}
        return f"{self.out}/{name}/reference-audit.json" if refs.get("models") else None

    def audit_args(self, wildcards) -> str:
        run = self.run(wildcards)
        refs = run.get("references") or {}
        args = [
            f"--release {shlex.quote(run['release'])}",
            f"--models {shlex.quote(refs['models'])}",
            f"--workspaces {shlex.quote(self.stage_source(run))}",
            f"--time-limit {float(refs.get('time_limit_s', 300))}",
        ]
        if refs.get("disputes"):
            args.append(f"--disputes {shlex.quote(refs['disputes'])}")
        return " ".join(args)

    def score_inputs(self, wildcards) -> dict[str, str]:
        """What score-objectives waits for beside the predictions: the run's reference audit."""
        audit = self.audit(wildcards.run)
        return {"audit": audit} if audit else {}

    def score_args(self, wildcards) -> str:
        """score-objectives' options beyond the release and predictions: the disputes file and the
        audit (the three pass-rate views), and attribution of the failures."""
        run = self.run(wildcards)
        refs = run.get("references") or {}
        args = []
        if refs.get("disputes"):
            args.append(f"--disputes {shlex.quote(refs['disputes'])}")
        audit = self.audit(wildcards.run)
        if audit:
            args.append(f"--audit {shlex.quote(audit)}")
        if run.get("attribute", True):
            args.append("--attribute")
        if run.get("attribution_judge"):
            ex = run.get("explain") or {}
            args += ["--attribution-judge", f"--judge-cache {shlex.quote(ex.get('judge_cache', JUDGE_CACHE))}"]
            if ex.get("judge_prices"):
                args.append(f"--judge-prices {shlex.quote(ex['judge_prices'])}")
        return " ".join(args)

    def leaderboard_inputs(self, wildcards=None) -> list[str]:
        """Every run's objectives (and Explain scores) the leaderboard compares."""
        return [t for t in self.targets() if t.endswith(("objectives.json", "explain.json"))]

    def leaderboard_args(self, wildcards=None) -> str:
        args = [f"--results {shlex.quote(self.out)}"]
        for key in ("seed", "resamples"):
            if key in self.bootstrap:
                args.append(f"--{key} {int(self.bootstrap[key])}")
        return " ".join(args)

    def workspaces(self, wildcards) -> str:
        """What runs under a condition: the condition's `workspaces` (the agent's work), else the
        run's, else the staged folder itself (no agent: every Build/Revise is missing_output)."""
        entry = self.conditions[wildcards.run][wildcards.cond]
        run = self.runs[wildcards.run]
        return entry.get("workspaces") or run.get("workspaces") or f"{self.out}/{wildcards.run}/{wildcards.cond}/staged"

    @staticmethod
    def stage_source(run: JsonObject) -> str:
        """What is staged: `stage_from`, else the release when it holds workspaces, else the run's
        workspaces."""
        source: str  # (paths: the config schema's strings)
        if run.get("stage_from"):
            source = run["stage_from"]
        elif os.path.isdir(os.path.join(run["release"], "Workspace_OR")) or not run.get("workspaces"):
            source = run["release"]
        else:
            source = run["workspaces"]
        return source

    def stage_args(self, wildcards) -> str:
        run, cond = self.run(wildcards), self.condition(wildcards)
        args = [
            f"--release {shlex.quote(self.stage_source(run))}",
            f"--oracle {shlex.quote(run['release'])}",
            f"--view {cond.view} --interface {cond.interface} --context {cond.context}",
        ]
        return " ".join(args)

    def effects_inputs(self, wildcards) -> dict[str, list[str]]:
        name = wildcards.run
        base = f"{self.out}/{name}"
        return {
            "objectives": [f"{base}/{slug}/objectives.json" for slug in self.conditions[name]],
            "explain": [
                f"{base}/{slug}/explain.json" for slug in self.conditions[name] if self.has_explain(name, slug)
            ],
        }

    def effects_args(self, wildcards) -> str:
        name = wildcards.run
        base = f"{self.out}/{name}"
        args = ["--objectives"] + [shlex.quote(f"{s}={base}/{s}/objectives.json") for s in self.conditions[name]]
        explained = [s for s in self.conditions[name] if self.has_explain(name, s)]
        if explained:
            args += ["--explain"] + [shlex.quote(f"{s}={base}/{s}/explain.json") for s in explained]
        for key in ("seed", "resamples"):
            if key in self.bootstrap:
                args.append(f"--{key} {int(self.bootstrap[key])}")
        return " ".join(args)

    def execute_args(self, wildcards) -> str:
        """The execute options beyond the limits: full licences (read-only mounts)."""
        run = self.run(wildcards)
        licences = [shlex.quote(f"{solver}={path}") for solver, path in sorted((run.get("licences") or {}).items())]
        return f"--licence {' '.join(licences)}" if licences else ""

    @staticmethod
    def count(root: str, modes: list[str]) -> int:
        if not os.path.isdir(root):
            return 0
        total = 0
        for mode in modes:
            for base in (os.path.join(root, "Workspace_OR"), root):
                folder = os.path.join(base, f"{mode}_workspaces")
                if os.path.isdir(folder):
                    total += len(os.listdir(folder))
            total += sum(1 for d in os.listdir(root) if d.startswith("or_space_") and d.endswith(f"_{mode}"))
        return total

    def execute_runtime(self, wildcards, attempt) -> int:
        """Minutes: every program may use its whole limit, plus start-up slack."""
        run = self.runs[wildcards.run]
        root = self.workspaces(wildcards)
        n = max(1, self.count(root, run["modes"]) or self.count(self.stage_source(run), run["modes"]))
        return int(10 + attempt * n * run["time_limit_s"] / run["workers"] / 60)

    def explain_args(self, wildcards) -> str:
        run = self.run(wildcards)
        entry = self.conditions[wildcards.run][wildcards.cond]
        ex = dict(run.get("explain") or {"penalty_setting": "paper", "judge": False})
        ex.setdefault("penalty_setting", "paper")
        ex.setdefault("judge", False)
        ex.setdefault("judge_cache", JUDGE_CACHE)
        answers = self.answers(wildcards)  # planned only where a condition has answers (`has_explain`)
        rubrics = ex.get("rubrics") or os.path.join(run["release"], "evaluation", "explain_evaluation", "rubrics.jsonl")
        workspaces = entry.get("workspaces") or ex.get("workspaces") or self.workspaces(wildcards)
        args = [
            f"--rubrics {shlex.quote(rubrics)}",
            f"--answers {shlex.quote(answers)}",
            f"--workspaces {shlex.quote(workspaces)}",
            f"--penalty-setting {ex['penalty_setting']}",
            f"--condition {wildcards.cond}",
        ]
        if ex["judge"]:
            args.append(f"--judge-cache {shlex.quote(ex['judge_cache'])}")
            if ex.get("judge_prices"):
                args.append(f"--judge-prices {shlex.quote(ex['judge_prices'])}")
            if ex.get("max_judge_cost") is not None:
                args.append(f"--max-judge-cost {float(ex['max_judge_cost'])}")
            if ex.get("second_judge_model"):
                args.append(f"--second-judge-model {shlex.quote(ex['second_judge_model'])}")
                if ex.get("second_judge_base_url"):
                    args.append(f"--second-judge-base-url {shlex.quote(ex['second_judge_base_url'])}")
        else:
            args.append("--no-judge")
        return " ".join(args)

    def answers(self, wildcards) -> str:
        entry = self.conditions[wildcards.run][wildcards.cond]
        answers: str = entry.get("answers") or self.runs[wildcards.run]["explain"]["answers"]
        return answers

    def generation(self, wildcards) -> list[str]:
        """The agent run a condition's workspaces and answers come from (`generation`, set by
        rules/agents.smk): the judges wait for it; none for workspaces given as they are."""
        entry = self.conditions[wildcards.run][wildcards.cond]
        return [entry["generation"]] if entry.get("generation") else []

    def explain_answers_input(self, wildcards) -> list[str]:
        """What explain-score waits for: the answers file, or the generation that writes it."""
        return self.generation(wildcards) or [self.answers(wildcards)]
