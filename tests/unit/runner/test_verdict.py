"""The one function that decides a Solver record's status (`runner.solver.verdict.solver_status`), as a table."""

from __future__ import annotations

import pytest

from tcsexam.problems.base import CheckResult
from tcsexam.records import Status, Termination
from tcsexam.runner.limiter import LaunchError, ProcessOutcome
from tcsexam.runner.solver.verdict import Certificate, answer_exit_code, input_changed, solver_status, trace_status


def ended(termination="exit", exit_code=0, message="", stderr="", signal=None, sandbox_error=None) -> ProcessOutcome:
    return ProcessOutcome(
        exit_code=exit_code,
        signal=signal,
        termination=termination,
        wall_s=1.0,
        cpu_s=1.0,
        peak_mem_mb=10.0,
        stdout_tail="",
        stderr_tail=stderr,
        limiter="light",
        sandbox="local",
        killed_by_harness=termination != "exit",
        message=message,
        sandbox_error=sandbox_error,
    )


OK = Certificate(check=CheckResult("ok", value=3.0, message="cut 3"))
#: (process outcome, keyword arguments, certificate) -> (status, message, termination set by the runner)
TABLE = [
    (ended(sandbox_error="bwrap did not start"), {}, OK, ("infrastructure_error", "bwrap did not start", None)),
    (ended("walltime", None, "wall limit 5 s"), {}, OK, ("timeout", "wall limit 5 s", None)),
    (ended("cputime", None), {}, OK, ("timeout", "cputime limit", None)),
    (ended("memory", None), {}, OK, ("memout", "memory limit", None)),
    (
        ended("disk", None, "work folder 30 MB over 20 MB"),
        {},
        OK,
        ("memout", "disk limit exceeded: work folder 30 MB over 20 MB", None),
    ),
    (
        ended("output", None, "stdout over 10 bytes"),
        {},
        OK,
        ("crash", "output limit exceeded: stdout over 10 bytes", None),
    ),
    (ended("nproc", None, "300 over 256"), {}, OK, ("crash", "process limit exceeded: 300 over 256", None)),
    (
        ended("signal", None, "killed by signal 6 (SIGABRT)", "boom\n  here", 6),
        {},
        OK,
        ("crash", "killed by signal 6 (SIGABRT); stderr: boom here", None),
    ),
    (ended(exit_code=3, stderr="oops"), {}, OK, ("crash", "exit code 3; stderr: oops", None)),
    (ended(exit_code=10), {"exit_codes_ok": {0, 10}}, OK, ("ok", "cut 3", None)),
    (
        ended(exit_code=127, stderr="/bin/sh: 1: exec: ./x: not found"),
        {"not_started": True},
        OK,
        ("invalid", "the command could not be started: /bin/sh: 1: exec: ./x: not found", None),
    ),
    (ended("walltime", None, "wall"), {"not_started": True}, OK, ("timeout", "wall", None)),  # only an exit
    (ended(), {}, Certificate(), ("invalid", "no certificate written", None)),
    (
        ended(),
        {},
        Certificate(where="on stdout (certificate: stdout)"),
        ("invalid", "no certificate written on stdout (certificate: stdout)", None),
    ),
    (
        ended(),
        {},
        Certificate(note="stdout held an answer ('s SATISFIABLE') but was not read"),
        ("invalid", "no certificate written; stdout held an answer ('s SATISFIABLE') but was not read", None),
    ),
    (
        ended(),
        {},
        Certificate(unreadable="a symbolic link"),
        ("invalid", "the certificate solution is not a file the program wrote: a symbolic link", None),
    ),
    (
        ended(),
        {},
        Certificate(check=CheckResult.failed("edge 3 missing")),
        ("certificate_failed", "edge 3 missing", None),
    ),
    (ended(), {}, Certificate(check=CheckResult.invalid("not a number")), ("invalid", "not a number", None)),
    (
        LaunchError("no such file: ./x", True),
        {},
        OK,
        ("invalid", "the command could not be started: no such file: ./x", "launch"),
    ),
]


@pytest.mark.parametrize(("outcome", "how", "certificate", "expected"), TABLE)
def test_solver_status_table(outcome, how, certificate, expected):
    decision = solver_status(outcome, **how, certificate=certificate)
    assert (decision.status, decision.message, decision.termination) == expected
    assert isinstance(decision.status, Status)
    assert decision.termination is None or isinstance(decision.termination, Termination)


def test_the_certificate_decides_only_when_the_process_does_not():
    assert solver_status(ended()) is None  # the caller reads and checks the certificate next
    assert solver_status(ended("walltime", None)).status == "timeout"  # never read after a timeout


def test_harness_failures_are_not_the_candidates():
    with pytest.raises(LaunchError):
        solver_status(LaunchError("cannot create the run's cgroup", False))
    with pytest.raises(RuntimeError, match="checker returned status"):
        solver_status(ended(), certificate=Certificate(check=CheckResult("maybe")))


def test_long_messages_are_one_shortened_line():
    decision = solver_status(ended("walltime", None, "x  " * 1000))
    assert len(decision.message) == 500 and decision.message.startswith("...") and "  " not in decision.message
    assert len(solver_status(ended(exit_code=1, stderr="y" * 2000)).message) < 350  # stderr: its last 300


def test_changed_input_and_trace_rows():
    changed = input_changed("the candidate changed  its input")
    assert (changed.status, changed.message, changed.termination) == (
        "invalid",
        "the candidate changed its input",
        "input",
    )
    assert trace_status(None) == ("infrastructure_error", None)
    assert trace_status(CheckResult("ok", value=2.0)) == ("ok", 2.0)
    assert trace_status(CheckResult.failed("no")) == ("certificate_failed", None)


SAT_CODES = {10: "SATISFIABLE", 20: "UNSATISFIABLE"}


@pytest.mark.parametrize(
    ("code", "codes_ok", "stated", "crash"),
    [
        (10, {0}, "SATISFIABLE", False),  # the convention, without exit_codes_ok
        (20, {0}, "UNSATISFIABLE", False),
        (0, {0}, "SATISFIABLE", False),  # 0 is the candidate's own normal exit
        (20, {0}, "SATISFIABLE", True),  # the code contradicts the certificate
        (10, {0}, None, True),  # an answer code and no answer
        (10, {0, 10, 20}, None, False),  # the candidate listed it: its own convention
        (3, {0}, "SATISFIABLE", False),  # not an answer code: decided by exit_codes_ok before
    ],
)
def test_an_answer_exit_code_is_a_normal_exit_only_when_the_certificate_agrees(code, codes_ok, stated, crash):
    decision = answer_exit_code(code, codes_ok, SAT_CODES, stated)
    assert (decision is not None) == crash
    if crash:
        assert decision.status == "crash" and f"exit code {code}" in decision.message
