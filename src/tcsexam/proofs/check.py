"""Judge one proof submission: `tcsexam proof check --task FILE --submission DIR --output verdict.json`.

A submission is a folder with `proof.v`. The checker (coqc, then coqchk) runs as the candidates do:
in the chosen sandbox (bwrap, docker where its image has Coq, local only for trusted
submissions), as the candidates' unprivileged uid, under the task's limits enforced by the chosen
limiter, each step on the checker's own wall clock. Steps, in a scratch folder of its own:

1. scan     proof.v's text, comments stripped (`scan`): a forbidden command -> invalid, nothing runs
2. task     the task's statement file compiled as TCSExam.Task (read-only for every later step;
            its .vo's digest is checked before it is used again)
3. compile  proof.v compiled as TCSExamSubmission.Proof (-Q: nothing else is on the load path
            but Coq's own libraries); a compile error -> invalid
4. check    a harness-written file fixes the statement's type from TCSExam.Task, then loads the
            submission and states `Definition __tcsexam_check : <statement> := <its theorem>`: the
            kernel compares the elaborated types (a notation or a shadowing name in the submission
            cannot change the statement). It prints Print Assumptions and Print Libraries between
            nonce markers. Open conjectures: the statement side first, then the negation side.
5. locate   only when assumptions were printed: their full names (Locate), against the allow-list
6. coqchk   the compiled submission re-checked by coqchk (-norec): its context summary must show
            no unsafe fixpoint, type-in-type, assumed positivity, impredicative Set

complete: every step passed, the theorem exists at the statement's type, every axiom it rests on
is in the task's allow-list (an `Admitted` is an axiom: never allowed), every library loaded is
one the task allows. incomplete: the right theorem, but resting on other axioms. invalid: a
forbidden command, a compile error, no theorem of that name at that type, a library outside the
allowed ones, a kernel check bypassed, coqchk's refusal. timeout, memout, crash: a step ran out
of its limits or died. infrastructure_error: the sandbox failed (the harness's, never the proof's).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import sys
import time
from pathlib import Path

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, UntrustedFileError, atomic_write_json, read_untrusted
from tcsexam.proofs import ProofStatus, coq
from tcsexam.proofs.scan import scan
from tcsexam.proofs.task import ProofTask, load_proof_task
from tcsexam.records import Termination
from tcsexam.runner.engine.batch import RUN_ONE, RunOptions
from tcsexam.runner.limiter import LaunchError, Limits, RunPaths, RunSpec, resolve_limiter
from tcsexam.runner.ownership.scratch import make_scratch
from tcsexam.runner.sandboxes import AUTO_ORDER, choose_sandbox, get_sandbox, sandbox_options, unsandboxed_allowed

PROOF_NAME = "proof.v"
PROOF_MAX_BYTES = 4 << 20
SCHEMA_VERSION = 1

PROOF_STATUSES = tuple(s.value for s in ProofStatus)
#: what the checker's steps print and what is kept of it
TAIL = 600
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
_OOM = re.compile(r"out of memory|not enough memory|cannot allocate memory", re.IGNORECASE)


class _Stop(Exception):
    """A step decided the verdict (status, reason)."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


def _short(text: str, limit: int = TAIL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- the sandbox the checker runs in ------------------------------------------------------------

_PROBED: dict[str, tuple[str | None, str]] = {}  # sandbox name -> (why coqc does not run inside, its version)


def forget_failed_probes() -> None:
    """Keep only the probes that found coqc working (a fork server's, which its commands inherit:
    a command meets a failure itself, with its own message)."""
    for name in [n for n, (why, _) in _PROBED.items() if why is not None]:
        del _PROBED[name]


def _probe_coq(box, limiter: Limiter) -> str | None:
    """None when `coqc --print-version` runs inside `box` as a proof's checker would; else why not.
    The version it prints is kept for `sandbox_coq_version`: the checker is the sandbox's coqc."""
    if box.name in _PROBED:
        return _PROBED[box.name][0]
    work = make_scratch("/tmp", kind="coqprobe-")
    os.chmod(work, 0o755)
    version = ""
    try:
        env = {"PATH": SAFE_PATH, "HOME": work, "TMPDIR": work, "LANG": "C.UTF-8"}
        out = Path(work) / "version.out"
        paths = RunPaths(writable_paths=[work], stdout_path=out)
        spec = RunSpec(["coqc", "--print-version"], work, Limits(wall_s=60), env, paths, limiter)
        outcome = box.run(spec)
        ok = outcome.sandbox_error is None and outcome.termination == Termination.EXIT and outcome.exit_code == 0
        printed = _read_out(out, 4096).split() if ok else []
        version = printed[0] if printed else ""
        why = (
            None
            if version
            else _short(outcome.sandbox_error or outcome.stderr_tail or f"exit code {outcome.exit_code}", 200)
        )
    except Exception as exc:  # a sandbox that cannot start, a LaunchError (no coqc inside)
        why = _short(str(exc), 200)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _PROBED[box.name] = (None if why is None else f"sandbox {box.name}: coqc does not run inside: {why}", version)
    return _PROBED[box.name][0]


def sandbox_coq_version(box, limiter: Limiter = Limiter.AUTO) -> str:
    """The version of the coqc that runs inside `box` ("8.16.1"), "" when none runs there."""
    _probe_coq(box, limiter)
    return _PROBED[box.name][1]


def choose_proof_sandbox(
    name: str, *, allow_unsandboxed: bool = False, limiter: Limiter = Limiter.AUTO, docker_image: str | None = None
):
    """(sandbox, why) like `sandboxes.choose_sandbox`, but the sandbox must also run coqc (the
    Docker candidate image may lack Coq: `auto` then takes the next one)."""
    if name != SandboxName.AUTO:
        box, why = choose_sandbox(name, allow_unsandboxed=allow_unsandboxed, docker_image=docker_image)
        problem = _probe_coq(box, limiter)
        if problem and box.uses_host_programs and not coq.coqc_version():
            raise InputError(coq.NOT_INSTALLED)
        if problem:
            raise InputError(problem)
        return box, why
    skipped = []
    for candidate in AUTO_ORDER:
        if candidate == SandboxName.LOCAL and not unsandboxed_allowed(allow_unsandboxed):
            break
        box = get_sandbox(candidate, **sandbox_options(candidate, docker_image))
        try:
            box.check_available()
        except InputError as exc:
            skipped.append(str(exc))
            continue
        problem = _probe_coq(box, limiter)
        if problem:
            skipped.append(problem)
            continue
        trusted = " (submissions declared trusted: NOT CONTAINED)" if candidate == "local" else ""
        return box, f"sandbox auto -> {candidate}" + (f" (not {'; '.join(skipped)})" if skipped else "") + trusted
    if not coq.coqc_version():
        # bwrap and local run the host's coqc: with none installed that is the cause, whatever
        # else the sandboxes say (Docker's and Apptainer's would be their image's)
        raise InputError(coq.NOT_INSTALLED)
    raise InputError(
        f"sandbox auto: no sandbox that runs coqc works here ({'; '.join(skipped)}); fix one of them, or, only "
        "if the proofs are trusted, pass --allow-unsandboxed"
    )


# ---- one checker step ----------------------------------------------------------------------------


class _Run:
    """The scratch folder of one check and the steps run in it."""

    def __init__(self, task: ProofTask, box, limiter: Limiter, hidden: tuple[str, ...]):
        self.task, self.box, self.limiter, self.hidden = task, box, limiter, hidden
        self.root = Path(make_scratch("/tmp", kind="proof-"))
        os.chmod(self.root, 0o711)
        self.stmt, self.work, self.check = (self.root / d for d in ("stmt", "work", "check"))
        for d in (self.stmt, self.work, self.check):
            d.mkdir()
            os.chmod(d, 0o755)
        self.steps: list[JsonObject] = []
        self.limits = task.limits.for_threads(1)

    def loadpath(self) -> list[str]:
        return ["-Q", str(self.stmt), coq.TASK_ROOT, "-Q", str(self.work), coq.SUBMISSION_ROOT]

    def step(self, name: str, argv: list[str], cwd: Path, writable: Path, readonly: list[Path]) -> str:
        """Run one checker step; its stdout+stderr, or _Stop for a run that did not end normally
        (a non-zero exit is returned to the caller, as (text) with `self.last_exit`)."""
        out = self.root / f"{name}.out"
        env = {"PATH": SAFE_PATH, "HOME": str(writable), "TMPDIR": str(writable), "LANG": "C.UTF-8"}
        paths = RunPaths(
            readonly_paths=tuple(readonly),
            writable_paths=(writable,),
            hidden_paths=self.hidden,
            stdout_path=out,
            stderr_path=out,
        )
        spec = RunSpec(argv, cwd, self.limits, env, paths, self.limiter)
        try:
            outcome = self.box.run(spec)
        except LaunchError as exc:
            raise _Stop("infrastructure_error", f"{name}: the checker could not be started: {exc}") from None
        text = _read_out(out, self.limits.output_bytes)
        self.steps.append(
            {
                "step": name,
                "termination": str(outcome.termination),
                "exit_code": outcome.exit_code,
                "wall_s": round(outcome.wall_s, 3),
                "cpu_s": None if outcome.cpu_s is None else round(outcome.cpu_s, 3),
                "peak_mem_mb": None if outcome.peak_mem_mb is None else round(outcome.peak_mem_mb, 1),
            }
        )
        self.last_exit = outcome.exit_code
        term = outcome.termination
        tail = _short(text[-2000:] if text else outcome.stderr_tail)
        if outcome.sandbox_error:  # (the step's stderr is its output file: what bwrap said is there)
            said = f" ({tail})" if tail and tail not in outcome.sandbox_error else ""
            raise _Stop("infrastructure_error", f"{name}: the sandbox failed: {_short(outcome.sandbox_error)}{said}")
        if term in (Termination.WALLTIME, Termination.CPUTIME):
            raise _Stop("timeout", f"{name}: {term} limit ({outcome.message or 'exceeded'})")
        if term in (Termination.MEMORY, Termination.DISK):
            raise _Stop("memout", f"{name}: {term} limit ({outcome.message or 'exceeded'})")
        if term == Termination.OUTPUT:
            raise _Stop("crash", f"{name}: output limit exceeded ({outcome.message})")
        # OCaml's own refusal to allocate (an address-space limit, the light limiter's) is the memory limit too
        if term in (Termination.EXIT, Termination.SIGNAL) and outcome.exit_code != 0 and _OOM.search(text):
            raise _Stop("memout", f"{name}: out of memory: {tail}")
        if term != Termination.EXIT:
            raise _Stop("crash", f"{name}: {term} {outcome.message}; {tail}".strip())
        if outcome.exit_code != 0 and "Stack overflow" in text:
            raise _Stop("crash", f"{name}: stack overflow: {tail}")
        if outcome.exit_code not in (0, 1):
            raise _Stop("crash", f"{name}: exit code {outcome.exit_code}: {tail}")
        return text

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _read_out(path: Path, cap: int) -> str:
    try:
        data = read_untrusted(path, cap) or b""
    except (UntrustedFileError, OSError):
        return ""
    return data[:cap].decode("utf-8", "replace")


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _own(folder: Path) -> None:
    """Back to the harness (a root harness gave the folder to the candidates' uid for a step), read-only."""
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            p = os.path.join(root, name)
            if os.geteuid() == 0:
                os.lchown(p, os.getuid(), os.getgid())
            if not os.path.islink(p):
                os.chmod(p, 0o755 if name in dirs else 0o644)
    if os.geteuid() == 0:
        os.lchown(folder, os.getuid(), os.getgid())
    os.chmod(folder, 0o755)


# ---- the check ------------------------------------------------------------------------------------


def read_proof(submission: Path) -> tuple[bytes, str | None]:
    """proof.v of the folder, read without following a link: (bytes, None), or (b"", why) when
    it is something the submission must not hand in (a link, a FIFO, over PROOF_MAX_BYTES): that
    is the proof's `invalid` verdict. No folder, or no proof.v at all, is bad input (InputError)."""
    if not submission.is_dir():
        raise InputError(f"{submission}: proof submission folder not found")
    try:
        data = read_untrusted(submission / PROOF_NAME, PROOF_MAX_BYTES)
    except UntrustedFileError as exc:
        return b"", f"{PROOF_NAME} is not a regular file ({exc})"
    if data is None:
        raise InputError(f"{submission}: no {PROOF_NAME} (a proof submission is a folder with {PROOF_NAME})")
    if len(data) > PROOF_MAX_BYTES:
        return b"", f"{PROOF_NAME} is over {PROOF_MAX_BYTES} bytes"
    return data, None


def check_proof(
    task: str | Path | ProofTask,
    submission: str | Path,
    *,
    run: RunOptions = RUN_ONE,
    model: str | None = None,
    attempt: str | None = None,
    hidden_paths: tuple[str, ...] = (),
) -> JsonObject:
    """The verdict (a dict: docs/proofs.md) of one submission. Bad input (task, folder, no coqc
    of the task's version) raises InputError; whatever the proof does is a verdict. Of `run`, the
    sandbox, whether `auto` may fall back to local, and the limiter apply: one proof runs one coqc
    at a time, in this process (no pool, no build step)."""
    t = task if isinstance(task, ProofTask) else load_proof_task(task)
    folder = Path(submission)
    data, unreadable = read_proof(folder)
    box, why = choose_proof_sandbox(
        run.sandbox, allow_unsandboxed=run.allow_unsandboxed, limiter=run.limiter, docker_image=run.docker_image
    )
    version = sandbox_coq_version(box, run.limiter)  # the checker is the coqc inside the sandbox
    if not coq.version_matches(t.coq_version, version):
        raise InputError(
            f"{t.source}: task {t.id} needs Coq {t.coq_version}, but coqc in sandbox {box.name} is {version}"
        )
    parts = folder.resolve().parts
    verdict: JsonObject = {
        "schema_version": SCHEMA_VERSION,
        "model": model or (parts[-3] if len(parts) >= 3 else "unknown"),
        "track": t.track,
        "item": t.id,
        "attempt": str(attempt or parts[-1]),
        "status": "invalid",
        "complete": False,
        "original_reward": 0.0,
        "resolution": None,
        "checker": "coq",
        "checker_version": version,
        "kernel_recheck": "coqchk",
        "statement_file": t.statement_file.name,
        "statement": t.statement,
        "negation": t.negation,
        "statement_sha256": t.statement_sha256,
        "proof_sha256": None if unreadable else hashlib.sha256(data).hexdigest(),
        "theorem": None,
        "axioms": [],
        "assumptions": [],
        "axioms_allowed": list(t.axioms),
        "libraries_allowed": list(t.libraries),
        "declared_axioms": [],
        "sandbox": None,
        "limiter": None,
        "wall_s": 0.0,
        "steps": [],
        "reason": "",
    }
    started = time.perf_counter()
    if unreadable:
        verdict["reason"] = f"refused before checking: {unreadable}"
        return verdict
    findings = scan(data.decode("utf-8", "replace"))
    if findings:
        verdict["reason"] = "refused before checking: " + "; ".join(str(f) for f in findings[:5])
        verdict["wall_s"] = round(time.perf_counter() - started, 3)
        return verdict

    verdict["sandbox"], verdict["limiter"] = box.name, resolve_limiter(run.limiter)
    steps = _Run(t, box, run.limiter, hidden_paths)
    try:
        try:
            _judge(steps, t, data, verdict)
        except _Stop as stop:
            verdict["status"], verdict["reason"] = stop.status, stop.reason
    finally:
        verdict["steps"] = steps.steps
        verdict["wall_s"] = round(sum(s["wall_s"] for s in steps.steps), 3)
        steps.close()
    verdict["complete"] = verdict["status"] == "complete"
    verdict["original_reward"] = 1.0 if verdict["complete"] else 0.0
    print(f"tcsexam proof check: {t.id}: {verdict['status']} ({why}): {verdict['reason']}", file=sys.stderr)
    return verdict


def _judge(run: _Run, t: ProofTask, data: bytes, verdict: JsonObject) -> None:
    # 2. the statement, compiled as TCSExam.Task, then read-only and fixed by its digest
    shutil.copyfile(t.statement_file, run.stmt / f"{coq.TASK_LIB}.v")
    try:
        text = run.step(
            "task", ["coqc", "-q", *run.loadpath()[:3], str(run.stmt / f"{coq.TASK_LIB}.v")], run.stmt, run.stmt, []
        )
    except _Stop as stop:  # nothing of the submission ran yet: the task's limits or the machine
        raise _Stop("infrastructure_error", f"the task's statement could not be compiled: {stop.reason}") from None
    if run.last_exit != 0:
        raise _Stop("infrastructure_error", f"the task's statement file does not compile: {_short(text)}")
    _own(run.stmt)
    task_vo = run.stmt / f"{coq.TASK_LIB}.vo"
    task_digest = _sha256(task_vo)
    # 3. the submission
    (run.work / f"{coq.SUBMISSION_LIB}.v").write_bytes(data)
    argv = ["coqc", "-q", *run.loadpath(), str(run.work / f"{coq.SUBMISSION_LIB}.v")]
    text = run.step("compile", argv, run.work, run.work, [run.stmt])
    if run.last_exit != 0:
        raise _Stop("invalid", f"the proof does not compile: {_short(_no_paths(text))}")
    if _sha256(task_vo) != task_digest:
        raise _Stop("invalid", "the statement's compiled library changed while the proof was compiled")
    # 4. the check of each side, 5. the full names of its assumptions
    failures = []
    for resolution, statement, name in t.sides():
        nonce = secrets.token_hex(8)
        base = coq.check_file(statement, name, nonce)
        check_v = run.check / f"Check_{resolution}.v"
        check_v.write_text(base)
        text = run.step(
            f"check-{resolution}",
            ["coqc", "-q", *run.loadpath(), str(check_v)],
            run.check,
            run.check,
            [run.stmt, run.work],
        )
        if run.last_exit != 0:
            failures.append(_why_not(text, name, statement))
            continue
        assumptions = coq.between(text, nonce, "begin", "mid")
        libraries = coq.between(text, nonce, "mid", "end")
        if assumptions is None or libraries is None:
            raise _Stop("invalid", "the check's output is not what the harness printed (markers missing)")
        found = coq.parse_assumptions(assumptions)
        loaded = coq.parse_libraries(libraries)
        verdict["theorem"], verdict["resolution"] = name, resolution
        _judge_side(run, t, base, nonce, found, loaded, verdict)
        break
    else:
        raise _Stop("invalid", "; ".join(failures))
    # 6. coqchk on the compiled submission
    if _sha256(task_vo) != task_digest:
        raise _Stop("invalid", "the statement's compiled library changed during the check")
    argv = ["coqchk", "-silent", "-o", *run.loadpath(), "-norec", coq.SUBMISSION_MODULE]
    text = run.step("coqchk", argv, run.check, run.check, [run.stmt, run.work])
    if run.last_exit != 0:
        raise _Stop("invalid", f"coqchk rejects the compiled proof: {_short(text[-1500:])}")
    summary = coq.parse_coqchk(text)
    if not summary.found:
        raise _Stop("invalid", f"coqchk printed no context summary: {_short(text[-600:])}")
    prefix = coq.SUBMISSION_MODULE + "."
    verdict["declared_axioms"] = [a.removeprefix(prefix) for a in summary.axioms if a.startswith(prefix)]
    unsafe = [
        f"{what}: {', '.join(names)}"
        for what, names in (
            ("unsafe (co)fixpoints", summary.unsafe_fix),
            ("type-in-type", summary.type_in_type),
            ("assumed positivity", summary.positivity),
        )
        if names
    ]
    if not summary.predicative:
        unsafe.append("impredicative Set")
    if unsafe:
        raise _Stop("invalid", "coqchk: a kernel check was bypassed: " + "; ".join(unsafe))
    if verdict["status"] == "pending":
        verdict["status"] = "complete"
        proof = verdict["resolution"] == "proof"
        side = "a proof of the statement" if proof else "a refutation (the negation proved)"
        verdict["reason"] = (
            f"{side}: {verdict['theorem']} checked at the task's {t.statement if proof else t.negation}, "
            + (
                f"axioms {', '.join(verdict['axioms'])} (allowed)"
                if verdict["axioms"]
                else "closed under the global context"
            )
        )


def _no_paths(text: str) -> str:
    """Coq's error text without the scratch folder's file names (they differ from run to run)."""
    return re.sub(r'File "[^"]*", line (\d+), characters (\d+-\d+):', r"line \1, characters \2:", text)


def _why_not(text: str, name: str, statement: str) -> str:
    """Why the check file did not compile, in the task's words."""
    flat = re.sub(r'File "[^"]*", line \d+, characters \d+-\d+:\s*', "", " ".join(text.split()))
    if "was not found" in flat and name in flat:
        return f"no theorem {name} in the proof"
    return f"{name} is not a proof of the task's {statement}: {_short(flat, 400)}"


def _judge_side(run: _Run, t: ProofTask, base: str, nonce: str, found, loaded: list[str], verdict: dict) -> None:
    allowed_roots = tuple(t.libraries)
    outside = [
        lib
        for lib in loaded
        if lib not in (coq.TASK_MODULE, coq.SUBMISSION_MODULE)
        and not any(lib == root or lib.startswith(root + ".") for root in allowed_roots)
    ]
    if outside:
        raise _Stop(
            "invalid",
            f"loads libraries outside the allowed ones ({', '.join(allowed_roots)}): {', '.join(outside[:5])}",
        )
    if found.unsafe:
        what = "; ".join(f"{u['name']}: {u['why']}" for u in found.unsafe)
        raise _Stop("invalid", f"a kernel check was bypassed: {what}")
    if found.other:
        raise _Stop("invalid", f"unexpected assumptions: {_short('; '.join(found.other), 300)}")
    if not found.closed and not found.axioms:
        raise _Stop("invalid", "Print Assumptions printed nothing the harness recognises")
    full: list[str] = []
    if found.axioms:
        names = [a["name"] for a in found.axioms]
        locate_v = run.check / "Locate.v"
        locate_v.write_text(coq.locate_file(base, names, nonce))
        text = run.step(
            "locate", ["coqc", "-q", *run.loadpath(), str(locate_v)], run.check, run.check, [run.stmt, run.work]
        )
        if run.last_exit != 0:
            raise _Stop("invalid", f"the assumptions could not be located: {_short(text)}")
        located = coq.parse_locate(text, nonce, len(names))
        full = [loc or f"?{n}" for loc, n in zip(located, names, strict=True)]
    verdict["axioms"] = full
    verdict["assumptions"] = [{"name": f, "type": a["type"]} for f, a in zip(full, found.axioms, strict=True)]
    bad = [f for f in full if f not in t.axioms]
    if bad:
        mine = coq.SUBMISSION_MODULE + "."
        if bad == [mine + verdict["theorem"]]:
            raise _Stop("incomplete", f"{verdict['theorem']} is admitted (an axiom, not a proof)")
        not_allowed = ", ".join(b.removeprefix(mine) for b in bad)
        raise _Stop(
            "incomplete",
            f"{verdict['theorem']} rests on {not_allowed}: admitted goals or axioms outside the task's allow-list "
            f"({', '.join(t.axioms) or 'empty'})",
        )
    verdict["status"] = "pending"


def write_verdict(output: str | Path, verdict: JsonObject) -> None:
    atomic_write_json(output, verdict)
