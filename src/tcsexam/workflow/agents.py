"""Input functions of rules/agents.smk: the validated `agents:` config made into generation jobs and
OR-Space runs, so that Snakemake generates, then judges with the existing OR-Space rules, then
reports.

Every model of `agents.models` is run `attempts` times under every condition of
`agents.conditions`. Attempt k of model M is the OR-Space run `M.a<k>` (added to `orspace.runs`
before rules/orspace.smk reads them), and under each condition slug its files are:

```
<orspace output_dir>/M.a<k>/<slug>/staged/                 orspace_stage (leakage-audited, per condition)
<orspace output_dir>/M.a<k>/<slug>/generation/             agents_generate: `tcsexam agents generate`
    generation.json                                        the run's summary (written when every sample is done)
    samples/<workspace_id>/generation.json                 each sample's record (the resume point)
    workspaces/                                            the worked workspaces: what orspace_execute runs
    answers.jsonl                                          the Explain answers: what orspace_explain_score scores
    logs/*.eval                                            the transcripts (inspect view)
<orspace output_dir>/M.a<k>/<slug>/objectives.json, explain.json    the judges (rules/orspace.smk)
<orspace output_dir>/M.a<k>/effects.json, effects.html              the report of the run's conditions
```

The OR-Space conditions carry `generation: <...>/generation/generation.json`, which
orspace_execute and orspace_explain_score wait for, so no judge runs on a generation that is not
complete (a generation with a sample that failed for infrastructure exits 1 and the judges wait
for the rerun, which resumes).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from tcsexam.fileio import JsonObject
from tcsexam.orspace.conditions import Condition
from tcsexam.orspace.release import OBJECTIVE_MODES, Mode
from tcsexam.workflow.orspace import OrspaceRuns

#: what a model's `limits` key becomes on the generate command line
LIMIT_FLAGS = {
    "messages": "--message-limit",
    "tokens": "--token-limit",
    "time_s": "--time-limit",
    "working_s": "--working-limit",
}
#: model keys passed to `tcsexam agents generate` as they are (key -> flag)
MODEL_FLAGS = {
    "base_url": "--base-url",
    "api_key_env": "--api-key-env",
    "max_connections": "--max-connections",
    "max_samples": "--max-samples",
    "max_sandboxes": "--max-sandboxes",
    "max_retries": "--max-retries",
    "timeout_s": "--timeout",
    "attempt_timeout_s": "--attempt-timeout",
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "seed": "--seed",
    "prices": "--prices",
    "max_cost": "--max-cost",
}
#: sandbox keys of `agents.sandbox` -> flag
SANDBOX_FLAGS = {
    "sandbox": "--sandbox",
    "limiter": "--limiter",
    "call_time_limit_s": "--call-time-limit",
    "call_mem_mb": "--call-mem-mb",
    "call_nproc": "--call-nproc",
    "workspace_mb": "--workspace-mb",
    "docker_image": "--docker-image",
}
OPENAI_COMPATIBLE = "openai-compatible"


def model_flags(model: JsonObject, agents: JsonObject, sandbox_flags: dict[str, str]) -> list[str]:
    """The flags an agents command takes from a model's entry and the `agents:` section: the model's
    own keys, its limits over the section's, and the section's sandbox keys (`sandbox_flags`)."""
    args = [f"{flag} {shlex.quote(str(model[key]))}" for key, flag in MODEL_FLAGS.items() if model.get(key) is not None]
    limits = {**(agents.get("limits") or {}), **(model.get("limits") or {})}
    args += [f"{flag} {int(limits[key])}" for key, flag in LIMIT_FLAGS.items() if limits.get(key) is not None]
    sandbox = agents.get("sandbox") or {}
    args += [
        f"{flag} {shlex.quote(str(sandbox[key]))}"
        for key, flag in sandbox_flags.items()
        if sandbox.get(key) is not None
    ]
    return args


class AgentRuns:
    """The validated `agents:` config (schema defaults applied by Snakemake's validate)."""

    def __init__(self, agents: JsonObject | None, orspace_out: str = "results/orspace"):
        self.config: JsonObject = dict(agents or {})
        given = dict(self.config.get("models", {}))
        if given and not self.config.get("release") and self.config.get("tcsexam") is None:
            raise ValueError(
                "agents: give release (the OR-Space workspaces the models work in) or tcsexam (the TCSExam "
                "tracks, tcsexam.workflow.agent_tracks), or both"
            )
        #: the models put to work in the OR-Space workspaces (with `release`; the TCSExam tracks'
        #: jobs are the evaluation plan's, `tcsexam.workflow.agent_tracks`)
        self.models: dict[str, JsonObject] = given if self.config.get("release") else {}
        self.out = orspace_out
        self.modes: list[str] = list(self.config.get("modes", [m.value for m in Mode]))
        self.objective_modes = [m for m in self.modes if m in OBJECTIVE_MODES]
        if self.models and not self.objective_modes:
            raise ValueError("agents.modes: give build or revise too (the OR-Space judges run per Build/Revise run)")
        self.attempts = int(self.config.get("attempts", 1))
        self.conditions: dict[str, JsonObject] = {}
        for entry in self.config.get("conditions") or [{}]:
            slug = Condition.from_dict(entry, "agents.conditions").slug
            if slug in self.conditions:
                raise ValueError(f"agents.conditions: condition {slug} given twice")
            self.conditions[slug] = entry
        for name, model in self.models.items():
            if model.get("provider") == OPENAI_COMPATIBLE and not model.get("base_url"):
                raise ValueError(f"agents.models.{name}: provider {OPENAI_COMPATIBLE} needs base_url")

    # --- the OR-Space runs -------------------------------------------------------------------

    def run_names(self) -> dict[str, tuple[str, int]]:
        """OR-Space run name -> (model name, attempt)."""
        return {f"{m}.a{k}": (m, k) for m in self.models for k in range(1, self.attempts + 1)}

    def generation_dir(self, run: str, slug: str) -> str:
        return f"{self.out}/{run}/{slug}/generation"

    def orspace_runs(self) -> dict[str, JsonObject]:
        """The OR-Space runs judging the generations (one per model and attempt)."""
        judge = dict(self.config.get("judge") or {})
        explain = dict(judge.pop("explain", None) or {})
        runs = {}
        for run in self.run_names():
            conditions = []
            for slug, entry in self.conditions.items():
                gen = self.generation_dir(run, slug)
                cond = {**entry, "workspaces": f"{gen}/workspaces", "generation": f"{gen}/generation.json"}
                if Mode.EXPLAIN.value in self.modes:
                    cond["answers"] = f"{gen}/answers.jsonl"
                conditions.append(cond)
            spec: JsonObject = {
                "release": self.config["release"],
                "modes": list(self.objective_modes),
                "conditions": conditions,
                **judge,
            }
            if self.config.get("stage_from"):
                spec["stage_from"] = self.config["stage_from"]
            if Mode.EXPLAIN.value in self.modes:
                spec["explain"] = explain
            runs[run] = spec
        return runs

    def merged_orspace(self, orspace: JsonObject | None) -> JsonObject | None:
        """`orspace:` with the agents' runs added (None when there are neither)."""
        if not self.models:
            return orspace
        merged = dict(orspace or {})
        runs = dict(merged.get("runs") or {})
        for name, spec in self.orspace_runs().items():
            if name in runs:
                raise ValueError(f"agents: OR-Space run {name} is also in orspace.runs; rename one of them")
            runs[name] = spec
        merged["runs"] = runs
        return merged

    def targets(self, wildcards=None) -> list[str]:
        """Every generation, its judged results and each run's report."""
        out = []
        for run in self.run_names():
            for slug in self.conditions:
                out.append(f"{self.generation_dir(run, slug)}/generation.json")
                out.append(f"{self.out}/{run}/{slug}/objectives.json")
                if Mode.EXPLAIN.value in self.modes:
                    out.append(f"{self.out}/{run}/{slug}/explain.json")
            out.append(f"{self.out}/{run}/effects.html")
        return out

    # --- the generate job --------------------------------------------------------------------

    def model(self, wildcards) -> JsonObject:
        name, _ = self.run_names()[wildcards.run]
        return self.models[name]

    def generate_args(self, wildcards) -> str:
        """The flags of `tcsexam agents generate` for one run (model and attempt) and condition."""
        name, attempt = self.run_names()[wildcards.run]
        model = self.models[name]
        spec = model["model"]
        provider = model.get("provider")
        if (
            provider
            and provider != OPENAI_COMPATIBLE
            and not model.get("base_url")
            and not spec.startswith(f"{provider}/")
        ):
            spec = f"{provider}/{spec}"
        args = [f"--model {shlex.quote(spec)}", f"--model-name {shlex.quote(name)}"]
        args += model_flags(model, self.config, SANDBOX_FLAGS)
        judge = self.config.get("judge") or {}
        if judge.get("time_limit_s") is not None:
            args.append(f"--program-time-limit {float(judge['time_limit_s'])}")
        licences = sorted((judge.get("licences") or {}).items())
        if licences:  # the agent's solver calls get the judge's full licences (read-only)
            args.append("--licence " + " ".join(shlex.quote(f"{solver}={path}") for solver, path in licences))
        args.append(f"--modes {' '.join(self.modes)}")
        return " ".join(args)

    @staticmethod
    def endpoint(model: JsonObject) -> str:
        """The endpoint a model talks to, as a resource name's tail: its base URL's host and port,
        else its Inspect provider (`openai`, `anthropic`, ...)."""
        if model.get("base_url"):
            netloc = urlsplit(model["base_url"]).netloc.rsplit("@", 1)[-1]
            raw = netloc
        else:
            raw = model.get("provider") or model["model"].split("/", 1)[0]
        return re.sub(r"[^a-z0-9]+", "_", raw.lower()).strip("_") or "endpoint"

    def endpoint_resources(self) -> dict[str, Callable[[Any], int]]:
        """One Snakemake resource per endpoint, `agents_conn_<endpoint>`: a generation job holds its
        model's max_connections of its own endpoint's (0 of the others'), so
        `snakemake --resources agents_conn_<endpoint>=N` caps the requests all jobs send there."""
        names = sorted({self.endpoint(m) for m in self.models.values()})

        def holds(name: str):
            return lambda wildcards: (
                int(self.model(wildcards).get("max_connections", 4))
                if self.endpoint(self.model(wildcards)) == name
                else 0
            )

        return {f"agents_conn_{name}": holds(name) for name in names}

    def generate_threads(self, wildcards) -> int:
        return int(self.model(wildcards).get("max_sandboxes", 4))

    def generate_mem_mb(self, wildcards, threads: int) -> int:
        sandbox = self.config.get("sandbox") or {}
        return 2048 + threads * int(sandbox.get("call_mem_mb", 4096))

    def generate_runtime(self, wildcards, attempt) -> int:
        """Minutes: the workspaces in waves of `max_samples`, each up to its time limit, plus slack
        (a retried job gets more)."""
        model = self.model(wildcards)
        limits = {**(self.config.get("limits") or {}), **(model.get("limits") or {})}
        per_sample = float(limits.get("time_s") or 3600)
        spec = {"release": self.config["release"], "stage_from": self.config.get("stage_from")}
        n = max(1, OrspaceRuns.count(OrspaceRuns.stage_source(spec), self.modes))
        waves = -(-n // int(model.get("max_samples", 4)))
        return int(15 + attempt * waves * per_sample / 60)
