"""`tcsexam batch run | take`: few, long cluster jobs (tcsexam.workflow.batching; docs/workflow.md, SLURM).

`batch run` (rule `run_batch`, one cluster job) runs its members, each the very command its own
rule would run, as many at once as the batch's threads hold (longest first), the Solver runs
joining one Ray head for the whole batch (a running shared head given by --ray-head, else one it
starts on this node and stops at its end). Each member writes its output (atomically, as the
command always does) and its log staged (`tcsexam.workflow.batching.STAGED`); the log is written beside it as
`<log>.partial` and renamed when the member ends, so a batch cut off leaves each finished member's
output and log complete and an unfinished one without an output. A member whose output is already
staged (a batch run again after being cut off) is not run again. A member that fails is a record in
the batch's summary (its exit code and one-line reason), never the batch's failure: the summary is
written, atomically, once every member has ended, and the batch exits 0.

`batch take` (rules `run_take`, `construction_take`, `proof_take`, local) renames one member's
staged output and log (`<path>.staged`) to the paths its own rule declares, or, when the member left no output,
writes its log with the reason and exits 1 (its rule's `tcsexam job-failed` then reports it, as
for the member's own job).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tcsexam.errors import InputError, UsageError, os_error_text
from tcsexam.fileio import JsonObject, atomic_write_json
from tcsexam.jobfail import reason
from tcsexam.logs import logger
from tcsexam.workflow.batching import STAGED

_log = logger("workflow.batch")

PARTIAL = ".partial"
#: how long a shared head that is still starting (a local run's, started by the workflow's onstart) is waited for
SHARED_HEAD_WAIT_S = 60.0


@dataclass
class Spec:
    key: str
    argv: list[str]
    threads: int
    output: Path
    log: Path
    ray: bool

    @classmethod
    def parse(cls, text: str) -> Spec:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"batch run --member: not JSON ({exc}): {text[:120]}") from None
        want = {"key": str, "argv": list, "threads": int, "output": str, "log": str, "ray": bool}
        if not isinstance(data, dict) or set(data) != set(want):
            raise UsageError(f"batch run --member: needs exactly the keys {sorted(want)}: {text[:120]}")
        for k, kind in want.items():
            if not isinstance(data[k], kind) or (kind is int and isinstance(data[k], bool)):
                raise UsageError(f"batch run --member {data.get('key')!r}: {k} must be of type {kind.__name__}")
        if not data["argv"] or not all(isinstance(a, str) for a in data["argv"]) or data["threads"] < 1:
            raise UsageError(f"batch run --member {data['key']!r}: argv must be strings, threads >= 1")
        return cls(data["key"], data["argv"], data["threads"], Path(data["output"]), Path(data["log"]), data["ray"])


@dataclass
class Running:
    spec: Spec
    proc: subprocess.Popen
    log: IO[bytes]
    started: float


@dataclass
class Outcome:
    key: str
    status: str  #: ok, failed, done_earlier
    code: int | None = None
    wall_s: float = 0.0
    reason: str = ""
    extra: JsonObject = field(default_factory=dict)


class _Stop(Exception):
    """SIGTERM (SLURM's cancel or time limit, Snakemake's stop): end the members and the batch's Ray."""


def _on_term(signum, frame):
    raise _Stop()


def run_batch(specs: list[Spec], threads: int, ray_head: str | None) -> list[Outcome]:
    """Run `specs` (longest first, as given), at most `threads` threads' worth at once."""
    outcomes: dict[str, Outcome] = {}
    todo: list[Spec] = []
    for s in specs:
        if s.output.is_file():
            outcomes[s.key] = Outcome(s.key, "done_earlier")
            _log.info("%s: staged by an earlier run of this batch, not run again", s.key)
        else:
            todo.append(s)
    head_dir, own_head = _ray_head(todo, threads, ray_head)
    running: list[Running] = []
    try:
        while todo or running:
            free = threads - sum(min(r.spec.threads, threads) for r in running)
            for s in list(todo):
                if min(s.threads, threads) <= free or not running:
                    todo.remove(s)
                    started = _start(s, head_dir)
                    if isinstance(started, Outcome):  # it could not even start: a record too
                        outcomes[s.key] = started
                        continue
                    running.append(started)
                    free -= min(s.threads, threads)
            time.sleep(0.05)
            for r in list(running):
                if r.proc.poll() is not None:
                    running.remove(r)
                    outcomes[r.spec.key] = _finish(r)
    except _Stop:
        for r in running:
            r.proc.terminate()
        for r in running:
            try:
                r.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                r.proc.kill()
                r.proc.wait()
            r.log.close()
            r.spec.log.with_name(r.spec.log.name + PARTIAL).unlink(missing_ok=True)  # unfinished: nothing left
        raise
    finally:
        if own_head and head_dir:
            _stop_head(head_dir)
    return [outcomes[s.key] for s in specs]


def _ray_head(todo: list[Spec], threads: int, shared: str | None) -> tuple[str | None, bool]:
    """The Ray head the batch's Solver members join: `shared` when one runs there, else one started
    here for the batch (None, each member then starts its own Ray, when none can start)."""
    from tcsexam.runner.ray import head

    if not any(s.ray for s in todo):
        return None, False
    if shared and head.current_address(shared, wait_s=SHARED_HEAD_WAIT_S):
        _log.info("batch: the Solver runs join the running Ray head of %s", shared)
        return shared, False
    if shared and head.armed(shared):
        _log.info("batch: the Solver runs share the Ray head of %s (started by the first that uses Ray)", shared)
        return shared, False
    state = tempfile.mkdtemp(prefix="tcsexam-batch-ray-")
    try:
        # started by the first member that chooses Ray (one that runs in process never does)
        head.arm(state, threads)
    except (InputError, OSError) as exc:
        _log.warning("batch: no Ray head for the batch (%s): each Solver run starts its own", exc)
        shutil.rmtree(state, ignore_errors=True)
        return None, False
    _log.info("batch: Ray head for the batch armed (%d CPUs, %s)", threads, state)
    return state, True


def _stop_head(state: str) -> None:
    from tcsexam.runner.ray import head

    try:
        head.stop(state, remove_state=True)
    except (InputError, OSError) as exc:
        _log.warning("batch: the batch's Ray head did not stop cleanly: %s", exc)


def _start(s: Spec, head_dir: str | None) -> Running | Outcome:
    """The member's process, or its failure when it cannot start (its folder or log cannot be
    written, its program is missing)."""
    argv = [*s.argv, *(["--ray-head", head_dir] if s.ray and head_dir else [])]
    try:
        s.output.parent.mkdir(parents=True, exist_ok=True)
        s.log.parent.mkdir(parents=True, exist_ok=True)
        log = open(s.log.with_name(s.log.name + PARTIAL), "wb")  # noqa: SIM115 -- closed when the member ends
    except OSError as exc:
        why = f"its folder or log cannot be written: {os_error_text(exc)}"
        _log.error("%s: failed: %s", s.key, why)
        return Outcome(s.key, "failed", None, 0.0, why)
    _log.info("%s: started (%d thread(s))", s.key, s.threads)
    try:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    except OSError as exc:
        why = f"{argv[0]} cannot be started: {os_error_text(exc)}"
        log.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} ERROR   {why}\n".encode())
        log.close()
        os.replace(s.log.with_name(s.log.name + PARTIAL), s.log)
        _log.error("%s: failed: %s", s.key, why)
        return Outcome(s.key, "failed", None, 0.0, why)
    return Running(s, proc, log, time.monotonic())


def _finish(r: Running) -> Outcome:
    r.log.close()
    s, code = r.spec, r.proc.returncode
    wall = time.monotonic() - r.started
    os.replace(s.log.with_name(s.log.name + PARTIAL), s.log)
    if code == 0 and s.output.is_file():
        _log.info("%s: done in %.1f s", s.key, wall)
        return Outcome(s.key, "ok", code, wall)
    why = reason(s.log) if code != 0 else f"it exited 0 without writing {s.output}"
    _log.error("%s: failed (exit code %s) in %.1f s: %s", s.key, code, wall, why)
    return Outcome(s.key, "failed", code, wall, why)


def _run_handler(args: argparse.Namespace) -> int:
    specs = [Spec.parse(m) for m in args.member]
    keys = [s.key for s in specs]
    if len(set(keys)) != len(keys):
        raise UsageError("batch run: a member is listed twice")
    if args.threads < 1:
        raise UsageError(f"batch run: --threads {args.threads} must be >= 1")
    stale = Path(args.output)
    if stale.exists():
        stale.unlink()  # the summary is the batch's result: only a batch that ended writes one
    old = signal.signal(signal.SIGTERM, _on_term)
    started = time.time()
    host = socket.gethostname()
    _log.info(
        "batch: %d member(s) on %d thread(s), host %s, SLURM job %s",
        len(specs),
        args.threads,
        host,
        os.environ.get("SLURM_JOB_ID", "-"),
    )
    try:
        outcomes = run_batch(specs, args.threads, args.ray_head)
    except _Stop:
        _log.error("batch: stopped (SIGTERM) before every member ended; the finished ones are staged")
        return 143
    finally:
        signal.signal(signal.SIGTERM, old)
    failed = [o for o in outcomes if o.status == "failed"]
    summary = {
        "host": host,
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "threads": args.threads,
        "wall_s": round(time.time() - started, 3),
        "members": [
            {"key": o.key, "status": o.status, "code": o.code, "wall_s": round(o.wall_s, 3), "reason": o.reason}
            for o in outcomes
        ],
    }
    atomic_write_json(args.output, summary)
    _log.info("batch: %d member(s) ended, %d failed (%s)", len(outcomes), len(failed), args.output)
    return 0


def _take_handler(args: argparse.Namespace) -> int:
    output, log = Path(args.output), Path(args.log)
    staged_out, staged_log = output.with_name(output.name + STAGED), log.with_name(log.name + STAGED)
    if staged_out.is_file():
        if staged_log.is_file():
            os.replace(staged_log, log)
        os.replace(staged_out, output)
        return 0
    why = _member_reason(Path(args.summary), args.key) or "the batch left no output for it"
    text = staged_log.read_text(errors="replace") if staged_log.is_file() else ""
    log.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(log, "w") as fh:
        fh.write(text + ("" if not text or text.endswith("\n") else "\n"))
        fh.write(f"{stamp} ERROR   tcsexam batch take: {args.key} (batch {args.summary}): {why}\n")
    print(f"tcsexam batch take: {args.key}: {why}", file=sys.stderr)
    return 1


def _member_reason(summary: Path, key: str) -> str | None:
    try:
        data = json.loads(summary.read_text())
    except (OSError, ValueError):
        return None
    for m in data.get("members", []) if isinstance(data, dict) else []:
        if isinstance(m, dict) and m.get("key") == key:
            return str(m.get("reason") or f"exit code {m.get('code')}")
    return None


def register(sub) -> None:
    top = sub.add_parser("batch", help="(the workflow's rules) run several cluster jobs as one: batch run | take")
    acts = top.add_subparsers(dest="batch_command", metavar="ACTION", required=True)
    p = acts.add_parser("run", help="run a batch's members (each its own rule's command), write the batch's summary")
    p.add_argument(
        "--member", action="append", required=True, metavar="JSON", help="key, argv, threads, output, log, ray"
    )
    p.add_argument("--threads", type=int, required=True, help="the batch's CPUs: members run at once up to this")
    p.add_argument("--output", required=True, help="the batch's summary (JSON), written once every member has ended")
    p.add_argument("--ray-head", metavar="DIR", help="a shared Ray head to join when it runs (else one for the batch)")
    p.set_defaults(handler=_run_handler)
    t = acts.add_parser("take", help="move one member's staged output and log into place, or fail with its reason")
    t.add_argument("--summary", required=True, help="the batch's summary")
    t.add_argument("--key", required=True, help="the member (kind/model/item/attempt)")
    t.add_argument("--output", required=True, help=f"the output its own rule declares (staged as OUTPUT{STAGED})")
    t.add_argument("--log", required=True, help=f"the log its own rule declares (staged as LOG{STAGED})")
    t.set_defaults(handler=_take_handler)
