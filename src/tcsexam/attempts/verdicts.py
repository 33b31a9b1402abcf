"""Checker verdicts of the theorem, construction and open-conjecture tracks.

One small JSON object per attempt, written by the track's checker (documented in docs/workflow.md):

```json
{"model": "demo-strong", "track": "theorem", "item": "theorem-sum-odds-square", "attempt": "1",
 "original_reward": 0.75, "complete": false,
 "checker": "lean4 4.9 + mathlib (kernel check)", "status": "judged",
 "message": "proof of the key lemma accepted, main statement missing"}
```

| key | rule |
|---|---|
| model, track, item, attempt | required; the attempt's identity (`attempt` a string or integer) |
| original_reward | the checker's own reward, kept as is; required (finite, >= 0) for construction; for theorem / open_conjecture a number or null |
| complete | theorem / open_conjecture: required Boolean, true only when the checker accepted a complete proof (or a complete proof / refutation of the conjecture) |
| status | `judged` (default), `judge_failed` or `not_finished`: a checker that crashed or did not finish; or a proof checker's own status (`tcsexam proof check`): `complete`, `incomplete`, `invalid`, `timeout`, `memout`, `crash` (judged; `complete: true` only with `complete`), `infrastructure_error` (judge_failed) |
| checker_version, statement_sha256, axioms | the evidence of a theorem / open-conjecture verdict (docs/proofs.md): the checker's version, the digest of the statement file it checked, the axioms the proof rests on; a verdict without all of them (and `checker`) is scored but its row's note says `EVIDENCE_NOTE`, which index.json lists under `issues` (`unverified_proof`) |
| statement_sha256 vs the task | when the item has a proof task file (`config/tasks/<item>.yaml`, or the one passed) the verdict's `statement_sha256` must be the sha256 of that task's statement file: otherwise the proof is of another statement, the row scores 0 and its note says `STATEMENT_MISMATCH_NOTE` with the verdict file and both digests (index.json: `statement_mismatch`) |
| checker, message | optional strings (provenance): `checker` names the checker that ran (and its version); a verdict no checker produced says so (the bundled demo fixtures: "none: bundled demo fixture, written by hand ...") |
| adoption_status | optional: `selected` (default), `selected_provisional`, `excluded` |

Conversion to the attempt-table score: theorem and open_conjecture -> 1.0 when `complete` is true,
else 0.0 (partial credit in `original_reward` becomes 0); construction -> `original_reward`
unchanged (may exceed 1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tcsexam.attempts.rows import AttemptRow, failed_row
from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, is_finite_number, read_json, read_yaml
from tcsexam.paths import config_file
from tcsexam.proofs import ProofStatus
from tcsexam.proofs.task import is_proof_task_data, load_proof_task
from tcsexam.schemas import check
from tcsexam.scoring.vocabulary import EVIDENCE_NOTE, STATEMENT_MISMATCH_NOTE
from tcsexam.suites import VERDICT_TRACKS, Track


class VerdictStatus(StrEnum):
    """A verdict file's status: judged (its score counts), or why there is no score."""

    JUDGED = "judged"
    JUDGE_FAILED = "judge_failed"
    NOT_FINISHED = "not_finished"


VERDICT_STATUSES = tuple(s.value for s in VerdictStatus)
#: a proof checker's own verdict statuses (tcsexam.proofs.check) and the row status each gives: the
#: checker's failure is no verdict on the proof
PROOF_STATUSES = {
    s.value: VerdictStatus.JUDGE_FAILED.value if s is ProofStatus.INFRASTRUCTURE_ERROR else VerdictStatus.JUDGED.value
    for s in ProofStatus
}
#: the evidence fields a theorem / open-conjecture verdict must carry to be taken as checked
EVIDENCE_FIELDS = ("checker", "checker_version", "statement_sha256", "axioms")


def missing_evidence(data: JsonObject) -> list[str]:
    """The evidence fields a proof verdict lacks (a checker named "none: ..." is no checker)."""
    missing = [k for k in EVIDENCE_FIELDS if data.get(k) in (None, "")]
    if "checker" not in missing and str(data["checker"]).strip().lower().startswith("none"):
        missing.insert(0, "checker")
    return missing


@dataclass(frozen=True)
class TaskStatement:
    """The statement a proof item's verdict must be about: its task file and the statement's sha256."""

    task_file: str
    sha256: str


def task_statement(item: str, task_file: str | os.PathLike | None = None) -> TaskStatement | None:
    """The statement of `item`'s proof task: `task_file` when given (it must exist), else
    `config/tasks/<item>.yaml` when that is a proof task file (track theorem / open_conjecture).
    None when the item has no such file (an item of an external checker only, a construction): then
    a verdict's statement_sha256 cannot be checked. A broken proof task file is an InputError."""
    if task_file is not None:
        path = Path(task_file)
        if not path.is_file():
            raise InputError(f"{path}: task file of item {item!r} not found")
    else:
        path = config_file(item, "tasks")
        if not path.is_file():
            return None

        if not is_proof_task_data(read_yaml(path, "task file")):
            return None
    task = load_proof_task(path)
    if task.id != item:
        raise InputError(f"{path}: task id {task.id!r} is not the item {item!r} its verdicts are for")
    return TaskStatement(str(path), task.statement_sha256)


def statement_mismatch(data: JsonObject, source: str, statement: TaskStatement | None) -> str | None:
    """The note of a verdict whose statement_sha256 is not its task's statement digest (None: it
    matches, or there is nothing to compare). Written so that index.json can read it back."""
    got = data.get("statement_sha256")
    if statement is None or not got or got == statement.sha256:
        return None
    return (
        f"{STATEMENT_MISMATCH_NOTE} (verdict {source} has statement_sha256 {got}, task file "
        f"{statement.task_file} has {statement.sha256}): not a proof of the task's statement, scored 0"
    )


def _canon_track(name: Json) -> str | None:
    if not isinstance(name, str):
        return None
    canon = name.strip().lower().replace("-", "_").replace(" ", "_")
    return canon if canon in VERDICT_TRACKS else None


def verdict_row(
    data: Json, source: str, expect: dict[str, str] | None = None, statement: TaskStatement | None = None
) -> AttemptRow:
    """Convert one checker verdict into its attempt row; `expect` pins identity fields.
    `statement`: the item's task statement (`task_statement`); a theorem / open-conjecture verdict
    whose statement_sha256 differs from it scores 0 (a proof of another statement)."""
    check(data, "verdict", source)
    track = _canon_track(data["track"])
    if track is None:
        raise InputError(
            f"{source}: track {data['track']!r} is not one of {', '.join(VERDICT_TRACKS)} "
            "(solver attempts are scored from their records)"
        )
    attempt = data["attempt"]
    ident = {"model": data["model"], "track": track, "item": data["item"], "attempt": str(attempt)}
    for key, want in (expect or {}).items():
        got = ident[key]
        if key == "track":
            want = _canon_track(want) or want
        if got != str(want):
            raise InputError(f"{source}: verdict {key} is {got!r}, but this file is planned for {want!r}")
    proof_status = data.get("status") if data.get("status") in PROOF_STATUSES else None
    status = PROOF_STATUSES[proof_status] if proof_status else data.get("status", "judged")
    if proof_status and data.get("complete") is True and proof_status != ProofStatus.COMPLETE:
        raise InputError(f"{source}: complete is true but the checker's status is {proof_status!r}")
    if proof_status and track == Track.CONSTRUCTION:
        raise InputError(f"{source}: a construction verdict has no proof status ({proof_status!r})")
    adoption = data.get("adoption_status", "selected")
    reward = data.get("original_reward")
    if reward is not None and not is_finite_number(reward):
        raise InputError(f"{source}: original_reward must be a finite number or null, not {reward!r}")
    complete = data.get("complete")

    checker = data.get("checker", "")
    if checker and data.get("checker_version"):
        checker = f"{checker} {data['checker_version']}"
    message = data.get("message", "") or data.get("reason", "")
    if proof_status:
        message = f"{proof_status}: {message}" if message else proof_status
    if track != Track.CONSTRUCTION and (lacking := missing_evidence(data)):
        message = "; ".join(
            x for x in (message, f"{EVIDENCE_NOTE} ({', '.join(lacking)} missing): taken on trust") if x
        )
    mismatch = statement_mismatch(data, source, statement) if track != Track.CONSTRUCTION else None
    if mismatch:
        message = "; ".join(x for x in (mismatch, message) if x)
    base_note = "; ".join(x for x in (f"checker {checker}" if checker else "", message) if x)
    if status != "judged":
        return AttemptRow(
            ident["model"],
            track,
            ident["item"],
            ident["attempt"],
            None,
            adoption,
            status,
            "original_task_score",
            "",
            base_note or f"checker status {status}",
        )

    if track == Track.CONSTRUCTION:
        if reward is None:
            raise InputError(f"{source}: a judged construction verdict needs original_reward")
        if reward < 0:
            raise InputError(f"{source}: a construction reward must be >= 0, not {reward!r}")
        score = float(reward)
        note = base_note
    else:
        if complete is None and proof_status:
            complete = proof_status == ProofStatus.COMPLETE
        if complete is None:
            raise InputError(f"{source}: a judged {track} verdict needs 'complete': true or false")
        score = 1.0 if complete and not mismatch else 0.0
        what = "complete proof accepted" if complete else "no complete proof accepted"
        if track == Track.OPEN_CONJECTURE:
            what = "complete resolution accepted" if complete else "no complete resolution accepted"
        if complete and mismatch:
            what = "a complete proof of another statement, not accepted"
        note = "; ".join(
            x for x in (what, f"original_reward {reward:.6g}" if reward is not None else "", base_note) if x
        )
    return AttemptRow(
        ident["model"],
        track,
        ident["item"],
        ident["attempt"],
        score,
        adoption,
        "valid",
        "original_task_score",
        "",
        note,
    )


def verdict_row_file(
    path: str | Path,
    expect: dict[str, str] | None = None,
    task_file: str | os.PathLike | None = None,
    check_statement: bool = True,
) -> AttemptRow:
    """A verdict file's row. With `check_statement` (default) a theorem / open-conjecture verdict's
    statement_sha256 is compared with its item's task statement (`task_file`, else the item's file
    under config/tasks/, when there is one)."""
    data = read_json(path, "verdict file")
    statement = None
    if check_statement and isinstance(data, dict) and _canon_track(data.get("track")) not in (None, "construction"):
        item = data.get("item")
        if isinstance(item, str) and item:
            statement = task_statement(item, task_file)
    return verdict_row(data, str(path), expect, statement)


def model_verdict_rows(
    model: str,
    suite,
    verdicts_dir: str | Path,
    attempts: list[str],
    item_attempts: dict[str, list[str]] | None = None,
    judged: frozenset[str] = frozenset(),
    task_files: dict[str, str] | None = None,
) -> list[AttemptRow]:
    """Every planned theorem / construction / open-conjecture attempt of one model, in suite order:
    `<verdicts_dir>/<model>/<item>/<attempt>.json` converted, or a `missing` row when absent.
    `item_attempts`: item -> further attempt ids of that item only (an adoption file's).
    `judged` ("ITEM/ATTEMPT") are constructions and proofs the pipeline judges itself: their rows
    come from their own job (tcsexam.attempts.construction, `tcsexam proof check`), so none is made here.
    `task_files`: item -> its task file where it is not config/tasks/<item>.yaml (a theorem /
    open-conjecture verdict's statement_sha256 is checked against that task's statement)."""
    rows = []
    for track in VERDICT_TRACKS:
        for item in suite.tracks[track]:
            more = [a for a in (item_attempts or {}).get(item, []) if a not in attempts]
            for attempt in [*attempts, *more]:
                if f"{item}/{attempt}" in judged:
                    continue
                path = Path(verdicts_dir) / model / item / f"{attempt}.json"
                if path.is_file():
                    expect = {"model": model, "track": track, "item": item, "attempt": str(attempt)}
                    task_file = None if track == Track.CONSTRUCTION else (task_files or {}).get(item)
                    rows.append(verdict_row_file(path, expect, task_file))
                else:
                    note = f"no checker verdict: {path} does not exist"
                    if track == Track.CONSTRUCTION:  # nor a submission the pipeline judges (judged above)
                        note = f"no construction: no solver.yaml or construction.txt submission, and {note}"
                    else:
                        note = f"no proof: no proof.v submission, and {note}"
                    rows.append(failed_row(model, track, item, str(attempt), "missing", note))
    return rows
