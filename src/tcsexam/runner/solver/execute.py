"""One candidate on one instance: run it under the limits in a sandbox, check its certificate,
and map everything to an instance record. The candidate (its `solver.yaml`, the environment and
placeholders of its command, its build step) is `tcsexam.runner.solver.candidate`.

The record's status is decided by `tcsexam.runner.solver.verdict.solver_status` (the rules are there). A
failing harness (sandbox did not start, launch error that is not the candidate's, checker
raising) -> infrastructure_error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from tcsexam import HARNESS_VERSION
from tcsexam.containment import Limiter
from tcsexam.fileio import UntrustedFileError, read_untrusted
from tcsexam.limits import MiB, UnsatProof
from tcsexam.problems.base import CheckResult, Kind
from tcsexam.problems.solver_base import SolverProblem
from tcsexam.records import InstanceRecord, Status, Termination
from tcsexam.runner.limiter import LaunchError, Limits, RunPaths, RunSpec
from tcsexam.runner.limiter.go import listening
from tcsexam.runner.ownership import scratch as scratch_folders
from tcsexam.runner.ownership.scratch import make_scratch, release_scratch, scratch_identity
from tcsexam.runner.sandboxes.base import Sandbox
from tcsexam.runner.sandboxes.runas import can_read, candidate_ids, readable_copy
from tcsexam.runner.solver import anytime, drat
from tcsexam.runner.solver.candidate import Candidate, CertificateSource, candidate_env, format_command, format_seconds
from tcsexam.runner.solver.run_outputs import (
    KEEP_MAX_MB,
    folders_lost,
    keep_certificate,
    keep_proof,
    parsed_instance,
    record_outcome,
)
from tcsexam.runner.solver.verdict import (
    SOLUTION_NAME,
    Certificate,
    Decision,
    answer_exit_code,
    input_changed,
    short,
    solver_status,
    trace_status,
)
from tcsexam.tasks import Task, TaskInstance

#: the program's stdout in the run's scratch folder (the certificate under `certificate: stdout`)
STDOUT_NAME = "stdout.log"
#: how much of an unread stdout "no certificate written" looks at for an answer
UNREAD_STDOUT_BYTES = 1 << 20


@dataclass(frozen=True)
class InstanceOptions:
    """How an instance runs besides its limits: the limiter that enforces them and the folders
    the sandbox hides from the candidate (see `orchestrate.hidden_paths`)."""

    limiter: Limiter = Limiter.AUTO
    hidden_paths: tuple[str, ...] = ()
    #: where the final certificate of each run is kept as <instance>.txt (None: not kept); the
    #: results explorer links it (`tcsexam view`)
    certificates_dir: str | None = None
    #: where the checked DRAT proof of an UNSAT answer is kept as <instance>.drat.gz (None: not kept)
    proofs_dir: str | None = None
    #: the largest certificate or proof kept (a bigger one is checked, not kept)
    keep_max_bytes: int = KEEP_MAX_MB * MiB


@dataclass(frozen=True)
class RecordIdentity:
    """What a record names besides the run's outcome: the attempt, the record key, the candidate
    and image hashes in it, and `instance_sha256`, the instance's hash in the key (checked after
    the run; None: its hash before the run)."""

    attempt: str | None = None
    key: str | None = None
    candidate_hash: str | None = None
    sandbox_image: str | None = None
    instance_sha256: str | None = None


@dataclass(frozen=True)
class _Job:
    """One candidate on one instance, as it goes down the run path."""

    task: Task
    instance: TaskInstance
    candidate: Candidate
    sandbox: Sandbox
    limits: Limits
    seed: int
    scratch: Path
    options: InstanceOptions
    instance_sha256: str | None
    #: (path, (st_dev, st_ino)) of the run's own folders as made: checked after the run
    folders: tuple[tuple[Path, tuple[int, int]], ...] = ()
    #: the work folder, with its identity, when only the machine could replace it (not the candidate)
    work: tuple[Path, tuple[int, int]] | None = None


def run_instance(
    task: Task,
    instance: TaskInstance | str,
    candidate: Candidate,
    *,
    sandbox: Sandbox,
    limits: Limits,
    seed: int,
    scratch_dir: str | os.PathLike,
    identity: RecordIdentity | None = None,
    options: InstanceOptions | None = None,
) -> InstanceRecord:
    """Run `candidate` on `instance` (a TaskInstance or its name) of `task` in `sandbox`; never
    raises for solver failures. An unexpected harness failure becomes an `infrastructure_error`
    record. The record is complete: its identity (`RecordIdentity`, the task) is filled in from
    the arguments, nothing is set on it afterwards.

    Inputs are protected under every sandbox: the instance is checked after the run against
    `identity.instance_sha256` (the record key's hash; by default its hash before the run) and
    restored from the harness's copy when the candidate changed it (the record is then `invalid`,
    termination `input`). Under a sandbox that does not isolate files (local) the candidate gets
    a private read-only copy of the instance. A file with a quirk standard parsers refuse (SATLIB's
    `%` trailer: `SolverProblem.candidate_copy`) is given as a normalised private copy; the record's
    `extra.instance_sha256` is the original's digest, `extra.instance_given` the copy's and what
    was changed."""
    name = instance if isinstance(instance, str) else instance.name
    identity = identity or RecordIdentity()
    record = InstanceRecord(
        instance=name,
        status=Status.INFRASTRUCTURE_ERROR,
        task=task.id,
        attempt=identity.attempt,
        key=identity.key,
        candidate_hash=identity.candidate_hash,
        sandbox_image=identity.sandbox_image,
        harness_version=HARNESS_VERSION,
        sandbox=sandbox.name,
        extra={"sandbox_info": info} if (info := sandbox.describe()) else {},
    )
    try:
        if isinstance(instance, str):
            instance = task.instance(instance)
        job = _Job(
            task,
            instance,
            candidate,
            sandbox,
            limits,
            seed,
            Path(scratch_dir),
            options or InstanceOptions(),
            identity.instance_sha256,
        )
        _run(record, job)
    except Exception as exc:  # the harness failed, not the solver
        record.status = Status.INFRASTRUCTURE_ERROR
        record.message = short(f"harness error: {type(exc).__name__}: {exc}")
    return record


def _private_copy(pristine: bytes, scratch: Path, name: str) -> Path:
    """A read-only copy of the instance for a candidate under ``local`` (nothing can be mounted)."""
    folder = scratch / "input"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(pristine)
    path.chmod(0o444)
    return path


def _candidate_copy(task: Task, pristine: bytes) -> tuple[bytes, str] | None:
    """What the task's problem gives a candidate instead of the instance file's bytes (None: the
    file as it is); `SolverProblem.candidate_copy`."""
    problem = task.problem_impl
    return problem.candidate_copy(pristine) if isinstance(problem, SolverProblem) else None


def _restore_if_changed(path: Path, before: os.stat_result, pristine: bytes, expected: str) -> str | None:
    """None when `path` still holds the instance; else restore it atomically from `pristine`
    and say what happened (for the record)."""
    try:
        now = os.lstat(path)  # a link, FIFO or device put in its place is never followed or opened
        same = (now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
            before.st_ino,
            before.st_size,
            before.st_mtime_ns,
            before.st_ctime_ns,
        )
        data = None if same else read_untrusted(path, len(pristine), one_link=False)
        if same or (data is not None and hashlib.sha256(data).hexdigest() == expected):
            return None
        what = "changed" if data is not None else "removed"
    except UntrustedFileError:
        what = "replaced (by something that is not a regular file)"
    except OSError:
        what = "removed or made unreadable"
    tmp = path.with_name(f".{path.name}.tcsexam-restore-{os.getpid()}")
    tmp.write_bytes(pristine)
    os.replace(tmp, path)
    return f"the candidate {what} its input instance file {path} during the run; restored from the harness's copy"


def _run(record: InstanceRecord, job: _Job) -> None:
    job.scratch.mkdir(parents=True, exist_ok=True)
    scratch = job.scratch.resolve()
    candidate = job.candidate
    shared = not job.sandbox.isolates_files  # no namespace: the candidate's uid must reach every path itself
    ids = candidate_ids()
    run_root = None  # as root under local: a folder the candidate's uid can reach, for this run only
    if ids is not None and shared and not can_read(scratch.parent, ids, ancestors=True):
        run_root = Path(make_scratch(scratch_folders.RELOCATED_ROOT, kind="relocated-"))  # owned and swept like scratch
    home = run_root or scratch
    work = home / "work"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if ids is not None:  # the candidate's uid may pass through (not list) the scratch folder
        os.chmod(home, 0o711)
    if ids is not None and not can_read(candidate.dir, ids, ancestors=shared):
        candidate = dataclasses.replace(
            candidate, dir=readable_copy(candidate.dir, home / "candidate" / candidate.dir.name)
        )
    # the folders the run was given, as made: one that vanished or was replaced while the candidate ran
    # is the machine's fault (another job's clean-up, a /tmp cleaner), never the candidate's; its work
    # folder counts only where the candidate cannot replace it itself (local as the harness's user can)
    folders = tuple((path, scratch_identity(path)) for path in dict.fromkeys([scratch, home]))
    mine = None if shared and ids is None else (work, scratch_identity(work))
    job = dataclasses.replace(job, candidate=candidate, scratch=scratch, folders=folders, work=mine)
    try:
        _run_in(record, job, home, work, shared, ids)
    finally:
        if run_root is not None:
            release_scratch(run_root)


def _run_in(record: InstanceRecord, job: _Job, home: Path, work: Path, shared: bool, ids) -> None:
    solution = work / SOLUTION_NAME
    instance_path = Path(job.instance.path).resolve()
    if not instance_path.is_file():
        raise FileNotFoundError(f"instance file {instance_path} not found")
    before = instance_path.stat()
    pristine = instance_path.read_bytes()
    expected = hashlib.sha256(pristine).hexdigest()
    if job.instance_sha256 is not None and expected != job.instance_sha256:
        raise RuntimeError(f"instance file {instance_path} no longer matches the hash in the record key")
    record.extra["instance_sha256"] = expected  # the original's digest, what the checker judged against
    normalised = _candidate_copy(job.task, pristine)
    if normalised is not None:  # a quirk standard parsers refuse (SATLIB's trailer): the candidate gets a clean copy
        data, change = normalised
        record.extra["instance_given"] = {"sha256": hashlib.sha256(data).hexdigest(), "change": change}
        given = _private_copy(data, home, instance_path.name)
    elif shared or not can_read(instance_path, ids, ancestors=False):
        given = _private_copy(pristine, home, instance_path.name)
    else:
        given = instance_path
    try:
        with anytime.watching(job.task, work, solution, job.limits) as watch:
            _execute(record, job, work, instance_path, given)
            anytime.attach(watch, record, lambda data: _trace_check(job.task, job.instance, instance_path, data))
    finally:
        changed = _restore_if_changed(instance_path, before, pristine, expected)
    if changed:
        _decide(record, input_changed(changed))
        for name in ("A", "solved", "claimed", "reward"):
            setattr(record, name, None)
        record.trace = [] if record.trace is not None else None  # checked against a changed instance


def _spec(job: _Job, work: Path, given: Path) -> RunSpec:
    """The candidate's run: its command with the placeholders filled, in its folder, its
    environment, the instance and folder read-only, the work folder writable, the certificate capped."""
    candidate, limits, scratch = job.candidate, job.limits, job.scratch
    solution = work / SOLUTION_NAME
    values = {
        "instance": str(given),
        "solution": str(solution),
        "proof": str(work / drat.PROOF_NAME),
        "time_limit": format_seconds(limits.wall_s),
        "seed": str(job.seed),
        "threads": str(candidate.threads),
        "workdir": str(work),
        "trace_dir": str(work / anytime.TRACE_DIR_NAME),
    }
    env = candidate_env(
        candidate, wall_s=limits.wall_s, seed=job.seed, workdir=str(work), python_dir=job.sandbox.python_dir()
    )
    paths = RunPaths(
        readonly_paths=(candidate.dir, given),
        writable_paths=(work,),
        output_paths=(solution,),
        hidden_paths=job.options.hidden_paths,
        stdout_path=scratch / STDOUT_NAME,
        stderr_path=scratch / "stderr.log",
    )
    return RunSpec(format_command(candidate.command, values), candidate.dir, limits, env, paths, job.options.limiter)


def _decide(record: InstanceRecord, decision: Decision) -> None:
    record.status, record.message = decision.status, decision.message
    if decision.termination is not None:
        record.termination = decision.termination


def _execute(record: InstanceRecord, job: _Job, work: Path, instance_path: Path, given: Path) -> None:
    scratch, candidate = job.scratch, job.candidate
    # the limits this run had (`solver-score --at` needs the wall limit a timed-out run was killed at)
    record.extra["limits"] = {"wall_s": job.limits.wall_s, "cpu_s": job.limits.cpu_s}
    go: list[float] = []  # the program's go, on the wall clock (file times are compared with it)
    try:
        with listening(lambda t: go.append(time.time() - (time.monotonic() - t))):
            outcome = job.sandbox.run(_spec(job, work, given))
        started = go[0] if go else time.time() - (outcome.wall_s or 0.0)
    except LaunchError as exc:
        lost = folders_lost(job.folders, job.work)
        _decide(record, lost or solver_status(exc))  # raised again when it is the harness's
        _keep(record, job, None, None)
        return
    lost = folders_lost(job.folders, job.work)
    if lost is not None:
        record_outcome(record, outcome)
        _decide(record, lost)
        _keep(record, job, None, None)
        return
    if work.parent != scratch:  # relocated for the candidate's uid (local, root): back where callers expect it
        shutil.rmtree(scratch / "work", ignore_errors=True)
        try:
            os.rename(work, scratch / "work")
            work = scratch / "work"
        except OSError:  # another file system: read it where it is (removed with its run folder); never
            pass  # copy what the candidate left (a FIFO would fail the copy, a link would be followed)
    record_outcome(record, outcome)
    problem = job.task.problem_impl
    answers = problem.answer_exit_codes if isinstance(problem, SolverProblem) else {}
    # an answer exit code (SAT's 10/20) is let through here and judged against the certificate below
    codes_ok = candidate.exit_codes_ok | frozenset(answers)
    not_started = job.sandbox.not_started(outcome)
    decision = solver_status(outcome, exit_codes_ok=codes_ok, not_started=not_started)
    source = _certificate_path(candidate, work, scratch)
    if decision is not None and decision.status == Status.TIMEOUT:
        notes = _timeout_notes(job, outcome, source, instance_path, started)
        decision = dataclasses.replace(decision, message=short("; ".join([decision.message, *notes])))
    if decision is None:
        certificate, check, data = _certificate(job, source, work, instance_path, record)
        proof = record.extra.get("unsat_proof") or {}
        _keep(record, job, source, work / drat.PROOF_NAME if proof.get("mode") == "required" else None)
        decision = solver_status(outcome, exit_codes_ok=codes_ok, not_started=not_started, certificate=certificate)
        # an answer code is judged against a certificate; with none, the record says there was none
        stated = problem.stated_answer(data) if data is not None and answers else None
        wrong_code = answer_exit_code(outcome.exit_code, candidate.exit_codes_ok, answers, stated) if data else None
        if check is not None:
            record.claimed, record.reward = check.claimed, check.reward
        if wrong_code is not None:
            decision = wrong_code
        elif decision.status == Status.OK:
            if check is None:  # a certificate is accepted only by its check
                raise RuntimeError(f"{job.instance.name}: an accepted certificate without its check")
            solve = job.task.kind == Kind.SOLVE
            record.A, record.solved = check.value, (bool(check.solved) if solve else check.solved)
    else:
        _keep(record, job, None, None)
    _decide(record, decision)


def _keep(record: InstanceRecord, job: _Job, certificate: Path | None, proof: Path | None) -> None:
    """Keep what the record was judged on beside the records (`run_outputs.Keep`): the certificate
    and the checked UNSAT proof (None: none, an older one is removed); `extra.kept` names them."""
    name, options = job.instance.name, job.options
    kept = {
        "certificate": keep_certificate(options.certificates_dir, name, certificate, options.keep_max_bytes),
        "proof": keep_proof(options.proofs_dir, name, proof, options.keep_max_bytes),
    }
    kept = {what: info for what, info in kept.items() if info is not None}
    if kept:
        record.extra["kept"] = kept


def _timeout_notes(job: _Job, outcome, source: Path, instance_path: Path, started: float) -> list[str]:
    """What a timeout's message adds: whether a certificate the checker accepts was on disk at the
    end (and whether it arrived before or after the wall limit: its mtime against the run's start,
    `started`, plus the limit), and, for a CPU-time kill, that `threads` sets the CPU budget."""
    notes = []
    if outcome.termination == Termination.CPUTIME:
        threads, cpu = job.candidate.threads, job.limits.cpu_s
        budget = f"{cpu:g} s" if cpu else "set"
        notes.append(
            f"the CPU budget is {budget} for threads: {threads} in solver.yaml (the task's cpu_s, or "
            f"its wall limit x threads): a solver using more cores than its `threads` spends it faster and is "
            f"killed on CPU time; declare the cores it uses in `threads`"
        )
    try:
        data = read_untrusted(source, job.limits.output_bytes)
        st = os.stat(source, follow_symlinks=False)
    except (UntrustedFileError, OSError):
        return notes
    if not data or not data.strip():
        return notes
    problem = job.task.problem_impl
    try:
        check = problem.check_certificate(parsed_instance(problem, instance_path), data, job.instance.meta)
    except Exception:  # only a message: the checker's failure here decides nothing
        return notes
    if check.status != Status.OK:
        return notes
    if outcome.termination == Termination.CPUTIME:
        when = "the program was killed on CPU time before it ended"
    elif st.st_mtime > started + job.limits.wall_s:
        when = "it arrived after the limit (written after the wall limit, e.g. in a SIGTERM handler)"
    else:
        when = "the program did not end within the limit"
    notes.insert(
        0, f"a valid certificate was on disk but {when}; an answer counts only from a run that ends inside its limits"
    )
    return notes


def _certificate_path(candidate: Candidate, work: Path, scratch: Path) -> Path:
    """Where the run's certificate is: `{solution}`, or the program's stdout (`certificate: stdout`)."""
    return scratch / STDOUT_NAME if candidate.certificate == CertificateSource.STDOUT else work / SOLUTION_NAME


def _where(candidate: Candidate) -> str:
    """The certificate's place as the messages name it."""
    if candidate.certificate == CertificateSource.STDOUT:
        return "on stdout (certificate: stdout)"
    return SOLUTION_NAME


def _unread_stdout(job: _Job) -> str:
    """What to add to "no certificate written" when the program printed something on stdout that
    was not read (certificate: file): a competition answer, or how many bytes."""
    cap = min(job.limits.output_bytes, UNREAD_STDOUT_BYTES)
    try:
        out = read_untrusted(job.scratch / STDOUT_NAME, cap)
    except UntrustedFileError:
        return ""
    if not out or not out.strip():
        return ""
    stated = job.task.problem_impl.stated_answer(out[:cap])
    what = f"an answer ('s {stated}')" if stated else (f"{len(out)} bytes" if len(out) <= cap else f"over {cap} bytes")
    return (
        f"stdout held {what} but was not read: the certificate is read from {{solution}} unless "
        "solver.yaml says `certificate: stdout`"
    )


def _certificate(
    job: _Job, source: Path, work: Path, instance_path: Path, record: InstanceRecord
) -> tuple[Certificate, CheckResult | None, bytes | None]:
    """The certificate the run left at `source` (read at most output cap + 1 bytes, never through
    a link), the problem's check of it (None when there is none to check) and its bytes. On a SAT
    task an accepted UNSAT claim then needs the DRAT proof the run left in its `work` folder
    (`drat.judge_unsat`, the task's `unsat_proof`); what was found is the record's `extra.unsat_proof`."""
    where = _where(job.candidate)
    try:
        cert = read_untrusted(source, job.limits.output_bytes)
    except UntrustedFileError as exc:
        return Certificate(unreadable=str(exc), where=where), None, None
    if cert is None or (job.candidate.certificate == CertificateSource.STDOUT and not cert.strip()):
        note = _unread_stdout(job) if job.candidate.certificate == CertificateSource.FILE else ""
        return Certificate(where=where, note=note), None, None
    problem = job.task.problem_impl
    parsed = parsed_instance(problem, instance_path)
    check = problem.check_certificate(parsed, cert, job.instance.meta)
    mode = job.task.unsat_proof
    check, proof = drat.judge_unsat(
        check,
        mode,
        lambda: drat.check_proof(
            parsed,
            work / drat.PROOF_NAME,
            limits=job.task.proof_limits or drat.ProofLimits(),
            scratch=job.scratch,
            limiter=job.options.limiter,
        ),
    )
    if proof is not None:
        record.extra = {**record.extra, "unsat_proof": proof}
    return Certificate(check=check, where=where), check, cert


def _trace_check(task, instance, instance_path: Path, data: bytes) -> tuple[str, float | None]:
    """(status, value) of one anytime certificate, judged like a final one."""
    problem = task.problem_impl
    try:
        check = problem.check_certificate(parsed_instance(problem, instance_path), data, instance.meta)
    except Exception:  # a checker failure is the harness's, as for the final certificate
        check = None
    if check is not None and task.unsat_proof == UnsatProof.REQUIRED and check.claimed == "UNSAT":
        return check.status, (0.0 if check.status == Status.OK else None)  # only the final answer's proof is checked
    return trace_status(check)
