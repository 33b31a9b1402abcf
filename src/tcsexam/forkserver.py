"""One warm process that starts a local run's short `tcsexam` commands by fork.

A workflow job is one process, and for the short ones (a row, a proof check's bookkeeping around
Coq, a construction check) Python's start and imports are most of it: 0.2 s of a 0.22 s row job.
The workflow's Snakemake starts this server once (`start`, from `tcsexam.workflow.startup.prepare`
while the Snakefile is read: for a local run's jobs, and a cluster run's jobs on the submitting
host); it imports what those commands need (`PRELOAD`) and then listens on a socket in a fresh
private folder under /tmp
(mode 0700; bubblewrap, Apptainer and Docker give their candidates a /tmp of their own, and a
root harness runs them as another user). The `tcsexam` console script (`tcsexam.launch`) of a job
whose command is `SERVED` connects and sends a token, its command line, folder, environment,
umask and standard streams; the server forks a handler, which

1. refuses (the client then runs the command itself) unless the client runs as this user,
   descends from the server's owner (the run's Snakemake: a cluster job or another run's command
   never runs here, outside its own cgroup, limits or node) and sends the token that only the
   harness's environment holds (a candidate, also a descendant, never sees that environment), and
   runs the server's own Python and tcsexam (a job in a conda environment of its own runs its own);
2. forks the command's process, which takes the client's streams, folder, environment, umask and
   argv, puts itself in a process group of its own, dies with its handler (PR_SET_PDEATHSIG),
   and returns up to `main`, which runs `tcsexam.cli.run_command` as a fresh `tcsexam` would
   (the interpreter's normal exit: atexit, threads, flushes);
3. passes on the signals the client forwards to the command's process group; when the client goes
   away unannounced, sends it SIGTERM, then SIGKILL after `GRACE_S`; when the command ends,
   SIGKILLs whatever is left in its process group (nothing a served command starts outlives it)
   and sends the client the exit status.

In a run of candidates a child of the server measures the machine once for the run's Solver and
construction jobs (`measure_machine`; tcsexam.runner.observers.calibrate), so that they do not
each spend 0.3 s of their core on it.

The server ends when its owner does (checked every second) or on SIGTERM (`stop`). A failure to
start costs nothing but the speed: every client falls back to running its command itself.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import hmac
import importlib
import marshal
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tcsexam.cli import run_command
from tcsexam.containment import Limiter
from tcsexam.launch import ACCEPTED, ENV, HEADER, REFUSED, STATUS, TOKEN_SIZE, receive_exactly, software
from tcsexam.proofs import check
from tcsexam.runner.limiter.proctable import read_stat, stop_being_subreaper
from tcsexam.runner.observers import calibrate
from tcsexam.runner.sandboxes import choose_sandbox, probe_python

#: what the served commands import, loaded once by the server before it listens (a command still
#: imports anything missing here itself, at its usual cost). No module here may read the
#: environment when imported: a served command gets its own environment only after the fork
#: (tests/unit/test_forkserver.py checks).
PRELOAD = (
    "tcsexam.cli",
    "tcsexam.attempts.cli",
    "tcsexam.attempts.rows",
    "tcsexam.attempts.verdicts",
    "tcsexam.attempts.construction",
    "tcsexam.attempts.construction_cli",
    "tcsexam.proofs.cli",
    "tcsexam.proofs.check",
    "tcsexam.runner.construction",
    "tcsexam.runner.engine.batch",
    "tcsexam.runner.solver.orchestrate",
    "tcsexam.runner.cli",  # run: the Solver job
    "tcsexam.runner.observers.heartbeat",
    "tcsexam.runner.sandboxes.bwrap",
    "tcsexam.runner.sandboxes.local",
    "tcsexam.twins.cli",
    "tcsexam.twins.scan",
    "tcsexam.scoring.cli",
    "tcsexam.jobfail",
    "tcsexam.suites",
    "tcsexam.tasks",
    "scipy.special",  # the Solver row's score (0.1 s to import)
)

#: how long a command whose client went away gets after SIGTERM before SIGKILL
GRACE_S = 5.0
#: how often the server checks that its owner is still there
OWNER_CHECK_S = 1.0
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Server:
    """A started fork server: the socket its clients connect to, its process, its folder, and
    the value of `ENV` that names it (`TOKEN:SOCKET`)."""

    socket: str
    process: subprocess.Popen[bytes]
    folder: str
    address: str


@dataclass(frozen=True)
class Warm:
    """The run's sandbox settings (config `run`), for `warm`: what its commands will check."""

    sandbox: str
    limiter: str
    allow_unsandboxed: bool = False
    proofs: bool = False  #: the run checks proofs (coqc inside the sandbox)
    candidates: bool = False  #: the run runs candidates: the machine measured once for its jobs

    def argv(self) -> list[str]:
        return [
            "--sandbox",
            self.sandbox,
            "--limiter",
            self.limiter,
            *(["--allow-unsandboxed"] if self.allow_unsandboxed else []),
            *(["--proofs"] if self.proofs else []),
            *(["--candidates"] if self.candidates else []),
        ]


def warm(settings: Warm) -> str:
    """In the server, before it listens: what each sandboxed command checks before its first run
    (the sandbox starts a test program, python3 inside imports the candidates' promised modules,
    coqc inside answers) done once, so that the commands forked later find it done (0.1-0.2 s
    each). Only what passed is kept: a command meets a failure itself, with its own message.
    Returns what it did, for the log."""
    began = time.monotonic()
    done = []
    try:
        limiter = Limiter(settings.limiter)
        box, _ = choose_sandbox(settings.sandbox, allow_unsandboxed=settings.allow_unsandboxed)
        done.append(f"sandbox {box.name}")
        if probe_python(box, limiter=limiter) is None:
            done.append("python3 inside")
        if settings.proofs:
            check.choose_proof_sandbox(settings.sandbox, allow_unsandboxed=settings.allow_unsandboxed, limiter=limiter)
            done.append("coqc inside")
    except Exception as exc:  # the commands find it out again, each with its one line
        done.append(f"stopped: {' '.join(str(exc).split())[:200]}")
    finally:
        check.forget_failed_probes()
        stop_being_subreaper()  # the probes ran under the limiter: orphans of commands go to init
    return f"checked {', '.join(done) or 'nothing'} in {time.monotonic() - began:.2f} s"


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def measure_machine(path: str, listener: socket.socket) -> None:
    """In the server, once it listens: a child of its own measures the machine for the run's
    Solver and construction jobs (`calibrate.measure_for_run`, beside the socket) while the server
    serves; every job forked from now on looks for that file (`calibrate.run_file`) and measures
    itself while there is none."""
    try:
        child = os.fork()
    except OSError as exc:
        _say(f"no calibration for the run: {exc}")
        return
    if child == 0:
        code = 1
        try:
            listener.close()
            _die_with_parent()
            began = time.monotonic()
            calibrate.measure_for_run(path)
            _say(f"measured the machine for the run's jobs in {time.monotonic() - began:.2f} s")
            code = 0
        except BaseException as exc:
            _say(f"no calibration for the run: {exc!r}")
        finally:
            os._exit(code)
    calibrate.run_file = Path(path)


def start(log: str | os.PathLike[str], settings: Warm | None = None) -> Server:
    """Start a fork server for the commands run by this process's descendants, its output
    appended to `log`; with `settings`, it checks the run's sandbox once first (`warm`). Its
    socket is in a new folder under /tmp, never $TMPDIR: every sandbox gives its candidates a /tmp
    of their own, while a $TMPDIR elsewhere (a cluster's scratch) may be visible inside."""
    folder = tempfile.mkdtemp(prefix="tcsexam-fork-", dir="/tmp")
    path = os.path.join(folder, "socket")
    address = f"{secrets.token_hex(TOKEN_SIZE // 2)}:{path}"
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-P",
                "-m",
                "tcsexam.forkserver",
                "--owner",
                str(os.getpid()),
                *(settings.argv() if settings else []),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env={**os.environ, ENV: address},  # the token never on a command line
            start_new_session=True,  # a Ctrl-C reaches the clients, which forward it; not the server
        )
    return Server(path, process, folder, address)


def stop(server: Server) -> None:
    """Stop the server (a command it is running goes on to its end) and remove its folder."""
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    shutil.rmtree(server.folder, ignore_errors=True)


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether process `pid` is `ancestor` or one of its descendants (/proc's parent links)."""
    for _ in range(256):
        if pid == ancestor:
            return True
        proc = read_stat(pid) if pid > 1 else None
        if proc is None:
            return False
        pid = proc.ppid
    return False


def _peer(conn: socket.socket) -> tuple[int, int]:
    """The client's pid and uid (SO_PEERCRED, as the kernel saw them at connect)."""
    pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid, uid


@dataclass(frozen=True)
class Command:
    """A client's command, as received, run in the process that `enter`s it."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    umask: int
    streams: dict[int, int]  # the client's stream number -> the received descriptor
    ignored: list[int]

    def enter(self) -> None:
        """Become the client's command: its process group, streams, folder, environment, umask,
        signal dispositions and argv; die with the handler."""
        os.setpgid(0, 0)
        _die_with_parent()
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for ignored in self.ignored:
            signal.signal(ignored, signal.SIG_IGN)
        for target in (0, 1, 2):
            source = self.streams.get(target)
            if source is None:
                source = os.open(os.devnull, os.O_RDWR)
            os.dup2(source, target)
            if source > 2:
                os.close(source)
        os.chdir(self.cwd)
        os.umask(self.umask)
        os.environ.clear()
        os.environ.update(self.env)
        sys.argv = list(self.argv)


def _receive(conn: socket.socket, token: bytes) -> Command:
    """The client's request and its standard streams; ValueError when its token is not `token`
    (nothing of the request is decoded then)."""
    head, fds, _flags, _address = socket.recv_fds(conn, HEADER.size, 3)
    head += receive_exactly(conn, HEADER.size - len(head))
    given, size = HEADER.unpack(head)
    if not hmac.compare_digest(given, token):
        for fd in fds:
            os.close(fd)
        raise ValueError("a wrong token")
    request = marshal.loads(receive_exactly(conn, size))
    if request["software"] != software():
        for fd in fds:
            os.close(fd)
        raise ValueError(f"another Python or tcsexam: {request['software']}")
    streams = [int(n) for n in request["streams"]]
    if len(streams) != len(fds):
        raise ValueError(f"{len(fds)} descriptors for the streams {streams}")
    return Command(
        argv=[str(a) for a in request["argv"]],
        cwd=str(request["cwd"]),
        env={str(k): str(v) for k, v in request["env"].items()},
        umask=int(request["umask"]),
        streams=dict(zip(streams, fds)),
        ignored=[int(s) for s in request["ignored"]],
    )


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except OSError:  # the group is gone, or the number is no signal
        pass


def _watch(conn: socket.socket, pid: int) -> int:
    """In the handler: pass the client's signals on to the command's process group until the
    command ends; its wait status. The client gone: SIGTERM, then SIGKILL after GRACE_S."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.register(conn, select.POLLIN)
    kill_at: float | None = None
    while True:
        timeout = None if kill_at is None else max(0, int((kill_at - time.monotonic()) * 1000))
        ready = {fd for fd, _ in poller.poll(timeout)}
        if pidfd in ready:
            break
        if conn.fileno() in ready:
            try:
                data = conn.recv(64)
            except OSError:
                data = b""
            if data:
                for signum in data:
                    _signal_group(pid, signum)
            else:
                poller.unregister(conn)
                _signal_group(pid, signal.SIGTERM)
                kill_at = time.monotonic() + GRACE_S
        if kill_at is not None and time.monotonic() >= kill_at:
            _signal_group(pid, signal.SIGKILL)
            kill_at = None
    # the command is a zombie and its pid still names its group: sweep what it left running
    _signal_group(pid, signal.SIGKILL)
    os.close(pidfd)
    return os.waitpid(pid, 0)[1]


def _handle(conn: socket.socket, owner: int, token: bytes) -> Command:
    """In the handler (a fork of the server per connection): the command, in the process that
    runs it; the handler itself never returns (it ends with os._exit)."""
    try:
        pid, uid = _peer(conn)
        if uid != os.getuid() or not descends_from(pid, owner):
            _say(f"refused pid {pid} (uid {uid}): not a process of this run")
            conn.sendall(REFUSED)
            os._exit(0)
        command = _receive(conn, token)  # marshal: only from a process of this run that has the token
        child = os.fork()
    except Exception as exc:  # a broken request, no fork: the client runs its command itself
        _say(f"not run: {exc!r}")
        try:
            conn.sendall(REFUSED)
        finally:
            os._exit(1)
    if child == 0:
        conn.close()
        return command
    code = 1
    try:
        try:
            os.setpgid(child, child)  # as the child does: a signal forwarded at once finds its group
        except OSError:
            pass
        for fd in command.streams.values():
            os.close(fd)
        began = time.monotonic()
        try:
            conn.sendall(ACCEPTED)
        except OSError:  # the client is gone: _watch ends the command
            pass
        status = os.waitstatus_to_exitcode(_watch(conn, child))
        words = " ".join([w for w in command.argv[1:] if not w.startswith("-")][:2])
        # the log's line before the client's answer: once the job has ended, its line is there
        _say(f"tcsexam {words} (pid {child}): exit {status} after {time.monotonic() - began:.3f} s")
        try:
            conn.sendall(STATUS.pack(status))
        except OSError:
            pass
        code = 0
    finally:
        os._exit(code)


def _say(line: str) -> None:
    """One line of the server's log (its stderr): UTC time, then `line`."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        os.write(2, f"{stamp} {line}\n".encode())
    except OSError:
        pass


def serve(address: str, owner: int, settings: Warm | None = None) -> Command | None:
    """Preload (and `warm` with `settings`), listen on the socket of `address` (`TOKEN:SOCKET`),
    have the machine measured for a run of candidates (`measure_machine`), fork a handler per
    connection while `owner` lives. Returns in a command's process only (its
    Command); None in the server when it ends."""
    token_text, _, path = address.partition(":")
    token = token_text.encode()
    began = time.monotonic()
    for name in PRELOAD:
        importlib.import_module(name)
    if settings is not None:
        _say(warm(settings))
    gc.freeze()  # the commands' collector skips what the server holds: exits 56 -> 18 ms, pages stay shared
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # after the imports: a client before this runs its command itself
    listener.listen(128)
    _say(
        f"listening on {path} for pid {owner}'s jobs; {len(sys.modules)} modules loaded in {time.monotonic() - began:.2f} s"
    )
    measured = os.path.join(os.path.dirname(path), calibrate.FILE_NAME)
    if settings is not None and settings.candidates:
        measure_machine(measured, listener)
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    try:
        while os.getppid() == owner:
            if poller.poll(int(OWNER_CHECK_S * 1000)):
                conn, _ = listener.accept()
                try:
                    handler = os.fork()
                except OSError as exc:  # the client hears nothing and runs its command itself
                    _say(f"cannot fork a handler: {exc}")
                    handler = -1
                if handler == 0:
                    listener.close()
                    return _handle(conn, owner, token)
                conn.close()
            while True:  # reap the handlers that ended
                try:
                    if os.waitpid(-1, os.WNOHANG)[0] == 0:
                        break
                except ChildProcessError:
                    break
    finally:
        listener.close()
    for remove, item in ((os.unlink, path), (os.unlink, measured), (os.rmdir, os.path.dirname(path))):
        try:
            remove(item)
        except OSError:
            pass
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcsexam.forkserver", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--owner", type=int, required=True, help="the run's process, this one's parent: serve its descendants only"
    )
    parser.add_argument("--sandbox", help="the run's sandbox (config run.sandbox): check it once (`warm`)")
    parser.add_argument("--limiter", default="auto", help="the run's limiter (config run.limiter)")
    parser.add_argument("--allow-unsandboxed", action="store_true", help="config run.allow_unsandboxed")
    parser.add_argument("--proofs", action="store_true", help="the run checks proofs: check coqc inside too")
    parser.add_argument(
        "--candidates", action="store_true", help="the run runs candidates: measure the machine once for its jobs"
    )
    args = parser.parse_args(argv)
    settings = None
    if args.sandbox:
        settings = Warm(args.sandbox, args.limiter, args.allow_unsandboxed, args.proofs, args.candidates)
    command = serve(os.environ[ENV], args.owner, settings)
    if command is None:
        return 0
    command.enter()
    run_command(forked=True)
    return 0


__all__ = ["ENV", "PRELOAD", "Server", "Warm", "descends_from", "measure_machine", "serve", "start", "stop", "warm"]

if __name__ == "__main__":
    sys.exit(main())
