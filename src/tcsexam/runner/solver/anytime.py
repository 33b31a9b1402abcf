"""Anytime traces: every certificate a candidate writes during its run, stamped and checked.

A task with `anytime: true` lets its candidate rewrite `{solution}` as often as it likes, or write
numbered files into `{trace_dir}` (`{workdir}/trace`, created for anytime tasks). While the program
runs, a watcher thread notices each new certificate (inotify through ctypes: IN_CLOSE_WRITE and
IN_MOVED_TO, so a file is read once its writer closed or renamed it; where inotify is unavailable,
a poll of the files every `POLL_S`), reads it safely (`read_untrusted`: no symbolic link, FIFO or
device is followed or blocks; at most the output cap) and stamps it with the harness's clock at
the moment it was read, in seconds from the program's `go`. A stamp is therefore an upper bound of
when the certificate existed (the resolution is the watcher's latency: about a millisecond with
inotify, `POLL_S` when polling). Identical consecutive contents count once.

Bounded: time is cut into geometric buckets (the first `FIRST_BUCKET_S`, then each `GROWTH` times
longer than the one before); each bucket keeps its first and its last certificate, so a run keeps
at most 2 per bucket (2 x 67 for a 5 s limit, 2 x 93 for 60 s) and at most `MAX_KEPT_BYTES` of copies. The
final certificate (present when the program ended on its own) is always kept, stamped no later than
the program's end. Stamps past the wall limit (e.g. written in a SIGTERM handler) are dropped.

After the run each kept certificate is checked with the task's checker: the record carries
`trace: [[t, status, value], ...]` in stamp order (`value` the verified objective, or 1/0 solved
for solve tasks; null unless `status` is ok) and `extra.trace_info` (certificates seen, kept,
watch mode). The record's own outcome is decided exactly as for any task.

The clock: `tcsexam.runner.limiter.go.note_go` is called by the limiter at the program's `go`
(and by the docker sandbox once its start call returned, where its wall limit starts too: the
program may have begun a few ms before, so a docker stamp is an upper bound on the limit's clock,
not on the program's own); captures keep the raw monotonic reading and are converted at the end,
a certificate read before `go` getting 0. A sandbox that never calls it is stamped from the
watcher's start, which is earlier than `go`: stamps are then later than the truth, never
earlier.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import math
import os
import select
import struct
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tcsexam.fileio import Json, JsonObject, UntrustedFileError, close_later, read_untrusted_at
from tcsexam.fileio import read_untrusted as read_file
from tcsexam.records import Termination
from tcsexam.runner.limiter.go import listening

TRACE_DIR_NAME = "trace"
FIRST_BUCKET_S = 0.01
GROWTH = 1.1
POLL_S = 0.02
MAX_KEPT_BYTES = 256 * 1024 * 1024
#: part of the record key of an anytime task (a change in what a trace holds reruns it)
KEY_VERSION = 1

_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_Q_OVERFLOW = 0x00004000
_EVENT = struct.Struct("iIII")


def read_untrusted(path: str | os.PathLike, cap: int, *, dir_fd: int | None = None) -> bytes | None:
    """A candidate-controlled file's bytes (at most `cap` + 1), or None when it is missing or not a
    plain regular file (a link, FIFO, device, folder, hard link): `tcsexam.fileio`'s safe read,
    relative to `dir_fd` when given. A trace never fails the run, so every refusal is None."""
    try:
        if dir_fd is None:
            return read_file(path, cap)
        return read_untrusted_at(dir_fd, os.fspath(path), cap)
    except (UntrustedFileError, OSError):
        return None


def bucket_of(t: float) -> int:
    """The time bucket of stamp `t` (0: the first FIRST_BUCKET_S)."""
    if t < FIRST_BUCKET_S:
        return 0
    return 1 + int(math.floor(math.log(t / FIRST_BUCKET_S) / math.log(GROWTH)))


@dataclass
class Capture:
    t: float
    data: bytes
    digest: str


@dataclass
class TraceKeeper:
    """The bounded set of certificates kept for checking: first and last of each time bucket."""

    max_bytes: int = MAX_KEPT_BYTES
    origin: float = 0.0  #: the clock reading that bucket 0 starts at
    seen: int = 0
    dropped: int = 0
    slots: dict[tuple[int, int], Capture] = field(default_factory=dict)
    kept_bytes: int = 0
    last_digest: str | None = None

    def offer(self, t: float, data: bytes, *, final: bool = False) -> None:
        digest = hashlib.sha256(data).hexdigest()
        if digest == self.last_digest:
            return
        self.last_digest = digest
        self.seen += 1
        b = bucket_of(t - self.origin)
        key = (b, 0) if (b, 0) not in self.slots else (b, 1)
        old = self.slots.get(key)
        freed = len(old.data) if old is not None else 0
        if not final and self.kept_bytes - freed + len(data) > self.max_bytes:
            self.dropped += 1
            return
        self.slots[key] = Capture(t, data, digest)
        self.kept_bytes += len(data) - freed

    def captures(self) -> list[Capture]:
        return sorted(self.slots.values(), key=lambda c: c.t)


@functools.cache
def _libc():
    """The C library's symbols (this process's own: no `find_library` subprocess per run)."""
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _inotify():
    """(libc, fd) for an inotify instance, or None where there is none."""
    libc = _libc()
    try:
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC) if libc is not None else -1
    except AttributeError:  # no inotify in this C library
        return None
    return (libc, fd) if fd >= 0 else None


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


class TraceWatch:
    """Watches one run's `{solution}` and `{trace_dir}` from a thread (see the module doc).

    Both folders are opened once, before the program starts, and every read is relative to those
    descriptors: a candidate that later swaps a folder for a symbolic link is not followed."""

    def __init__(self, solution: Path, trace_dir: Path, cap: int, wall_s: float, *, use_inotify: bool = True):
        self.solution_name, self.cap, self.wall_s = solution.name, cap, wall_s
        self.go: float | None = None  # set by `note_go` at the program's go
        self.started = time.monotonic()
        self.keeper = TraceKeeper(origin=self.started)  # captures hold the raw clock; `trace` converts
        self.harness_cpu_s = 0.0
        self._final_at: float | None = None
        self._work_fd = _open_dir(solution.parent)
        self._trace_fd = _open_dir(trace_dir)
        self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC)
        self._seen: dict[tuple[bool, str], tuple[int, int, int]] = {}
        self._notify = _inotify() if use_inotify else None
        self._wds: dict[int, bool] = {}  # watch descriptor -> is the trace folder
        self.mode = "poll"
        if self._notify is not None:
            libc, fd = self._notify
            mask = _IN_CLOSE_WRITE | _IN_MOVED_TO
            for folder, is_trace in ((solution.parent, False), (trace_dir, True)):
                self._wds[libc.inotify_add_watch(fd, str(folder).encode(), mask)] = is_trace
            if min(self._wds) >= 0:
                self.mode = "inotify"
            else:
                os.close(fd)
                self._notify = None
        self._thread = threading.Thread(target=self._loop, name="tcsexam-anytime", daemon=True)
        self._thread.start()

    def note_go(self, t: float) -> None:
        """The program starts now (`t`: time.monotonic()): stamps count from here."""
        self.go = t

    def _base(self) -> float:
        return self.go if self.go is not None else self.started

    def _capture(self, is_trace: bool, name: str, *, final: bool = False) -> None:
        data = read_untrusted(name, self.cap, dir_fd=self._trace_fd if is_trace else self._work_fd)
        if data is None or len(data) > self.cap:
            return
        now = time.monotonic()
        self.keeper.offer(now if self._final_at is None else min(now, self._final_at), data, final=final)

    def _scan(self) -> None:
        """Poll mode (and an overflowed event queue): read every file whose (inode, size, mtime)
        changed, the solution first, the trace folder's files in name order."""
        entries = [(False, self.solution_name)]
        try:
            entries += [(True, n) for n in sorted(os.listdir(self._trace_fd))]
        except OSError:
            pass
        for is_trace, name in entries:
            try:
                st = os.stat(name, dir_fd=self._trace_fd if is_trace else self._work_fd, follow_symlinks=False)
            except OSError:
                continue
            sig = (st.st_ino, st.st_size, st.st_mtime_ns)
            if self._seen.get((is_trace, name)) != sig:
                self._seen[(is_trace, name)] = sig
                self._capture(is_trace, name)

    def _events(self, fd: int) -> None:
        while True:
            try:
                buf = os.read(fd, 65536)
            except BlockingIOError:
                return
            pos = 0
            while pos + _EVENT.size <= len(buf):
                wd, mask, _, length = _EVENT.unpack_from(buf, pos)
                raw = buf[pos + _EVENT.size : pos + _EVENT.size + length]
                pos += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    self._scan()
                    continue
                name = raw.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
                is_trace = self._wds.get(wd)
                if is_trace or (is_trace is False and name == self.solution_name):
                    self._capture(is_trace, name)

    def _loop(self) -> None:
        cpu0 = time.thread_time()
        poller = select.poll()
        poller.register(self._stop_r, select.POLLIN)
        if self._notify is not None:
            poller.register(self._notify[1], select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll(None if self._notify is not None else POLL_S * 1000)}
            if self._stop_r in ready:
                break
            if self._notify is not None:
                self._events(self._notify[1])
            else:
                self._scan()
        self.harness_cpu_s = time.thread_time() - cpu0

    def stop(self, wall_s: float | None, ended_on_its_own: bool) -> None:
        """Stop the thread and take what the program left: what is read now, after its end, is
        stamped no later than that end when it ended on its own (nothing wrote since), else at the
        read (and so dropped past the limit)."""
        os.write(self._stop_w, b"x")
        self._thread.join()
        if ended_on_its_own and wall_s is not None:
            self._final_at = self._base() + wall_s
        try:
            if self._notify is not None:
                self._events(self._notify[1])
            else:
                self._scan()
            self._capture(False, self.solution_name, final=True)
        finally:
            for fd in (self._stop_w, self._stop_r, self._work_fd, self._trace_fd):
                os.close(fd)
            if self._notify is not None:
                close_later(self._notify[1])  # an inotify close waits 8-17 ms for the kernel

    def trace(self, check) -> tuple[list[list[Json]], JsonObject]:
        """Check every kept certificate (`check(bytes) -> (status, value)`) in stamp order."""
        rows, verdicts, base = [], {}, self._base()
        for cap in self.keeper.captures():
            t = max(0.0, cap.t - base)  # read before go (docker: the program starts first): 0
            if t > self.wall_s:
                continue
            if cap.digest not in verdicts:
                verdicts[cap.digest] = check(cap.data)
            status, value = verdicts[cap.digest]
            rows.append([round(t, 6), status, value])
        info = {
            "watch": self.mode,
            "certificates_seen": self.keeper.seen,
            "kept": len(rows),
            "dropped_over_bytes": self.keeper.dropped,
            "harness_cpu_s": round(self.harness_cpu_s, 6),
            "clock": "go" if self.go is not None else "watch_start",
        }
        return rows, info


@contextmanager
def watching(task, work: Path, solution: Path, limits):
    """Around one run: a TraceWatch when the task is anytime (None otherwise)."""
    if not task.anytime:
        yield None
        return
    trace_dir = work / TRACE_DIR_NAME
    trace_dir.mkdir(exist_ok=True)
    watch = TraceWatch(solution, trace_dir, limits.output_bytes, float(limits.wall_s))
    try:
        with listening(watch.note_go):
            yield watch
    finally:
        if watch._thread.is_alive():  # the run failed before `attach`
            watch.stop(None, False)


def attach(watch: TraceWatch | None, record, check) -> None:
    """Put the run's checked trace on its record (`check(bytes) -> (status, value)`)."""
    if watch is None:
        return
    ended = record.termination == Termination.EXIT
    watch.stop(record.wall_s, ended)
    record.trace, record.extra["trace_info"] = watch.trace(check)
