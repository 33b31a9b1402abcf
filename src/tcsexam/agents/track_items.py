"""What a track agent is given (`agents.tracks`): the items of a track, each one's prompt and the
files of its workspace, staged with a manifest the `tcsexam` sandbox environment copies in.

- theorem / open_conjecture: `task/<statement>.v` (the task's statement file) and the prompt
  (theorem name, statement, libraries, axioms, limits, the statement file itself); the agent
  writes `submission/proof.v` and may call `check_proof`;
- construction: `task/instance.yaml` (the task file: the parameters a program reads as
  `{instance}`) and the prompt (kind, certificate format, parameters, direction, baseline and
  reference of the reward, limits); the agent writes `submission/construction.txt` or a program
  (`submission/solver.yaml` and its files) and may call `check_construction`;
- solver: `dev/` (a development set from the problem's generator, `agents.track_solver`) and the
  prompt (problem, formats, the candidate contract, limits); the agent writes a candidate
  (`submission/solver.yaml` and its files) and may call `run_dev` (the harness on `dev/`).

Nothing else enters a workspace: no reference, no other item's file, no solution.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from tcsexam.agents.track_solver import DEV_DIR, dev_task, solver_material
from tcsexam.agents.track_tools import SUBMISSION_DIR
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, atomic_write_json, atomic_write_text, read_yaml
from tcsexam.paths import config_file
from tcsexam.problems import CONSTRUCTIONS
from tcsexam.proofs.check import PROOF_NAME
from tcsexam.proofs.task import ProofTask, load_proof_task
from tcsexam.records.digest import hash_file
from tcsexam.runner.construction import PROGRAM_NAME, STATIC_NAME, load_construction_task
from tcsexam.suites import BINARY_TRACKS, Track, load_suite
from tcsexam.tasks import Direction

#: the tracks an agent can work on
AGENT_TRACKS = tuple(t.value for t in Track)
TASK_DIR = "task"  #: the workspace folder of the task's files (read them; the judge uses its own copy)
INSTANCE_NAME = "instance.yaml"  #: a construction's parameter file in the workspace
#: a model label, an item and an attempt id name folders: solvers/<model>/<item>/<attempt>/
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")


# ---- the items ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrackItem:
    """One item of a track: its task file, the files its workspace holds and the prompt."""

    item: str
    track: str
    task_file: Path
    files: dict[str, Path | bytes]  #: workspace path -> the file it is a copy of, or its bytes
    prompt: str
    #: Solver items: the development task (a task mapping without instance_dir) the feedback tool runs
    dev_task: JsonObject | None = None


_TOOLS = (
    "Tools: bash (a shell command line) and python (a program) run in the workspace folder, in a "
    "sandbox without network, each call under a limit of {call:g} s; text_editor views, creates and "
    "edits files; {check} (at most {checks} calls in this task); submit ends the task. The judge checks {what} as you leave it when you submit (or when "
    "the task's limits stop you)."
)


_CHECKS = {
    "check_proof": "check_proof runs the judge's exact check on your draft",
    "check_construction": "check_construction runs the judge's exact check on your draft",
    "run_dev": (
        f"run_dev runs your candidate ({SUBMISSION_DIR}/) on every development instance exactly as the judge "
        "will run it on the evaluation instances (the harness, the sandbox, the limits) and returns each "
        "instance's status, value, time and message, and the value relative to the project's reference solver "
        "on the same instance where there is one (above 1: better than the reference)"
    ),
}


def _proof_prompt(t: ProofTask, statement_rel: str, checks: str, call_s: float) -> str:
    libraries = ", ".join(t.libraries) or "none"
    axioms = ", ".join(t.axioms) or "none"
    if t.track == Track.OPEN_CONJECTURE:
        goal = (
            f"This is an open conjecture: prove it or refute it. A proof is `Theorem {t.theorem} : {t.statement}.`; "
            f"a refutation is `Theorem {t.refutation} : {t.negation}.` (the file defines {t.negation}). "
            "Either one, complete, resolves it."
        )
    else:
        goal = f"Prove `Theorem {t.theorem} : {t.statement}.` (any type convertible to {t.statement} is accepted)."
    limits = t.limits
    return "\n\n".join(
        [
            f"You are proving {'an open conjecture' if t.track == Track.OPEN_CONJECTURE else 'a theorem'} in Coq {t.coq_version}: task {t.id}"
            + (f" ({t.description})." if t.description else "."),
            f"The workspace holds {statement_rel}, the task's statement file, which the judge compiles as the "
            f"library TCSExam.Task. {goal}",
            f"Write {SUBMISSION_DIR}/{PROOF_NAME}. It starts with `From TCSExam Require Import Task.` (which does not "
            "re-import what the statement file imports: Require the libraries you use), and is compiled as "
            "TCSExamSubmission.Proof. Libraries a proof may load: "
            f"{libraries}. Axioms it may rest on: {axioms}; Admitted, Axiom and Parameter make it incomplete. "
            "Commands that load or extract files, change the kernel's checks or declare ML modules are refused. "
            f"Each checker step runs under a limit of {limits.wall_s:g} s and {limits.mem_mb} MB.",
            _TOOLS.format(
                call=call_s, check=_CHECKS["check_proof"], checks=checks, what=f"{SUBMISSION_DIR}/{PROOF_NAME}"
            ),
            f"The statement file {statement_rel}:\n```coq\n{t.statement_file.read_text(encoding='utf-8')}\n```",
        ]
    )


def _construction_prompt(task_file: Path, checks: str, call_s: float) -> str:
    t = load_construction_task(task_file)
    data = read_yaml(t.source, "task file")
    problem = t.problem_impl
    (inst,) = t.instances
    params = ", ".join(f"{k} = {v}" for k, v in (data.get("parameters") or {}).items())
    fmt = (sys.modules[type(problem).__module__].__doc__ or "").strip()
    baseline, reference = inst.meta.get("baseline"), inst.meta.get("reference")
    if problem.direction == Direction.MAXIMIZE:
        rule = f"max(0, (v - {baseline}) / ({reference} - {baseline}))"
    else:
        rule = f"max(0, ({baseline} - v) / ({baseline} - {reference}))"
    limits = t.limits
    return "\n\n".join(
        [
            f"You are building a construction: task {t.id} ({data.get('description') or t.problem}).",
            f"Kind {t.problem} ({problem.direction} the value), parameters: {params}. {fmt}",
            f"Score: for the verified value v, the reward {rule}: the baseline {baseline} scores 0, the reference "
            f"{reference} scores 1, beyond it more. An object the checker rejects scores 0. The certificate is lines "
            "of whitespace-separated numbers; blank lines and lines starting with # are ignored.",
            f"Hand in, in {SUBMISSION_DIR}/, exactly one of: {STATIC_NAME} (the object itself), or {PROGRAM_NAME} "
            'with a program that writes the object to the file {solution}, e.g. `command: ["python3", "build.py", '
            '"{solution}"]` with build.py beside it in ' + SUBMISSION_DIR + "/. The program may read the parameters "
            f"from {{instance}} (this task's parameter file: {TASK_DIR}/{INSTANCE_NAME} here) and runs without "
            f"network under a limit of {limits.wall_s:g} s and {limits.mem_mb} MB.",
            _TOOLS.format(call=call_s, check=_CHECKS["check_construction"], checks=checks, what=f"{SUBMISSION_DIR}/"),
        ]
    )


def load_items(
    track: str,
    *,
    suite: str | None,
    items: list[str] | None,
    call_s: float,
    checks: str,
    dev_instances: int = 3,
    task_files: dict[str, str] | None = None,
) -> list[TrackItem]:
    """The items of `track` to run: those named (`items`, each checked to be of the track and, with a
    suite, in it), else the suite's items of the track. `task_files`: item -> its task file where
    it is not config/tasks/<item>.yaml (a workflow's `run.task_files`)."""
    if track not in AGENT_TRACKS:
        raise InputError(f"track {track!r}: agents write submissions for {', '.join(AGENT_TRACKS)}")
    names: list[str]
    if suite is not None:
        s = load_suite(suite)
        names = list(items) if items else list(s.tracks[track])
        for name in names:
            if s.track_of.get(name) != track:
                raise InputError(f"{s.source}: {name} is not a {track} item of suite {s.id}")
    elif items:
        names = list(items)
    else:
        raise InputError("name the items (--items) or a suite (--suite)")
    if len(set(names)) != len(names):
        raise InputError(f"an item is named twice: {', '.join(names)}")
    out = []
    for name in names:
        task_file = Path((task_files or {}).get(name) or config_file(name, "tasks")).resolve()
        if track in BINARY_TRACKS:
            t = load_proof_task(task_file)
            if t.track != track:
                raise InputError(f"{task_file}: task {t.id} is a {t.track} task, not {track}")
            rel = f"{TASK_DIR}/{t.statement_file.name}"
            out.append(
                TrackItem(t.id, track, task_file, {rel: t.statement_file}, _proof_prompt(t, rel, checks, call_s))
            )
        elif track == Track.SOLVER:
            what = f"{SUBMISSION_DIR}/{PROGRAM_NAME} and its files"
            tools = _TOOLS.format(call=call_s, check=_CHECKS["run_dev"], checks=checks, what=what)
            solver_task, files, prompt = solver_material(task_file, count=dev_instances, tools=tools)
            handed = (
                f"Hand in your candidate: {SUBMISSION_DIR}/{PROGRAM_NAME} and the files it needs, in {SUBMISSION_DIR}/."
            )
            out.append(
                TrackItem(
                    solver_task.id,
                    track,
                    task_file,
                    dict(files),
                    f"{prompt}\n\n{handed}",
                    dev_task(solver_task, {Path(rel).stem: Path(rel).name for rel in files}),
                )
            )
        else:
            t = load_construction_task(task_file)
            if t.problem not in CONSTRUCTIONS:
                raise InputError(f"{task_file}: task {t.id} is not a construction task")
            (inst,) = t.instances
            out.append(
                TrackItem(
                    t.id,
                    track,
                    task_file,
                    {f"{TASK_DIR}/{INSTANCE_NAME}": Path(inst.path)},
                    _construction_prompt(task_file, checks, call_s),
                )
            )
        if not SAFE_NAME.fullmatch(out[-1].item):
            raise InputError(f"{task_file}: item id {out[-1].item!r} cannot name a folder")
    return out


def checker_task(staged: Path, it: TrackItem) -> Path:
    """The task file the item's checker tool runs: a Solver item's development task (written by
    `stage_items`), else the item's own task file."""
    return staged / "_dev" / f"{it.item}.yaml" if it.dev_task is not None else it.task_file


def stage_items(items: list[TrackItem], staged: Path) -> None:
    """The items' workspace files under `staged/<item>/` and their manifest (what the `tcsexam`
    sandbox copies in, each file checked against its digest): only the task's statement or
    parameter file, never a reference or another item's file."""
    shutil.rmtree(staged, ignore_errors=True)
    entries = {}
    for it in items:
        files = []
        for rel, source in sorted(it.files.items()):
            target = staged / it.item / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(source, bytes):
                target.write_bytes(source)
            else:
                shutil.copyfile(source, target)
            files.append({"path": rel, "sha256": hash_file(target)})
        entries[it.item] = {"track": it.track, "task_file": str(it.task_file), "files": files}
        if it.dev_task is not None:  # beside the items' folders: never in a workspace
            dev = {**it.dev_task, "instance_dir": str((staged / it.item / DEV_DIR).resolve())}
            atomic_write_text(checker_task(staged, it), yaml.safe_dump(dev, sort_keys=False))
    manifest = {
        "kind": "tcsexam-track-items",
        "workspaces": entries,
        # what an item's workspace holds is decided here (load_items): the task's own statement
        # or parameter file, which the model is meant to read; no other file can enter
        "leakage_audit": {"passed": True, "by": "tcsexam agents solve (task files only)"},
    }
    atomic_write_json(staged / "manifest.json", manifest)
