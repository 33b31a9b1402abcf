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
| checker, message | optional strings (provenance): `checker` names the checker that ran (and its version); a verdict no checker produced says so (the bundled demo fixtures: "none: bundled demo fixture, written by hand ...") |
| adoption_status | optional: `selected` (default), `selected_provisional`, `excluded` |

Conversion to the attempt-table score: theorem and open_conjecture -> 1.0 when `complete` is true,
else 0.0 (partial credit in `original_reward` becomes 0); construction -> `original_reward`
unchanged (may exceed 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcsexam.attempts.rows import AttemptRow
from tcsexam.errors import InputError
from tcsexam.fileio import is_finite_number, read_json
from tcsexam.schemas import check
from tcsexam.scoring.vocabulary import EVIDENCE_NOTE
from tcsexam.suites import VERDICT_TRACKS

VERDICT_STATUSES = ("judged", "judge_failed", "not_finished")
#: a proof checker's own verdict statuses (tcsexam.proofs.check) and the row status each gives
PROOF_STATUSES = {
    "complete": "judged",
    "incomplete": "judged",
    "invalid": "judged",
    "timeout": "judged",
    "memout": "judged",
    "crash": "judged",
    "infrastructure_error": "judge_failed",
}
#: the evidence fields a theorem / open-conjecture verdict must carry to be taken as checked
EVIDENCE_FIELDS = ("checker", "checker_version", "statement_sha256", "axioms")


def missing_evidence(data: dict[str, Any]) -> list[str]:
    """The evidence fields a proof verdict lacks (a checker named "none: ..." is no checker)."""
    missing = [k for k in EVIDENCE_FIELDS if data.get(k) in (None, "")]
    if "checker" not in missing and str(data["checker"]).strip().lower().startswith("none"):
        missing.insert(0, "checker")
    return missing


def _canon_track(name: Any) -> str | None:
    if not isinstance(name, str):
        return None
    canon = name.strip().lower().replace("-", "_").replace(" ", "_")
    return canon if canon in VERDICT_TRACKS else None


def verdict_row(data: Any, source: str, expect: dict[str, str] | None = None) -> AttemptRow:
    """Convert one checker verdict into its attempt row; `expect` pins identity fields."""
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
    if proof_status and data.get("complete") is True and proof_status != "complete":
        raise InputError(f"{source}: complete is true but the checker's status is {proof_status!r}")
    if proof_status and track == "construction":
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
    if track != "construction" and (lacking := missing_evidence(data)):
        message = "; ".join(
            x for x in (message, f"{EVIDENCE_NOTE} ({', '.join(lacking)} missing): taken on trust") if x
        )
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

    if track == "construction":
        if reward is None:
            raise InputError(f"{source}: a judged construction verdict needs original_reward")
        if reward < 0:
            raise InputError(f"{source}: a construction reward must be >= 0, not {reward!r}")
        score = float(reward)
        note = base_note
    else:
        if complete is None and proof_status:
            complete = proof_status == "complete"
        if complete is None:
            raise InputError(f"{source}: a judged {track} verdict needs 'complete': true or false")
        score = 1.0 if complete else 0.0
        what = "complete proof accepted" if complete else "no complete proof accepted"
        if track == "open_conjecture":
            what = "complete resolution accepted" if complete else "no complete resolution accepted"
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


def verdict_row_file(path: str | Path, expect: dict[str, str] | None = None) -> AttemptRow:
    return verdict_row(read_json(path, "verdict file"), str(path), expect)


def model_verdict_rows(
    model: str,
    suite,
    verdicts_dir: str | Path,
    attempts: list[str],
    item_attempts: dict[str, list[str]] | None = None,
    judged: frozenset[str] = frozenset(),
) -> list[AttemptRow]:
    """Every planned theorem / construction / open-conjecture attempt of one model, in suite order:
    `<verdicts_dir>/<model>/<item>/<attempt>.json` converted, or a `missing` row when absent.
    `item_attempts`: item -> further attempt ids of that item only (an adoption file's).
    `judged` ("ITEM/ATTEMPT") are constructions and proofs the pipeline judges itself: their rows
    come from their own job (tcsexam.attempts.construction, `tcsexam proof check`), so none is made here."""
    from tcsexam.attempts.rows import failed_row

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
                    rows.append(verdict_row_file(path, expect))
                else:
                    note = f"no checker verdict: {path} does not exist"
                    if track == "construction":  # nor a submission the pipeline judges (judged above)
                        note = f"no construction: no solver.yaml or construction.txt submission, and {note}"
                    else:
                        note = f"no proof: no proof.v submission, and {note}"
                    rows.append(failed_row(model, track, item, str(attempt), "missing", note))
    return rows
