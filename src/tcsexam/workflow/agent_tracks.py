"""The agents part of the evaluation plan (`tcsexam.workflow.plan.Plan` inherits it): models that
write their own submissions of the TCSExam tracks in the same `snakemake` run that judges them.

`agents: {tcsexam: {tracks: [...]}, models: {M: {model, base_url, ...}}}` (workflow/schemas/
agents.schema.yaml, docs/agents.md): every model of the config's `models` that `agents.models`
names is generated for, one `tcsexam agents solve` job (rule `agents_solve`, a Snakemake
checkpoint in rules/agents.smk) per model, track and planned attempt:

```
<runs_dir>/<model>/<track>/<attempt>/generation.json   the run's summary (the checkpoint's output)
<runs_dir>/<model>/<track>/<attempt>/...               run.json, staged/, logs/*.eval, samples/, online/
<solvers_dir>/<model>/<item>/<attempt>/                the submissions the evaluation's rules judge
<online_dir>/<model>/<item>/<attempt>/records.json     the Solver sessions' online judgments
```

`runs_dir` defaults to `<results_dir>/agents/<suite>`: one generation for both protocols. Offline,
the evaluation's rules judge the submission folders unchanged; online (`protocol: online`), the
Solver rows come from the online judgments (`online_records_dir` defaults to the agents' one).

What the plan holds (which rows, which judge jobs) depends on what the agents left, so it is
known only once the generations are done: the input functions that read the planned attempts
(`after_agents`) first ask Snakemake for the generations (`agents_waiter`, set by rules/agents.smk
to `checkpoints.agents_solve.get(...)`, which raises while one is not done: Snakemake then runs
it and asks again), and plan afresh once a generation's summary has changed.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.scoring.vocabulary import Protocol
from tcsexam.suites import TRACKS, Track
from tcsexam.workflow.agents import OPENAI_COMPATIBLE, AgentRuns, model_flags
from tcsexam.workflow.configfix import config_problem, with_defaults
from tcsexam.workflow.plan_base import PlanBase

#: `agents.sandbox` keys that `agents solve` takes (key -> flag); docker_image is OR-Space's
SOLVE_SANDBOX_FLAGS = {
    "sandbox": "--sandbox",
    "limiter": "--limiter",
    "call_time_limit_s": "--call-time-limit",
    "call_mem_mb": "--call-mem-mb",
    "call_nproc": "--call-nproc",
    "workspace_mb": "--workspace-mb",
}
AGENTS_SCHEMA = Path("workflow") / "schemas" / "agents.schema.yaml"


def after_agents(method: Callable) -> Callable:
    """An input function of the plan that reads the planned attempts: called by Snakemake (with
    wildcards) it waits for the agents' generations first (`AgentTracksPlan.await_agents`)."""

    @functools.wraps(method)
    def wrapper(self, wildcards=None, *args, **kwargs):
        if wildcards is not None:
            self.await_agents()
        return method(self, wildcards, *args, **kwargs)

    return wrapper


class AgentTracksPlan(PlanBase):
    """Mixed into `Plan`; uses its root, config, models, suite, results and solvers folders."""

    #: set by rules/agents.smk: asks Snakemake for every generation (raises while one is not done)
    agents_waiter: Callable[[], object] | None = None
    #: the generations' summaries' mtimes when `planned` was last made (`await_agents`)
    _agents_seen: tuple[float | None, ...] | None = None

    @cached_property
    def agents_config(self) -> JsonObject:
        """The `agents:` config, checked against its schema, with its defaults ({} without one)."""
        raw = self.config.get("agents")
        if raw is None:
            return {}
        schema_path = self.root / AGENTS_SCHEMA
        with open(schema_path, encoding="utf-8") as fh:
            schema = yaml.safe_load(fh)
        problem = config_problem(raw, schema)
        if problem:  # "config <where>: ..." of the agents mapping, named from the config's top
            raise InputError(
                "config agents." + problem[len("config ") :]
                if problem.startswith("config ")
                else f"config agents{problem[6:]}"
            )
        return with_defaults(raw, schema)

    @cached_property
    def agent_tracks_config(self) -> JsonObject | None:
        return self.agents_config.get("tcsexam")

    @cached_property
    def agent_models(self) -> dict[str, JsonObject]:
        """The cohort's models the agents generate for (those `agents.models` names), with their
        model and endpoint."""
        if self.agent_tracks_config is None:
            return {}
        given = self.agents_config.get("models") or {}
        return {m: given[m] for m in self.models if m in given}

    @cached_property
    def agent_tracks(self) -> list[str]:
        if self.agent_tracks_config is None:
            return []
        chosen = self.agent_tracks_config["tracks"]
        return [t for t in TRACKS if t in chosen and self.suite.tracks[t]]

    def generated_by_agents(self, model: str, track: str) -> bool:
        return model in self.agent_models and track in self.agent_tracks

    def agent_jobs(self) -> list[dict[str, str]]:
        """Every generation: {model, track, attempt} (the checkpoint's wildcards)."""
        return [
            {"model": m, "track": t, "attempt": a}
            for m in self.agent_models
            for t in self.agent_tracks
            for a in self.models[m]
        ]

    @property
    def agent_runs_dir(self) -> str:
        cfg = self.agent_tracks_config or {}
        return cfg.get("runs_dir") or f"{self.results}/agents/{self.suite.id}"

    def agent_run_dir(self, model: str, track: str, attempt: str) -> str:
        return f"{self.agent_runs_dir}/{model}/{track}/{attempt}"

    def agent_summaries(self, wildcards=None) -> list[str]:
        """Every generation's summary (the checkpoint's outputs)."""
        return [f"{self.agent_run_dir(**job)}/generation.json" for job in self.agent_jobs()]

    @property
    def agent_online_dir(self) -> str:
        """Where the Solver sessions' online judgments go."""
        cfg = self.agent_tracks_config or {}
        given: str | None = cfg.get("online_records_dir")
        if not given and self.config.get("protocol") == Protocol.ONLINE:
            given = self.config.get("online_records_dir")
        return given or f"{self.agent_runs_dir}/online"

    def check_agents(self) -> None:
        """The agents config, at DAG time: one line on a bad key, a model named nowhere."""
        cfg = self.agent_tracks_config
        if cfg is None:
            return
        given = self.agents_config.get("models") or {}
        if not self.agent_models:
            raise InputError(
                f"config agents.tcsexam: none of the config's models ({', '.join(self.models)}) is in agents.models "
                f"({', '.join(given) or 'none'}): name a model of `models` there with its endpoint"
            )
        for name, model in self.agent_models.items():
            if model.get("provider") == OPENAI_COMPATIBLE and not model.get("base_url"):
                raise InputError(f"config agents.models.{name}: provider {OPENAI_COMPATIBLE} needs base_url")
        online = self.config.get("online_records_dir")
        if (
            self.config.get("protocol") == Protocol.ONLINE
            and online
            and cfg.get("online_records_dir")
            and os.path.normpath(online) != os.path.normpath(cfg["online_records_dir"])
        ):
            raise InputError(
                f"config agents.tcsexam.online_records_dir: {cfg['online_records_dir']} is not the online_records_dir "
                f"the online protocol reads ({online}): give one of them"
            )

    # ---- waiting for the generations (input functions) ------------------------------------------

    def await_agents(self) -> None:
        """Ask Snakemake for every generation (raises while one is not done), then plan afresh
        where a generation has finished since the plan was made."""
        if not self.agent_models:
            return
        if self.agents_waiter is not None:
            self.agents_waiter()
        seen = tuple(_mtime(self.root / f) for f in self.agent_summaries())
        if seen != self._agents_seen:
            self.__dict__.pop("planned", None)
            self._agents_seen = seen

    # ---- the agents_solve job -------------------------------------------------------------------

    def agents_solve_args(self, wildcards) -> str:
        """The flags of `tcsexam agents solve` of one model, track and attempt (but --output)."""
        model = wildcards.model
        spec = self.agent_models[model]
        cfg = self.agent_tracks_config or {}  # a model of agent_models: there is one
        track = wildcards.track
        name = spec["model"]
        provider = spec.get("provider")
        if (
            provider
            and provider != OPENAI_COMPATIBLE
            and not spec.get("base_url")
            and not name.startswith(f"{provider}/")
        ):
            name = f"{provider}/{name}"
        args = [
            f"--track {track}",
            f"--suite {shlex.quote(self.config['suite'])}",
            f"--solvers-dir {shlex.quote(self.solvers_dir)}",
            f"--attempt {shlex.quote(wildcards.attempt)}",
            f"--model {shlex.quote(name)}",
            f"--model-name {shlex.quote(model)}",
            f"--max-checks {int(cfg['max_checks'])}",
        ]
        items = self.suite.tracks[track]
        overrides = [f"{i}={self.run['task_files'][i]}" for i in items if self.run["task_files"].get(i)]
        if overrides:
            args.append("--task-file " + " ".join(shlex.quote(o) for o in overrides))
        if track == Track.SOLVER:
            args.append(f"--dev-instances {int(cfg['dev_instances'])}")
            args.append(f"--online-records-dir {shlex.quote(self.agent_online_dir)}")
            args.append(f"--judge-seed {int(self.run['seed'])}")
            chosen = [f"{i}={','.join(self.run['instances'][i])}" for i in items if self.run["instances"].get(i)]
            if chosen:  # the online judge runs what the offline one runs
                args.append("--judge-instances " + " ".join(shlex.quote(c) for c in chosen))
        args += model_flags(spec, self.agents_config, SOLVE_SANDBOX_FLAGS)
        if self.run.get("allow_unsandboxed"):
            args.append("--allow-unsandboxed")
        return " ".join(args)

    def agents_threads(self, wildcards) -> int:
        return int(self.agent_models[wildcards.model].get("max_sandboxes", 4))

    def agents_runtime(self, wildcards, attempt) -> int:
        """Minutes: the track's items in waves of `max_samples`, each up to its time limit, plus
        the online judging and slack (a retried job gets more)."""
        spec = self.agent_models[wildcards.model]
        limits = {**(self.agents_config.get("limits") or {}), **(spec.get("limits") or {})}
        per_item = float(limits.get("time_s") or 3600)
        n = max(1, len(self.suite.tracks[wildcards.track]))
        waves = -(-n // int(spec.get("max_samples", 4)))
        return int(30 + attempt * waves * per_item / 60)

    def agents_endpoint_resources(self) -> dict[str, Callable[[Any], int]]:
        """`agents_conn_<endpoint>` per endpoint, as the OR-Space generations hold them
        (`AgentRuns.endpoint_resources`): a job holds its model's max_connections of its own."""
        names = sorted({AgentRuns.endpoint(m) for m in self.agent_models.values()})

        def holds(name: str):
            def amount(wildcards) -> int:
                spec = self.agent_models[wildcards.model]
                return int(spec.get("max_connections", 4)) if AgentRuns.endpoint(spec) == name else 0

            return amount

        return {f"agents_conn_{name}": holds(name) for name in names}


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None
