"""The attempt table's closed vocabularies (the scoring specification's "Attempt table"): one
StrEnum each, and the tuples of plain strings derived from it that the validators, the CLI's
choices and the row writers use (tests/unit/test_vocabularies.py keeps copies out).

Kept apart from `index.py` (numpy, pandas) so the CLI and the workflow's row writers can use them
without importing the aggregator.
"""

from enum import StrEnum

COLUMNS = (
    "model",
    "track",
    "item",
    "attempt",
    "score",
    "adoption_status",
    "score_status",
    "score_type",
    "solver_protocol",
)


class AdoptionStatus(StrEnum):
    SELECTED = "selected"
    SELECTED_PROVISIONAL = "selected_provisional"
    EXCLUDED = "excluded"


class ScoreStatus(StrEnum):
    VALID = "valid"
    JUDGE_FAILED = "judge_failed"
    NOT_FINISHED = "not_finished"
    MISSING = "missing"


class ScoreType(StrEnum):
    FIXED_REFERENCE_RELATIVE = "fixed_reference_relative"
    ORIGINAL_TASK_SCORE = "original_task_score"


class Protocol(StrEnum):
    ONLINE = "online"
    OFFLINE = "offline"


ADOPTION_STATUSES = tuple(s.value for s in AdoptionStatus)
#: the adoption states whose attempts count towards a task's mean
ADOPTED = (AdoptionStatus.SELECTED.value, AdoptionStatus.SELECTED_PROVISIONAL.value)
SCORE_STATUSES = tuple(s.value for s in ScoreStatus)
SCORE_TYPES = tuple(s.value for s in ScoreType)
PROTOCOLS = tuple(p.value for p in Protocol)
#: the score statuses of a row without a result (`tcsexam attempts missing-row`)
UNSCORED = (ScoreStatus.MISSING.value, ScoreStatus.NOT_FINISHED.value, ScoreStatus.JUDGE_FAILED.value)

#: what an attempt row's note says of a theorem / open-conjecture verdict that carried no checker
#: evidence (tcsexam.attempts.verdicts writes it, index.json's issues look for it: unverified_proof)
EVIDENCE_NOTE = "no checker evidence"

#: what an attempt row's note says of a theorem / open-conjecture verdict whose statement_sha256 is
#: not the digest of its task file's statement (tcsexam.attempts.verdicts writes it, scored 0;
#: index.json's issues look for it: statement_mismatch)
STATEMENT_MISMATCH_NOTE = "statement digest mismatch"
