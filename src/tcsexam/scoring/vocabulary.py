"""The attempt table's closed vocabularies (the scoring specification's "Attempt table").

Kept apart from `index.py` (numpy, pandas) so the CLI and the workflow's row writers can use them
without importing the aggregator.
"""

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
ADOPTION_STATUSES = ("selected", "selected_provisional", "excluded")
SCORE_STATUSES = ("valid", "judge_failed", "not_finished", "missing")
SCORE_TYPES = ("fixed_reference_relative", "original_task_score")
PROTOCOLS = ("online", "offline")

#: what an attempt row's note says of a theorem / open-conjecture verdict that carried no checker
#: evidence (tcsexam.attempts.verdicts writes it, index.json's issues look for it: unverified_proof)
EVIDENCE_NOTE = "no checker evidence"

#: what an attempt row's note says of a theorem / open-conjecture verdict whose statement_sha256 is
#: not the digest of its task file's statement (tcsexam.attempts.verdicts writes it, scored 0;
#: index.json's issues look for it: statement_mismatch)
STATEMENT_MISMATCH_NOTE = "statement digest mismatch"
