"""Scratch folders that only their owner, or the owner's death, lets anybody remove.

Every run's scratch folder is ``<root>/tcsexam-run-<machine>-<owner token>-<kind><n>-<random>``
(`<machine>`: this host and pid namespace; the token: `ownership.owner.owner_token`, random per
harness process, never a pid). The process that makes it (`make_scratch`) holds an exclusive
``flock`` on the folder itself (its directory descriptor) for as long as the folder is in use,
and removes it with `release_scratch`. The kernel drops that lock when the process dies, however
it dies (SIGKILL, OOM kill). A folder is removed by anybody else only after taking its lock:

- `sweep_dead_scratch(root)` (every pool at its start): every folder of this machine whose lock
  is free, i.e. whose owner is dead;
- `remove_run_scratch(token, root, wait_s)` (the driver, after an actor died; the actor itself
  when its raylet died): the folders of that owner, again only those whose lock it can take,
  waiting a little for the locks of a process still dying (a folder of this very process, whose
  descriptor it holds, is released directly).

A pid is never consulted, so a reused pid (the counter wrapped and another job's actor got the
pid of one that just died) cannot make a live run's folder look dead. A folder is made under a
staging name (``.tcsexam-new-...``), locked, then renamed into place (the lock is on the inode,
so it survives the rename): a folder under its final name is always locked from its first moment.
A staging folder whose owner died between the two steps is swept once it is an hour old and
unlocked. On a file system where a directory cannot be locked (some NFS set-ups), the lock is
taken on a file ``.tcsexam-owner`` inside the folder instead, and the sweep looks there too.
A folder that can be locked neither way is never removed by a sweep.

`scratch_identity(path)` and `scratch_intact(path, identity)` let the run check afterwards that
its folders are still the ones it made (same device and inode, reached without a link): a folder
that vanished or was replaced under a running candidate is the machine's fault
(`infrastructure_error`), not the candidate's.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import itertools
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator

from tcsexam.fileio import close_later, remove_tree
from tcsexam.runner.ownership.owner import is_token, owner_token

SCRATCH_PREFIX = "tcsexam-run-"
STAGING_PREFIX = ".tcsexam-new-"
LOCK_FILE = ".tcsexam-owner"  #: the fallback lock where a folder itself cannot be locked
STAGING_MAX_AGE_S = 3600.0

#: where a root harness runs a local candidate whose scratch folder its uid cannot reach
#: (`execute`): searched with every scratch root
RELOCATED_ROOT = "/tmp"

#: errors of flock on a file system that does not lock directories
_NO_DIR_LOCKS = {errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS}

_held_lock = threading.Lock()
_held: dict[str, list[int]] = {}  #: path -> the descriptors holding its lock (this process)
_counter = itertools.count()


@functools.cache
def _machine() -> str:
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return hashlib.sha256(f"{socket.gethostname()}\0{namespace}".encode()).hexdigest()[:8]


def scratch_prefix(token: str | None = None) -> str:
    """The name every scratch folder of owner `token` (default: this process) starts with."""
    return f"{SCRATCH_PREFIX}{_machine()}-{token or owner_token()}-"


def _lock_folder(path: str) -> list[int]:
    """Descriptors holding an exclusive lock on folder `path` (the folder itself, else its lock
    file). Raises OSError when neither can be locked."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return [fd]
    except OSError as exc:
        if exc.errno not in _NO_DIR_LOCKS:
            os.close(fd)
            raise
    try:
        lock = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return [fd, lock]


def make_scratch(root: str | None = None, kind: str = "") -> str:
    """A fresh private folder (mode 0700) for one run of this process under `root` (None:
    $TMPDIR), locked by this process until `release_scratch`."""
    staging = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{_machine()}-{owner_token()}-", dir=root)
    try:
        fds = _lock_folder(staging)
    except OSError:
        os.rmdir(staging)
        raise
    final = os.path.join(os.path.dirname(staging), f"{scratch_prefix()}{kind}{next(_counter)}-{staging[-8:]}")
    try:
        os.rename(staging, final)  # no folder of that name: the counter is this owner's alone
    except OSError:
        for fd in fds:
            os.close(fd)
        remove_tree(staging)
        raise
    with _held_lock:
        _held[os.path.realpath(final)] = fds
    return final


def release_scratch(path: str | os.PathLike) -> None:
    """Remove this process's scratch folder `path` and drop its lock (removed first: nobody can
    take it before it is gone). A path this process does not hold is just removed."""
    path = os.fspath(path)
    with _held_lock:
        fds = _held.pop(os.path.realpath(path), [])
    try:
        remove_tree(path)
    finally:
        for fd in fds:  # the folder's last descriptor frees its inode: 3.4 ms, off the run's path
            close_later(fd)


def held_scratch() -> list[str]:
    """The scratch folders this process holds (resolved paths)."""
    with _held_lock:
        return list(_held)


def scratch_identity(path: str | os.PathLike) -> tuple[int, int]:
    """(st_dev, st_ino) of the folder at `path` (not followed)."""
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def scratch_intact(path: str | os.PathLike, identity: tuple[int, int]) -> bool:
    """The folder at `path` is still the one whose `scratch_identity` was `identity`: not removed,
    not replaced by another folder or a link."""
    try:
        return scratch_identity(path) == identity and os.path.isdir(path) and not os.path.islink(path)
    except OSError:
        return False


def _try_take(path: str) -> list[int] | None:
    """The lock of somebody else's scratch folder `path` when its owner is dead (its lock free);
    None when it is held (the owner lives) or the folder cannot be locked at all."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return [fd]
    except OSError as exc:
        if exc.errno not in _NO_DIR_LOCKS:  # EWOULDBLOCK: held by its live owner
            os.close(fd)
            return None
    try:
        lock = os.open(LOCK_FILE, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    except OSError:  # no lock file: nothing says whose it is, leave it
        os.close(fd)
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        os.close(fd)
        return None
    return [fd, lock]


def _remove_taken(path: str, fds: list[int]) -> bool:
    """Remove `path`, whose lock `fds` holds, if it is still the folder locked."""
    try:
        st = os.fstat(fds[0])
        if not scratch_intact(path, (st.st_dev, st.st_ino)):
            return False
        remove_tree(path)
        return True
    finally:
        for fd in fds:
            os.close(fd)


def _folders(root: str | None) -> Iterator[tuple[str, str, bool]]:
    """(token, path, staging) of this machine's scratch folders under `root` and RELOCATED_ROOT."""
    names = {f"{SCRATCH_PREFIX}{_machine()}-": False, f"{STAGING_PREFIX}{_machine()}-": True}
    for base in dict.fromkeys(os.path.realpath(b) for b in (root or tempfile.gettempdir(), RELOCATED_ROOT)):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            for start, staging in names.items():
                if not entry.name.startswith(start):
                    continue
                token, _, _ = entry.name[len(start) :].partition("-")
                if is_token(token) and entry.is_dir(follow_symlinks=False):  # never an old pid name
                    yield token, entry.path, staging


def remove_run_scratch(token: str, root: str | None = None, wait_s: float = 0.0) -> int:
    """Remove the scratch folders of owner `token` (an actor that was killed: its own clean-up
    never ran) whose lock can be taken, i.e. whose owner is dead; this process's own are
    released. A folder still locked is tried again for up to `wait_s` seconds (its owner's
    process may still be dying: the kernel drops its locks only once the process is gone).
    Returns how many were removed."""
    gone = 0
    mine = token == owner_token()
    deadline = time.monotonic() + wait_s
    while True:
        locked = 0
        for folder_token, path, _ in _folders(root):
            if folder_token != token:
                continue
            if mine and os.path.realpath(path) in held_scratch():
                release_scratch(path)
                gone += 1
                continue
            fds = _try_take(path)
            if fds is not None and _remove_taken(path, fds):
                gone += 1
            elif os.path.isdir(path):
                locked += 1
        if not locked or time.monotonic() >= deadline:
            return gone
        time.sleep(0.02)


def sweep_dead_scratch(root: str | None = None) -> int:
    """At a job's start: remove this machine's scratch folders whose owner is dead (an actor or a
    job killed before it could clean up): those whose lock can be taken. A live owner's folder
    (another job's actor) is never touched, whatever its pid. Returns how many were removed."""
    gone = 0
    mine = set(held_scratch())
    for _, path, staging in _folders(root):
        if os.path.realpath(path) in mine:
            continue
        if staging:
            try:
                if time.time() - os.lstat(path).st_mtime < STAGING_MAX_AGE_S:
                    continue  # maybe just made and not locked yet
            except OSError:
                continue
        fds = _try_take(path)
        if fds is not None and _remove_taken(path, fds):
            gone += 1
    return gone
