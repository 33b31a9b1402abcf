"""Proof-checked tracks (theorem, open_conjecture): task files with a formal statement, a real
proof checker (Coq) run in the candidates' sandbox under their limiter, and the verdict it writes.

task.py   proof task files (`track: theorem | open_conjecture`, `checker: coq`, the statement's .v)
scan.py   the first line of defence: the proof's text, comments stripped, against forbidden commands
coq.py    what Coq prints (Print Assumptions, Print Libraries, Locate, coqchk's context summary)
check.py  one submission (a folder with proof.v) -> its verdict (`tcsexam proof check`)
cli.py    `tcsexam proof check`

The rules (what "complete" means, the allow-list, external checkers) are in docs/proofs.md.
"""

from enum import StrEnum


class ProofStatus(StrEnum):
    """A proof check's verdict (docs/proofs.md)."""

    COMPLETE = "complete"
    INCOMPLETE = "incomplete"
    INVALID = "invalid"
    TIMEOUT = "timeout"
    MEMOUT = "memout"
    CRASH = "crash"
    INFRASTRUCTURE_ERROR = "infrastructure_error"
