"""The `tcsexam` console script: a short command of a local workflow run goes to the run's fork
server (`tcsexam.forkserver`), anything else runs here (`tcsexam.cli.run_command`).

A workflow job is one process: a row job's 0.2 s is nearly all Python start and imports, its own
work a few milliseconds. When the run's Snakemake started a fork server it names it in the
environment (`ENV`: a random token and the path of a socket only this user can reach, under a
/tmp that no sandbox shows its candidates, and a candidate never sees the harness's environment,
so never the token); this process then sends the server the token, its command line, working folder,
environment, umask and standard streams, and the server forks a warm copy of itself that runs the
command exactly as this process would have, in its own process group. This process waits for it,
forwards the signals it gets (a Snakemake that cancels the job, a Ctrl-C), and ends the way the
command ended: the same exit code, or the same signal. When it goes away unannounced (SIGKILL) the
command gets SIGTERM and, 5 s later, SIGKILL, with everything in its process group.

Nothing but C modules is imported on the way (`_socket` and `_signal` rather than `socket` and
`signal`, whose enum wrappers are 15 ms of every job's start; the request is `marshal`led, where
json would import re and enum): a command the server does not
serve (`SERVED`), no server, a server that refuses (this process is not one of its run's jobs,
or does not have its token) or one that cannot be reached cost a few milliseconds before the
command runs here.
"""

from __future__ import annotations

import _signal
import _socket
import marshal
import os
import struct
import sys

#: the environment variable naming the run's fork server, `TOKEN:SOCKET` (set by the workflow,
#: see rules/common.smk; unset: every command runs in its own process)
ENV = "TCSEXAM_FORK_SERVER"
#: the token's length: 32 hex digits
TOKEN_SIZE = 32

#: the command words a fork server runs: jobs that leave nothing running in their process group
#: and whose rules have no `benchmark:` (Snakemake measures a job's CPU and memory from its own
#: process tree, which a served command is not part of: `run` writes its own in heartbeat.json's
#: `usage`; the shared Ray head it may start is a session of its own). `batch`, `runner` (a Ray
#: head outlives the command) and the agents and OR-Space commands always run in their own process.
SERVED = frozenset(
    {
        "run",
        "attempts",
        "proof",
        "construction",
        "scan-candidate",
        "score",
        "solver-score",
        "job-failed",
        "view",
        "manifest",
    }
)

#: the server's answer to a request: it runs the command, or this process must (not its run's job)
ACCEPTED, REFUSED = b"A", b"R"
#: before the request: the token and the request's length (with the standard streams as
#: SCM_RIGHTS); after the command: its exit status
HEADER = struct.Struct(f"!{TOKEN_SIZE}sI")
STATUS = struct.Struct("!i")
#: the signals this process passes on to the command's process group
FORWARDED = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGQUIT, _signal.SIGUSR1, _signal.SIGUSR2)


def served(words: list[str]) -> bool:
    """Whether the fork server runs `tcsexam WORDS...` (its command word is in `SERVED`)."""
    command = next((w for w in words if not w.startswith("-")), None)
    return command in SERVED


def receive_exactly(sock: _socket.socket, size: int) -> bytes:
    """`size` bytes from `sock`, fewer only when it closes first."""
    data = b""
    while len(data) < size:
        part = sock.recv(size - len(data))
        if not part:
            break
        data += part
    return data


def _open_streams() -> list[int]:
    """Which of the standard streams 0, 1, 2 this process has."""
    found = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


def software() -> list[str]:
    """The Python and the tcsexam this process runs: a server runs a command only for a client of
    the same two (a job in a conda environment of its own, `--sdm conda`, runs its own)."""
    return [os.path.realpath(sys.executable), os.path.realpath(__file__)]


def request_of_this_process(argv: list[str]) -> dict[str, object]:
    """What the server needs to run `argv` as this process would: the working folder, the whole
    environment, the umask, the standard streams it gets, the signals this process ignores; and
    the software it runs."""
    mask = os.umask(0o022)
    os.umask(mask)
    return {
        "software": software(),
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": mask,
        "streams": _open_streams(),
        "ignored": [int(s) for s in FORWARDED if _signal.getsignal(s) == _signal.SIG_IGN],
    }


def through_server(address: str, argv: list[str]) -> int | None:
    """Run `argv` in the fork server at `address` (`TOKEN:SOCKET`): the command's exit code
    (negative: killed by that signal), or None when this process must run it itself (no server
    there, or it refused)."""
    token, _, path = address.partition(":")
    if len(token) != TOKEN_SIZE or not path:
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(path)
        request = request_of_this_process(argv)
        body = marshal.dumps(request)
        streams = request["streams"]
        assert isinstance(streams, list)
        rights = struct.pack(f"{len(streams)}i", *streams)  # socket.send_fds's SCM_RIGHTS message
        sock.sendmsg([HEADER.pack(token.encode(), len(body))], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        sock.sendall(body)
        answer = receive_exactly(sock, 1)
    except OSError:  # no server (yet, or any more), a deleted working folder: run it here
        sock.close()
        return None
    if answer != ACCEPTED:
        sock.close()
        return None

    def forward(signum: int, _frame: object) -> None:
        try:
            sock.send(bytes([signum]))
        except OSError:
            pass

    for signum in FORWARDED:
        if _signal.getsignal(signum) != _signal.SIG_IGN:
            _signal.signal(signum, forward)
    try:
        end = receive_exactly(sock, STATUS.size)
    except OSError:
        end = b""
    if len(end) < STATUS.size:
        sys.stderr.write(f"tcsexam: the fork server at {path} ended before the command did (infrastructure)\n")
        return 1
    return int(STATUS.unpack(end)[0])


def end_like(code: int) -> None:
    """End this process as the command ended: its exit code, or its signal."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if code < 0:
        _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code  # a signal that does not end a process (none of the forwarded ones)
    raise SystemExit(code)


def run_command() -> None:
    """The console script."""
    address = os.environ.get(ENV)
    if address and served(sys.argv[1:]):
        code = through_server(address, sys.argv)
        if code is not None:
            end_like(code)
    from tcsexam.cli import run_command as run_here

    run_here()
