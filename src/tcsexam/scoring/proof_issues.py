"""index.json's issues about theorem and open-conjecture verdicts the pipeline did not check itself:
`unverified_proof` (a verdict file without checker evidence, scored on trust) and
`statement_mismatch` (a verdict about another statement than its task's, scored 0). Both are read
from the notes tcsexam.attempts.verdicts writes on the attempt table's rows."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tcsexam.scoring.vocabulary import EVIDENCE_NOTE, STATEMENT_MISMATCH_NOTE
from tcsexam.suites import BINARY_TRACKS, normalize_track

_MISMATCH = re.compile(
    r"\(verdict (?P<verdict>.+?) has statement_sha256 (?P<verdict_sha256>[0-9a-f]{64}), task file "
    r"(?P<task_file>.+?) has (?P<task_sha256>[0-9a-f]{64})\)"
)


def _noted_rows(df, marker: str, reason: str) -> Iterator[tuple[dict[str, str], str]]:
    """(issue stub, note) for each adopted theorem / open-conjecture row whose note says `marker`."""
    if "note" not in df.columns:
        return
    for row in df.itertuples(index=False):
        note = str(row.note or "")  # (a column of df, checked above)
        track = normalize_track(str(row.track))
        if marker not in note or track not in BINARY_TRACKS or str(row.adoption_status) == "excluded":
            continue
        stub = {"reason": reason, "model": str(row.model), "track": track, "item": str(row.item)}
        yield stub | {"attempt": str(row.attempt)}, note


def unverified_proofs(df) -> list[dict[str, str]]:
    """An issue per adopted theorem / open-conjecture row whose verdict carried no checker
    evidence (its note says `vocabulary.EVIDENCE_NOTE`): its score is taken on trust."""
    message = (
        "the verdict carries no checker evidence (checker, checker_version, statement_sha256, axioms): "
        "its score is taken on trust"
    )
    return [
        issue | {"message": message, "detail": note}
        for issue, note in _noted_rows(df, EVIDENCE_NOTE, "unverified_proof")
    ]


def statement_mismatches(df) -> list[dict[str, str]]:
    """An issue per adopted theorem / open-conjecture row whose verdict's statement_sha256 is not
    the digest of its task's statement (its note says `vocabulary.STATEMENT_MISMATCH_NOTE`): scored
    0, as a proof of another statement. The issue names the verdict file, the task file and both
    digests."""
    message = (
        "the verdict's statement_sha256 is not the digest of the task's statement: it is about another "
        "statement, so the row scores 0"
    )
    out = []
    for issue, note in _noted_rows(df, STATEMENT_MISMATCH_NOTE, "statement_mismatch"):
        found = _MISMATCH.search(note.split(STATEMENT_MISMATCH_NOTE, 1)[1])
        out.append(issue | (found.groupdict() if found else {}) | {"message": message, "detail": note})
    return out
