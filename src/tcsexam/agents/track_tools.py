"""The checker tools of the TCSExam track agents (`agents.tracks`): the judge's own check of the
agent's draft, inside the sample, a bounded number of times.

- `check_proof()` (theorem, open conjecture): `submission/proof.v` of the workspace checked by
  `tcsexam.proofs.check.check_proof` against the task (the statement, its libraries and axioms,
  its limits, coqc in the project's sandbox): the verdict, its reason (Coq's error message, the
  axioms a proof rests on) and each checker step.
- `run_dev()` (solver): the agent's candidate (`submission/`) run by the real harness
  (`runner.solver.orchestrate.run_job`, the sandbox, the task's limits, the certificate checked) on the
  development set (`agents.track_solver`): each instance's status, value, time and message, and
  the value relative to the development reference where there is one;
- `check_construction()` (construction): `submission/` checked by
  `tcsexam.runner.construction.judge_submission`, exactly as `tcsexam construction run` judges it:
  `construction.txt` with the task's exact checker, a `solver.yaml` program run in the project's
  sandbox under the task's limits; the status, value, reward and message.

The draft is copied out of the workspace (never following a link) into a private folder of the
harness, where the checker reads it; nothing of the check is left in the workspace. A call past
the configured number answers that no check is left, and checks nothing. A checker that cannot
run (no coqc, no sandbox) raises: the sample errors as the harness's failure, never the model's.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from tcsexam.agents import workspace as ws
from tcsexam.agents.sandboxenv import current_workspace
from tcsexam.agents.track_solver import reference_file, relative_score
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.proofs.check import PROOF_NAME, check_proof
from tcsexam.proofs.task import ProofTask, load_proof_task
from tcsexam.records import Status
from tcsexam.runner.construction import PROGRAM_NAME, STATIC_NAME, judge_submission, submission_kind
from tcsexam.runner.engine.batch import RunOptions
from tcsexam.runner.solver.orchestrate import TaskJob, run_job
from tcsexam.tasks import load_task

#: the workspace folder the agent hands in (copied to solvers/<model>/<item>/<attempt>/)
SUBMISSION_DIR = "submission"
#: the sample's store keys: its checker calls so far, its task file (set when the sample starts)
STORE_CHECKS = "tcsexam:checks"
STORE_TASK_FILE = "tcsexam:task_file"
#: the most of a checker message the model is shown
SHOWN_CHARS = 6000


@dataclass(frozen=True)
class CheckerSetup:
    """How the checker tool runs: the project's sandbox and limiter (`RunOptions`), what it hides
    from the draft (the run and solvers folders, the tcsexam checkout),
    where its scratch folders go, and the checks a sample may make (None: no limit)."""

    run: RunOptions
    max_checks: int | None = 10
    hidden: tuple[str, ...] = ()
    scratch_root: str | None = None


def _take_check(setup: CheckerSetup) -> int | None:
    """The number of this check (1, 2, ...), or None when the sample has used all of its checks."""
    used = int(store().get(STORE_CHECKS, 0))
    if setup.max_checks is not None and used >= setup.max_checks:
        return None
    store().set(STORE_CHECKS, used + 1)
    return used + 1


def _task_file() -> Path:
    """The running sample's task file (`tracks.item_solver` put it in the store)."""
    task_file = store().get(STORE_TASK_FILE)
    if not task_file:
        raise RuntimeError("the sample's task file is not in its store (the track's solver chain sets it)")
    return Path(task_file)


def _no_checks_left(setup: CheckerSetup) -> str:
    return (
        f"No check left: this task allows {setup.max_checks} checker calls and all were used. "
        f"The judge will check what is in {SUBMISSION_DIR}/ when you submit."
    )


def _cut(text: str) -> str:
    return (
        text
        if len(text) <= SHOWN_CHARS
        else text[:SHOWN_CHARS] + f"\n[... {len(text) - SHOWN_CHARS} characters left out]"
    )


def _copy_submission(dest: Path) -> list[str]:
    """Copy the workspace's submission folder to `dest` (absent), no link followed; the left-out
    paths. ToolError when the agent has no submission folder."""
    source = current_workspace() / SUBMISSION_DIR
    if source.is_symlink() or not source.is_dir():
        raise ToolError(f"{SUBMISSION_DIR}/ is not a folder of the workspace: make it and write your files there")
    return ws.copy_out(source, dest)


def format_proof_verdict(verdict: JsonObject, number: int, setup: CheckerSetup) -> str:
    """The verdict as the model reads it."""
    left = "" if setup.max_checks is None else f" ({setup.max_checks - number} checks left)"
    lines = [f"check {number}{left}: status {verdict['status']}"]
    if verdict.get("resolution"):
        lines.append(f"resolution: {verdict['resolution']}")
    lines.append(f"reason: {_cut(str(verdict.get('reason') or ''))}")
    if verdict.get("axioms"):
        lines.append(f"axioms the proof rests on: {', '.join(map(str, verdict['axioms']))}")
    steps = "; ".join(
        f"{s.get('step')} {s.get('termination')} exit {s.get('exit_code')} {s.get('wall_s')} s"
        for s in verdict.get("steps") or []
    )
    if steps:
        lines.append(f"checker steps: {steps}")
    lines.append(
        "The judge accepts exactly this file: submit now."
        if verdict.get("complete")
        else f"Not accepted: fix {SUBMISSION_DIR}/{PROOF_NAME} and check again."
    )
    return "\n".join(lines)


def _run_proof_check(task: ProofTask, setup: CheckerSetup, number: int) -> JsonObject | str:
    with tempfile.TemporaryDirectory(prefix="tcsexam-check-", dir=setup.scratch_root) as tmp:
        folder = Path(tmp) / "draft" / task.id / str(number)
        skipped = _copy_submission(folder)
        if not (folder / PROOF_NAME).is_file():
            extra = f" ({', '.join(skipped)} left out: links are not followed)" if skipped else ""
            return f"no {SUBMISSION_DIR}/{PROOF_NAME} yet{extra}: write the proof there, then check it"
        return check_proof(task, folder, run=setup.run, model="draft", attempt=str(number), hidden_paths=setup.hidden)


@tool(name="check_proof")
def check_proof_tool(setup: CheckerSetup) -> Tool:
    """The task's proof checker on the agent's draft."""

    async def execute() -> str:
        """Check submission/proof.v exactly as the judge will: Coq compiles it against the task's statement, then the theorem's type, its axioms and libraries are checked and coqchk re-checks it.

        Returns:
          The verdict (complete, incomplete, invalid, timeout, ...), its reason with Coq's messages, and the checker's steps.
        """
        number = _take_check(setup)
        if number is None:
            return _no_checks_left(setup)
        task = load_proof_task(_task_file())
        verdict = await anyio.to_thread.run_sync(_run_proof_check, task, setup, number)
        if isinstance(verdict, str):
            raise ToolError(verdict)
        return format_proof_verdict(verdict, number, setup)

    return execute


def format_construction_record(record: JsonObject, number: int, setup: CheckerSetup) -> str:
    left = "" if setup.max_checks is None else f" ({setup.max_checks - number} checks left)"
    lines = [f"check {number}{left}: status {record.get('status')}"]
    for key, label in (("A", "value"), ("reward", "reward"), ("message", "message")):
        if record.get(key) not in (None, ""):
            lines.append(f"{label}: {_cut(str(record[key]))}")
    for key in ("wall_s", "termination", "exit_code"):
        if record.get(key) is not None:
            lines.append(f"{key}: {record[key]}")
    return "\n".join(lines)


def _run_construction_check(task_file: Path, setup: CheckerSetup, number: int) -> JsonObject | str:
    with tempfile.TemporaryDirectory(prefix="tcsexam-check-", dir=setup.scratch_root) as tmp:
        folder = Path(tmp) / "draft" / "item" / str(number)
        skipped = _copy_submission(folder)
        try:
            kind = submission_kind(folder)
        except InputError:
            return f"{SUBMISSION_DIR}/ holds both {PROGRAM_NAME} and {STATIC_NAME}: keep one"
        if kind is None:
            extra = f" ({', '.join(skipped)} left out: links are not followed)" if skipped else ""
            return (
                f"{SUBMISSION_DIR}/ holds neither {STATIC_NAME} (the object) nor {PROGRAM_NAME} (a program "
                f"writing it){extra}: write one of them, then check it"
            )
        try:
            return judge_submission(
                task=task_file,
                submission=folder,
                output=Path(tmp) / "out" / "records.json",
                attempt=f"check-{number}",
                options=setup.run,
                hidden=setup.hidden,
            )
        except InputError as exc:  # the agent's solver.yaml (the sandbox was checked to work before)
            return f"the harness refused the submission: {_no_paths(str(exc), tmp)}"


@tool(name="check_construction")
def check_construction_tool(setup: CheckerSetup) -> Tool:
    """The task's exact construction checker on the agent's draft."""

    async def execute() -> str:
        """Check submission/ exactly as the judge will: construction.txt with the task's exact checker, or the solver.yaml program run under the task's limits and its object checked.

        Returns:
          The status (ok, invalid, certificate_failed, timeout, ...), the verified value, the reward and the checker's message.
        """
        number = _take_check(setup)
        if number is None:
            return _no_checks_left(setup)
        record = await anyio.to_thread.run_sync(_run_construction_check, _task_file(), setup, number)
        if isinstance(record, str):
            raise ToolError(record)
        return format_construction_record(record, number, setup)

    return execute


def format_dev_records(
    records: list[JsonObject], number: int, setup: CheckerSetup, reference: JsonObject | None, direction: str
) -> str:
    left = "" if setup.max_checks is None else f" ({setup.max_checks - number} runs left)"
    lines = [f"run {number}{left}: {len(records)} development instances"]
    values = (reference or {}).get("values") or {}
    for r in records:
        value = "" if r.get("A") is None else f" value {r['A']}"
        ref = values.get(str(r.get("instance")))
        score = relative_score(direction, r.get("A"), ref) if r.get("status") == Status.OK else None
        if score is not None:
            value += f" (reference {ref:g}, relative score {score:.4f})"
        wall = "" if r.get("wall_s") is None else f" {r['wall_s']:.2f} s"
        message = f": {_cut(str(r['message']))[:500]}" if r.get("message") else ""
        lines.append(f"{r.get('instance')}: {r.get('status')}{value}{wall}{message}")
    return "\n".join(lines)


def _no_paths(text: str, tmp: str) -> str:
    """A harness message without the harness's private folder in it."""
    return text.replace(f"{tmp}/", "").replace(tmp, ".")


def _run_dev(task_file: Path, setup: CheckerSetup, number: int) -> list[JsonObject] | str:
    with tempfile.TemporaryDirectory(prefix="tcsexam-dev-", dir=setup.scratch_root) as tmp:
        folder = Path(tmp) / "candidate" / "item" / str(number)
        skipped = _copy_submission(folder)
        if not (folder / PROGRAM_NAME).is_file():
            extra = f" ({', '.join(skipped)} left out: links are not followed)" if skipped else ""
            return f"no {SUBMISSION_DIR}/{PROGRAM_NAME} yet{extra}: write your candidate there, then run it"
        output = Path(tmp) / "out" / "records.json"
        job = TaskJob(task=task_file, candidate_dir=folder, output=output, attempt=f"dev-{number}", hidden=setup.hidden)
        try:
            run_job(job, setup.run)
        except InputError as exc:  # the agent's solver.yaml (the sandbox was checked to work before)
            return f"the harness refused the candidate: {_no_paths(str(exc), tmp)}"
        records: list[JsonObject] = read_json(output, "development records")
        return records


def _dev_reference(task_file: Path) -> tuple[JsonObject | None, str]:
    """(the development reference kept beside the development task, or None; the task's direction)."""
    path = reference_file(task_file)
    kept = read_json(path, "development reference") if path.is_file() else None
    return kept if isinstance(kept, dict) else None, load_task(task_file).direction


@tool(name="run_dev")
def run_dev_tool(setup: CheckerSetup) -> Tool:
    """The harness on the development set, with the agent's candidate."""

    async def execute() -> str:
        """Run your candidate (submission/solver.yaml) on every development instance exactly as the judge will run it on the evaluation instances: the harness, the sandbox, the task's limits, the certificate checked.

        Returns:
          Per development instance: the status (ok, invalid, timeout, memout, crash, ...), the verified value, the wall time and the checker's message.
        """
        number = _take_check(setup)
        if number is None:
            return _no_checks_left(setup)
        task_file = _task_file()
        records = await anyio.to_thread.run_sync(_run_dev, task_file, setup, number)
        if isinstance(records, str):
            raise ToolError(records)
        return format_dev_records(records, number, setup, *_dev_reference(task_file))

    return execute
