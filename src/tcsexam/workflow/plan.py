"""The workflow's plan: which jobs and attempt rows a validated config asks for.

Used by rules/common.smk (the input functions), so the rules files hold only rules. Pure reading
of the config, the suite, the task files and the folders: nothing here runs anything.

The results tree (one per suite and protocol) is `tcsexam.layout.ResultsLayout`.
"""

from __future__ import annotations

import difflib
import math
import os
import shlex
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_yaml
from tcsexam.layout import ResultsLayout
from tcsexam.limits import TASK_DEFAULTS
from tcsexam.proofs.task import ProofTask, is_proof_task_data, load_proof_task
from tcsexam.records.digest import candidate_files
from tcsexam.scoring.reference import load_reference, resolve_reference_path
from tcsexam.scoring.vocabulary import Protocol
from tcsexam.suites import BINARY_TRACKS as PROOF_TRACKS
from tcsexam.suites import TRACKS, VERDICT_TRACKS, Suite, Track, load_suite
from tcsexam.tasks import Task, load_task
from tcsexam.workflow.agent_tracks import AgentTracksPlan, after_agents
from tcsexam.workflow.campaign import CampaignPlan
from tcsexam.workflow.configfix import load_config_schema, with_defaults
from tcsexam.workflow.plan_base import Planned
from tcsexam.workflow.reference_build import ReferenceBuildPlan
from tcsexam.workflow.twins import TwinsPlan


class Plan(TwinsPlan, CampaignPlan, ReferenceBuildPlan, AgentTracksPlan):
    def __init__(self, config: JsonObject, root: str | os.PathLike = "."):
        self.root = Path(root)
        # every default comes from the schema (Snakemake's validate has filled them in already;
        # a config built in Python gets them here)
        self.config = config = with_defaults(config, load_config_schema(self.root))
        self.run = config["run"]
        self.results = config["results_dir"]
        self.solvers_dir = config["solvers_dir"]
        self.verdicts_dir = config["verdicts_dir"]
        self.protocol = Protocol(config["protocol"])
        self.online_dir: str | None = config.get("online_records_dir") or None
        self.adoption_file: str | None = config.get("adoption") or None
        self.reference = config.get("reference") or self.suite.id  # optional: the suite's bundled one
        self._tasks: dict[str, Task] = {}
        self._proof_tasks: dict[str, ProofTask] = {}
        self.models: dict[str, list[str]] = {}
        for spec in config["models"]:
            if spec["name"] in self.models:
                raise InputError(f"config models: {spec['name']!r} is listed twice")
            self.models[spec["name"]] = [str(a) for a in spec["attempts"]]
        if self.online and not self.online_dir and any(self.generated_by_agents(m, "solver") for m in self.models):
            self.online_dir = self.agent_online_dir  # the agents' own online judgments

    # ---- suite and tasks ------------------------------------------------------------------

    @cached_property
    def suite(self) -> Suite:
        spec = self.config["suite"]
        path = self.root / spec if spec.endswith((".yaml", ".yml")) else spec
        return load_suite(path)

    @cached_property
    def layout(self) -> ResultsLayout:
        """<results>/<suite>/<protocol>: the tree of this evaluation (tcsexam.layout)."""
        return ResultsLayout.of(self.results, self.suite.id, self.protocol)

    @property
    def out(self) -> str:
        return str(self.layout.root)

    @property
    def solver_tasks(self) -> list[str]:
        return list(self.suite.tracks["solver"])

    def task_file(self, task: str) -> str:
        return self.run["task_files"].get(task) or f"config/tasks/{task}.yaml"

    def task(self, task: str) -> Task:
        """The task definition (loaded once per task)."""
        if task not in self._tasks:
            self._tasks[task] = load_task(self.root / self.task_file(task))
        return self._tasks[task]

    def instances(self, task: str) -> list[str]:
        chosen = self.run["instances"].get(task)
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
        for model in self.models:
            for track in TRACKS:
                for item in self.suite.tracks[track]:
                    for attempt in self.item_attempts(model, item):
                        rows.append(Planned(model, track, item, attempt, self._row_path(model, track, item, attempt)))
        return rows

    def _row_path(self, model: str, track: str, item: str, attempt: str) -> str:
        if track == Track.SOLVER:
            if self.has_solver_input(model, item, attempt):
                return str(self.layout.solver_row(model, item, attempt))
        elif track == Track.CONSTRUCTION and self.has_construction(model, item, attempt):
            return str(self.layout.construction_row(model, item, attempt))
        elif track in PROOF_TRACKS and self.has_proof(model, item, attempt):
            return str(self.layout.proof_row(model, item, attempt))
        elif (self.root / self.verdict(model, item, attempt)).is_file():
            return str(self.layout.track_row(model, item, attempt))
        return str(self.layout.missing_row(track, model, item, attempt))

    @after_agents
    def row_files(self, wildcards=None) -> list[str]:
        """Solver rows (one file per attempt) + one rows file per model for the other tracks."""
        files = [p.row for p in self.planned if p.track == Track.SOLVER]
        files += [p.row for p in self.construction_runs()]
        files += [p.row for p in self.proof_runs()]
        files += [str(self.layout.track_rows(model)) for model in self.models]
        return self.score_rows(files)

    @after_agents
    def generation_files(self, wildcards=None) -> list[str]:
        """The agents' records beside the planned attempts' submissions
        (<solvers_dir>/<model>/<item>/<attempt>/generation.json, those present): the inputs of
        generation.csv, so a new or changed record rebuilds it."""
        files = (f"{self.candidate(p.model, p.item, p.attempt)}/generation.json" for p in self.planned)
        return [f for f in files if (self.root / f).is_file()]

    @after_agents
    def verdict_files(self, wildcards) -> list[str]:
        """The verdict files present for a model (inputs of its rows job, so a new one reruns it)."""
        return [
            self.verdict(p.model, p.item, p.attempt)
            for p in self.planned
            if p.model == wildcards.model and p.track != Track.SOLVER and "/tracks/" in p.row
        ]

    def _verdict_proof_items(self, model: str) -> list[str]:
        """The model's theorem / open-conjecture items scored from verdict files that have a proof
        task file (their verdicts' statement_sha256 is checked against its statement)."""
        items = sorted(
            {p.item for p in self.planned if p.model == model and p.track in PROOF_TRACKS and "/tracks/" in p.row}
        )
        out = []
        for item in items:
            path = self.root / self.task_file(item)
            if path.is_file() and is_proof_task_data(read_yaml(path, "task file")):
                out.append(item)
        return out

    @after_agents
    def verdict_statement_inputs(self, wildcards) -> list[str]:
        """The task and statement files of those items (inputs of the rows job: a changed
        statement reruns it)."""
        out = []
        for item in self._verdict_proof_items(wildcards.model):
            statement = os.path.relpath(self.proof_task(item).statement_file, self.root.resolve())
            out += [self.task_file(item), statement]
        return out

    @after_agents
    def verdict_task_files_arg(self, wildcards) -> str:
        """`--task-file ITEM=FILE ...` for those items whose task file the config overrides."""
        files = self.run["task_files"]
        given = [f"{i}={files[i]}" for i in self._verdict_proof_items(wildcards.model) if i in files]
        return ("--task-file " + " ".join(shlex.quote(g) for g in given)) if given else ""

    def attempts_arg(self, wildcards) -> str:
        """`ID ...` (the model's planned attempts), plus `--item-attempt ITEM=ID ...` for the
        attempts an adoption file adds to single items."""
        model = wildcards.model
        out = " ".join(shlex.quote(a) for a in self.models[model])
        extra = [
            f"{item}={a}"
            for track in VERDICT_TRACKS
            for item in self.suite.tracks[track]
            for a in self.item_attempts(model, item)
            if a not in self.models[model]
        ]
        if extra:
            out += " --item-attempt " + " ".join(shlex.quote(e) for e in extra)
        return out

    def solver_runs(self) -> list[Planned]:
        return [p for p in self.planned if p.track == Track.SOLVER and "/missing/" not in p.row]

    @after_agents
    def relative_files(self, wildcards=None) -> list[str]:
        """The solver-score outputs (relative.json) of every Solver run: what `tcsexam score
        --solver-scores` and the plots read."""
        return [str(self.layout.relative_json(p.model, p.item, p.attempt)) for p in self.solver_runs()]

    @after_agents
    def records_files(self, wildcards=None) -> list[str]:
        return [str(self.layout.records_json(p.model, p.item, p.attempt)) for p in self.solver_runs()]

    def missing_reason(self, wildcards) -> str:
        if wildcards.track == Track.SOLVER and self.online:
            where = self.online_input(wildcards.model, wildcards.item, wildcards.attempt)
            return f"no judged online records: {where} does not exist"
        if wildcards.track == Track.SOLVER:
            where = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
            return f"no submission: {where}/solver.yaml does not exist"
        if wildcards.track == Track.CONSTRUCTION:
            where = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
            verdict = self.verdict(wildcards.model, wildcards.item, wildcards.attempt)
            return f"no construction: neither {where}/solver.yaml nor {where}/construction.txt nor {verdict} exists"
        if wildcards.track in PROOF_TRACKS:
            where = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
            verdict = self.verdict(wildcards.model, wildcards.item, wildcards.attempt)
            return f"no proof: neither {where}/proof.v nor a checker verdict {verdict} exists"
        return f"no checker verdict: {self.verdict(wildcards.model, wildcards.item, wildcards.attempt)} does not exist"

    def cohort_models(self) -> str:
        return " ".join(shlex.quote(f"{m}={len(a)}") for m, a in self.models.items())

    # ---- construction jobs (tcsexam construction run / row; rules/construction.smk) ----------

    def has_construction(self, model: str, item: str, attempt: str) -> bool:
        """A construction the pipeline judges: <solvers_dir>/<model>/<item>/<attempt>/ holds
        solver.yaml (a program writing the object) or construction.txt (the object)."""
        folder = self.root / self.candidate(model, item, attempt)
        return (folder / "solver.yaml").is_file() or (folder / "construction.txt").is_file()

    def construction_runs(self) -> list[Planned]:
        """The construction attempts judged by the pipeline (the others come from verdict files)."""
        rows = self.layout.construction_row
        return [
            p for p in self.planned if p.track == Track.CONSTRUCTION and p.row == str(rows(p.model, p.item, p.attempt))
        ]

    def construction_run_inputs(self, wildcards) -> list[str]:
        cand = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
        return [*self.candidate_files(cand), self.task_file(wildcards.item)]

    @after_agents
    def judged_constructions_arg(self, wildcards) -> str:
        """`--judged ITEM/ATTEMPT ...`: the model's constructions and proofs the verdict-rows job
        leaves out (their rows come from their own construction or proof job)."""
        runs = [*self.construction_runs(), *self.proof_runs()]
        judged = [f"{p.item}/{p.attempt}" for p in runs if p.model == wildcards.model]
        return ("--judged " + " ".join(shlex.quote(j) for j in judged)) if judged else ""

    def construction_runtime_min(self, item: str, attempt: int = 1) -> int:
        seconds = self.task(item).limits.wall_s * 1.2 + 120
        return max(5, math.ceil(seconds * min(1 + int(self.run["max_retries"]), attempt + 1) / 60))

    # ---- proof jobs (tcsexam proof check; rules/proof.smk) ---------------------------------

    def has_proof(self, model: str, item: str, attempt: str) -> bool:
        """A proof the pipeline checks: <solvers_dir>/<model>/<item>/<attempt>/proof.v."""
        return (self.root / self.candidate(model, item, attempt) / "proof.v").is_file()

    def proof_runs(self) -> list[Planned]:
        """The theorem / open-conjecture attempts checked by the pipeline (the others come from
        verdict files, e.g. an external checker's)."""
        rows = self.layout.proof_row
        return [p for p in self.planned if p.track in PROOF_TRACKS and p.row == str(rows(p.model, p.item, p.attempt))]

    def proof_task(self, item: str) -> ProofTask:
        if item not in self._proof_tasks:
            self._proof_tasks[item] = load_proof_task(self.root / self.task_file(item))
        return self._proof_tasks[item]

    def proof_check_inputs(self, wildcards) -> list[str]:
        cand = self.candidate(wildcards.model, wildcards.item, wildcards.attempt)
        task = self.proof_task(wildcards.item)
        statement = os.path.relpath(task.statement_file, self.root.resolve())
        return [f"{cand}/proof.v", self.task_file(wildcards.item), statement]

    def proof_runtime_min(self, item: str) -> int:
        """Minutes a proof check may need: its steps (task, compile, check per side, locate,
        coqchk), each on the task's wall clock."""
        return max(5, math.ceil((self.proof_task(item).limits.wall_s * 6 * 1.2 + 120) / 60))

    def proof_mem_mb(self, item: str) -> int:
        mem_mb = self.proof_task(item).limits.mem_mb or TASK_DEFAULTS["mem_mb"]  # a task's limits have one
        return int(mem_mb) + int(self.run["mem_mb"])

    # ---- Solver jobs ----------------------------------------------------------------------

    def candidate_files(self, candidate: str) -> list[str]:
        """Every file of a candidate folder, by the same rule as the record key's candidate hash
        (`tcsexam.records.digest.candidate_files`): a changed source reruns its job, and `tcsexam run`
        then reruns the instances; a file the hash ignores never reruns a job."""
        folder = candidate if os.path.isabs(candidate) else os.path.join(self.root, candidate)
        if not os.path.isdir(folder):
            return [f"{candidate}/solver.yaml"]
        files = [os.path.normpath(os.path.join(candidate, rel)) for rel in candidate_files(folder)]
        return files or [f"{candidate}/solver.yaml"]

    def run_inputs(self, wildcards) -> list[str]:
        cand = self.candidate(wildcards.model, wildcards.task, wildcards.attempt)
        return [*self.candidate_files(cand), self.task_file(wildcards.task), *self.generated_inputs(wildcards.task)]

    # ---- generated instances --------------------------------------------------------------

    def generated_stamp(self, task: str) -> str | None:
        """`<instance_dir>/.generated-<task>.json`, written by `tcsexam generate --task --stamp` once
        every generated instance of the task is written and matches its sha256; None when the
        task has no generated instance."""
        gen = self.task(task).generated
        if not gen:
            return None
        folder = gen[0].path.parent
        rel = folder if os.path.isabs(self.task_file(task)) else Path(os.path.relpath(folder, self.root.resolve()))
        return f"{rel}/.generated-{task}.json"

    def generated_inputs(self, task: str) -> list[str]:
        stamp = self.generated_stamp(task)
        return [stamp] if stamp else []

    @property
    def generated_tasks(self) -> list[str]:
        """Tasks of the suite or the reference target whose instances `tcsexam generate` writes."""
        tasks = list(dict.fromkeys([*self.solver_tasks, *self.reference_tasks]))
        return [t for t in tasks if self.generated_stamp(t)]

    # ---- comparison with another run ----------------------------------------------------------

    @property
    def baseline(self) -> str | None:
        """The run directory to compare this run with (config `baseline`), or None."""
        return self.config.get("baseline") or None

    @property
    def compare_files(self) -> list[str]:
        return [str(self.layout.compare_dir / name) for name in ("compare.json", "compare.html", "deltas.png")]

    def compare_target(self, wildcards=None) -> list[str]:
        """The `compare` target's files; without a baseline a one-line error saying what to pass."""
        if not self.baseline:
            raise InputError(
                "snakemake compare needs the run to compare with: --config baseline=<results/<suite>/<protocol> of that run>"
            )
        return self.compare_files

    def task_files_arg(self, wildcards=None) -> str:
        """`--task-file TASK=FILE ...` for the task files a config overrides (the manifest)."""
        files = self.run["task_files"]
        return " ".join(f"--task-file {shlex.quote(f'{t}={p}')}" for t, p in sorted(files.items()))

    def instances_arg(self, task: str) -> str:
        """`--instances ...` when the config runs a subset of the task's instances."""
        chosen = self.run["instances"].get(task)
        if not chosen:
            return ""
        return "--instances " + " ".join(shlex.quote(n) for n in chosen)

    def runtime_min(self, task: str, threads: int, n: int | None = None, attempt: int = 1) -> int:
        """Minutes a Solver job may need: every instance may use its whole limit on every try."""
        t = self.task(task)
        n = len(self.instances(task)) if n is None else n
        tries = 1 + int(self.run["max_retries"])
        seconds = n * t.limits.wall_s * 1.2 / max(1, threads) + 120
        return max(5, math.ceil(seconds * min(tries, attempt + 1) / 60))

    def priority(self, task: str) -> int:
        """Scheduling priority of a Solver job: its worst-case length in seconds (longest first)."""
        t = self.task(task)
        return int(len(self.instances(task)) * t.limits.wall_s)

    def mem_mb(self, task: str, threads: int) -> int:
        mem_mb = self.task(task).limits.mem_mb or TASK_DEFAULTS["mem_mb"]  # a task's limits have one
        return int(mem_mb) * threads + int(self.run["mem_mb"])

    def check(self, *, reference_target: bool = False) -> None:
        """Fail early, with one line, on a config the rules cannot run: at DAG construction, so
        `snakemake -n` shows it. The reference must exist, be valid and cover the suite's Solver
        tasks (unless the run builds it: `reference_target`); solvers_dir and verdicts_dir must
        exist; every model needs a candidate folder for each Solver task and a verdict folder for
        each other-track item (`allow_missing: true` plans `missing` rows instead). A missing
        planned attempt inside an existing task folder is a `missing` row, not an error."""
        self.check_reference_build()
        self.check_agents()
        for task, names in self.run["instances"].items():
            if task not in self.solver_tasks and task not in self.reference_suite_tasks:
                raise InputError(f"config run.instances: {task!r} is not a Solver task of the suite")
            known = {i.name for i in self.task(task).instances}
            unknown = [n for n in names if n not in known]
            if unknown:
                raise InputError(f"config run.instances.{task}: unknown instance(s) {', '.join(unknown)}")
        for task in self.solver_tasks:
            self.task(task)  # a broken task file (e.g. a limit that is not a number): one line now
        for judged in self.construction_runs():
            self.task(judged.item)  # the same for the construction tasks the run judges
        for judged in self.proof_runs():
            self.proof_task(judged.item)  # and for the proof tasks it checks
        if not reference_target:
            self._check_instance_files(self.solver_tasks)
        self._check_reference(reference_target)
        self.check_twins()
        if not reference_target:  # the reference target runs the reference solvers, not the models
            self.check_campaign()
            self._check_submissions()

    # ---- fail-fast checks of the config -----------------------------------------------------

    def _check_instance_files(self, tasks: list[str]) -> None:
        """Every instance file the run's tasks name exists (the instances `run.instances` selects;
        generated ones are made by the workflow's `generate` rules): a task file pointing at a
        missing file stops here, not as a failed job. Existence only: each job checks the
        recorded sha256 before it runs anything."""
        for task in tasks:
            task_obj = self.task(task)
            chosen = set(self.instances(task))
            for inst in task_obj.instances:
                if inst.name in chosen and inst.generate is None and not inst.path.is_file():
                    raise InputError(
                        f"{task_obj.source}: instance {inst.name!r}: file {inst.path} is missing "
                        f"(task {task}; the task file's instance_dir or the instance's `file`)"
                    )

    def _check_reference(self, reference_target: bool) -> None:
        if reference_target:  # building the references: the evaluation's reference is not read (it
            return  # may be the very file being rebuilt, e.g. Full's before its new tasks are in it)
        path = resolve_reference_path(self.reference)
        if not path.is_absolute() and not path.exists() and (self.root / path).exists():
            path = self.root / path
        if not path.exists():
            building = str(self.reference) in self.reference_outputs() or str(path) in self.reference_outputs()
            raise InputError(
                f"config reference: reference file {path} not found{_suggest(path.name, _siblings(path))}"
                + (" (build it with `snakemake reference`)" if building else "")
            )
        ref = load_reference(path)  # InputError names the file and what is wrong
        missing = [t for t in self.solver_tasks if t not in ref.tasks]
        if missing:
            raise InputError(
                f"config reference: {path} (id {ref.reference_id!r}) does not cover Solver task(s) "
                f"{', '.join(missing)} of suite {self.suite.id!r}"
            )

    def _dir(self, key: str, value: str) -> Path:
        path = self.root / value
        if not path.is_dir():
            raise InputError(
                f"config {key}: folder {value} not found (expected {path}){_suggest(path.name, _siblings(path))}"
            )
        return path

    def _check_submissions(self) -> None:
        other_items = [(t, i) for t in VERDICT_TRACKS for i in self.suite.tracks[t]]
        solver_key, solver_dir = (  # online: check_campaign has made sure of online_records_dir
            ("online_records_dir", self.online_dir or "") if self.online else ("solvers_dir", self.solvers_dir)
        )
        # the agents' models write their own submissions of their tracks in this run
        judged = [m for m in self.models if not self.generated_by_agents(m, "solver")]
        solvers = self._dir(solver_key, solver_dir) if self.solver_tasks and judged else None
        verdicts = self._dir("verdicts_dir", self.verdicts_dir) if other_items else None
        allow_missing = bool(self.config["allow_missing"])
        known = sorted({p.name for d in (solvers, verdicts) if d is not None for p in d.iterdir() if p.is_dir()})
        for model, attempts in self.models.items():
            if model in self.agent_models:
                self._check_agent_model_rest(model, attempts, other_items, allow_missing)
                continue
            in_solvers = solvers is not None and (solvers / model).is_dir()
            in_verdicts = verdicts is not None and (verdicts / model).is_dir()
            if not in_solvers and not in_verdicts:
                first = (
                    self.solver_input_path(model, self.solver_tasks[0], attempts[0])
                    if self.solver_tasks
                    else self.verdict(model, other_items[0][1], attempts[0])
                )
                raise InputError(
                    f"config models: model {model!r} has no submissions: expected e.g. {first}{_suggest(model, known)}"
                )
            if allow_missing:
                continue
            for task in self.solver_tasks:
                folder = self.root / solver_dir / model / task
                if not any(self.has_solver_input(model, task, a) for a in attempts):
                    expected = self.solver_input_path(model, task, attempts[0])
                    hint = _missing_hint(
                        folder, attempts[0], task, lambda d: [p.name for p in d.iterdir() if p.is_dir()]
                    )
                    raise InputError(
                        f"config models: model {model!r} task {task!r}: no {'judged records' if self.online else 'candidate'} for attempt(s) "
                        f"{', '.join(attempts)}: expected {expected}{hint} "
                        "(set allow_missing: true to plan missing rows instead)"
                    )
            for track, item in other_items:
                folder = self.root / self.verdicts_dir / model / item
                if track == Track.CONSTRUCTION and any(self.has_construction(model, item, a) for a in attempts):
                    continue
                if track in PROOF_TRACKS and any(self.has_proof(model, item, a) for a in attempts):
                    continue
                if not any((self.root / self.verdict(model, item, a)).is_file() for a in attempts):
                    expected = self.verdict(model, item, attempts[0])
                    hint = _missing_hint(folder, attempts[0], item, lambda d: [p.stem for p in d.glob("*.json")])
                    if track == Track.CONSTRUCTION:
                        where = self.candidate(model, item, attempts[0])
                        expected = f"{where}/solver.yaml, {where}/construction.txt or {expected}"
                    elif track in PROOF_TRACKS:
                        expected = f"{self.candidate(model, item, attempts[0])}/proof.v or {expected}"
                    raise InputError(
                        f"config models: model {model!r} {track} item {item!r}: no checker verdict for attempt(s) "
                        f"{', '.join(attempts)}: expected {expected}{hint} "
                        "(set allow_missing: true to plan missing rows instead)"
                    )

    def _check_agent_model_rest(
        self, model: str, attempts: list[str], other_items: list[tuple[str, str]], allow_missing: bool
    ) -> None:
        """An agents' model: the items of the tracks the agents do not write need their verdicts
        (or allow_missing), as any model's."""
        if allow_missing:
            return
        for track, item in other_items:
            if self.generated_by_agents(model, track):
                continue
            if not any((self.root / self.verdict(model, item, a)).is_file() for a in attempts):
                raise InputError(
                    f"config models: model {model!r} {track} item {item!r}: no checker verdict for attempt(s) "
                    f"{', '.join(attempts)}: expected {self.verdict(model, item, attempts[0])} (agents.tcsexam.tracks "
                    "does not list this track; set allow_missing: true to plan missing rows instead)"
                )
        if "solver" not in self.agent_tracks and self.solver_tasks:
            for task in self.solver_tasks:
                if not any(self.has_solver_input(model, task, a) for a in attempts):
                    raise InputError(
                        f"config models: model {model!r} task {task!r}: no candidate for attempt(s) {', '.join(attempts)}: "
                        f"expected {self.solver_input_path(model, task, attempts[0])} (agents.tcsexam.tracks does not "
                        "list solver; set allow_missing: true to plan missing rows instead)"
                    )


def _missing_hint(folder: Path, attempt: str, name: str, attempts_in: Callable[[Path], list[str]]) -> str:
    """A did-you-mean for a missing submission `folder`/`attempt`: another attempt in the folder
    (`attempts_in` lists them), or, when the folder itself is missing, another folder beside it."""
    if folder.is_dir():
        return _suggest(attempt, sorted(attempts_in(folder)), what="attempt")
    siblings = sorted(p.name for p in folder.parent.glob("*") if p.is_dir())
    return _suggest(name, siblings, what="folder")


def _siblings(path: Path) -> list[str]:
    try:
        return sorted(p.name for p in path.parent.iterdir())
    except OSError:
        return []


def _suggest(name: str, candidates: list[str], what: str = "") -> str:
    """'; did you mean 'x'?' for the nearest existing name (difflib), or ''."""
    close = difflib.get_close_matches(name, [c for c in candidates if c != name], n=1, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {what + ' ' if what else ''}{close[0]!r}?"
