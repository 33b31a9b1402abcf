"""The status of a Solver instance record, decided in one place.

`solver_status` maps how the candidate's process ended (a `ProcessOutcome`, or the `LaunchError`
that kept it from starting) and what its certificate turned out to be (`Certificate`) to the
record's status, message and, where the runner sets it, termination (`Decision`). It is pure:
the caller reads and checks the certificate only when the process outcome leaves the verdict to it
(`solver_status` without a certificate returns None).

Rules (docs/runner.md, Limits and sandboxes): a sandbox that failed -> infrastructure_error; wall or CPU limit -> timeout
(even when a certificate is there); memory or disk -> memout; output over the cap -> crash
(termination "output"); a process-count overrun -> crash ("nproc"); a signal the harness did not
send -> crash; an exit code not in `exit_codes_ok` -> crash, unless the sandbox says the program
could not be started (-> invalid); a program that cannot be started -> invalid (termination
"launch"); no certificate, or something that is not a file the program wrote -> invalid;
otherwise the problem module's verdict (ok, invalid, certificate_failed). An exit code the
problem's community gives an answer (SAT's 10 and 20, `answer_exit_codes`) is a normal exit when
the certificate states that answer, a crash otherwise (`answer_exit_code`). A candidate that
changed its input is invalid (termination "input") whatever else happened (`input_changed`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import overload

from tcsexam.problems.base import CheckResult
from tcsexam.records import Status, Termination
from tcsexam.runner.limiter import LaunchError, ProcessOutcome

SOLUTION_NAME = "solution"
MESSAGE_MAX = 500
#: what a problem's checker may answer
CHECK_STATUSES = (Status.OK, Status.INVALID, Status.CERTIFICATE_FAILED)


def short(text: str, limit: int = MESSAGE_MAX) -> str:
    """`text` on one line, at most `limit` characters (its end kept)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else "..." + text[-(limit - 3) :]


@dataclass(frozen=True)
class Certificate:
    """What was found at the certificate path after the run: `check`, the problem's verdict on it;
    `unreadable`, why it is not a file the program wrote (a link, FIFO, device or folder); both
    None: there was none."""

    check: CheckResult | None = None
    unreadable: str | None = None
    #: where it was looked for (`{solution}` or stdout), named in the messages
    where: str = SOLUTION_NAME
    #: what follows "no certificate written" when there was none (e.g. stdout held one, unread)
    note: str = ""


@dataclass(frozen=True)
class Decision:
    """A record's status and message; `termination` when the runner sets it (launch, input)
    instead of the process outcome."""

    status: Status
    message: str
    termination: Termination | None = None


@overload
def solver_status(
    ended: LaunchError, *, exit_codes_ok: Collection[int] = ..., not_started: bool = ..., certificate: None = ...
) -> Decision: ...


@overload
def solver_status(
    ended: ProcessOutcome, *, exit_codes_ok: Collection[int] = ..., not_started: bool = ..., certificate: Certificate
) -> Decision: ...


@overload
def solver_status(
    ended: ProcessOutcome, *, exit_codes_ok: Collection[int] = ..., not_started: bool = ..., certificate: None = ...
) -> Decision | None: ...


def solver_status(
    ended: ProcessOutcome | LaunchError,
    *,
    exit_codes_ok: Collection[int] = frozenset({0}),
    not_started: bool = False,
    certificate: Certificate | None = None,
) -> Decision | None:
    """The record's status for a run that `ended` so (`not_started`: the sandbox reports that the
    program could not be executed) with `certificate`; None when the certificate decides and none
    was given. A `LaunchError` that is not the candidate's fault is raised again (the harness's)."""
    if isinstance(ended, LaunchError):
        if not ended.candidate_fault:
            raise ended
        return Decision(Status.INVALID, short(f"the command could not be started: {ended}"), Termination.LAUNCH)
    decided = _by_outcome(ended, exit_codes_ok)
    if decided is not None:
        if decided.status == Status.CRASH and ended.termination == Termination.EXIT and not_started:
            return Decision(Status.INVALID, short(f"the command could not be started: {short(ended.stderr_tail, 300)}"))
        return Decision(decided.status, short(decided.message))
    if certificate is None:
        return None
    return _by_certificate(certificate)


def _by_outcome(outcome: ProcessOutcome, exit_codes_ok: Collection[int]) -> Decision | None:
    term = outcome.termination
    if outcome.sandbox_error:
        return Decision(Status.INFRASTRUCTURE_ERROR, outcome.sandbox_error)
    if term in (Termination.WALLTIME, Termination.CPUTIME):
        return Decision(Status.TIMEOUT, outcome.message or f"{term} limit")
    if term == Termination.MEMORY:
        return Decision(Status.MEMOUT, outcome.message or "memory limit")
    if term == Termination.DISK:
        return Decision(Status.MEMOUT, f"disk limit exceeded: {outcome.message}")
    if term == Termination.OUTPUT:
        return Decision(Status.CRASH, f"output limit exceeded: {outcome.message}")
    if term == Termination.NPROC:
        return Decision(Status.CRASH, f"process limit exceeded: {outcome.message}")
    if term == Termination.SIGNAL:
        tail = short(outcome.stderr_tail, 200)
        return Decision(Status.CRASH, f"{outcome.message}" + (f"; stderr: {tail}" if tail else ""))
    if outcome.exit_code not in exit_codes_ok:
        tail = short(outcome.stderr_tail, 300)
        extra = f" ({outcome.message})" if outcome.message else ""
        return Decision(Status.CRASH, f"exit code {outcome.exit_code}{extra}" + (f"; stderr: {tail}" if tail else ""))
    return None


def _by_certificate(certificate: Certificate) -> Decision:
    if certificate.unreadable is not None:
        return Decision(
            Status.INVALID,
            f"the certificate {certificate.where} is not a file the program wrote: {certificate.unreadable}",
        )
    check = certificate.check
    if check is None:
        note = f"; {certificate.note}" if certificate.note else ""
        where = "" if certificate.where == SOLUTION_NAME else f" {certificate.where}"
        return Decision(Status.INVALID, short(f"no certificate written{where}{note}"))
    if check.status not in CHECK_STATUSES:
        raise RuntimeError(f"checker returned status {check.status!r}")
    return Decision(Status(check.status), short(check.message))


def answer_exit_code(
    exit_code: int | None, exit_codes_ok: Collection[int], answers: Mapping[int, str], stated: str | None
) -> Decision | None:
    """A crash when the program exited with one of its problem's answer codes (`answers`: SAT's 10
    SATISFIABLE and 20 UNSATISFIABLE) that the candidate does not list in `exit_codes_ok` and its
    certificate does not state that answer (`stated`, its `s` line); None when the code is fine."""
    if exit_code is None or exit_code in exit_codes_ok or exit_code not in answers:
        return None
    if stated == answers[exit_code]:
        return None
    said = f"says {stated!r}" if stated else "states no answer"
    return Decision(
        Status.CRASH,
        f"exit code {exit_code} (the convention's {answers[exit_code]}) but the certificate {said}; "
        "an answer exit code counts as a normal exit only when the certificate states that answer",
    )


def input_changed(what: str) -> Decision:
    """The candidate changed (or replaced, or removed) its input instance: invalid, whatever else."""
    return Decision(Status.INVALID, short(what), Termination.INPUT)


def trace_status(check: CheckResult | None) -> tuple[Status | str, float | None]:
    """(status, value) of one anytime certificate's check (None: the checker failed, the harness's);
    the value only when it is ok."""
    if check is None:
        return Status.INFRASTRUCTURE_ERROR, None
    return check.status, (check.value if check.status == Status.OK else None)
