"""Atomic writes and readers that turn bad files into one-line `InputError`s.

Every file the pipeline writes goes through `atomic_write_*`: the content is written to a temporary
file in the same folder, flushed, fsynced and renamed over the target, so a killed process leaves
either the whole file or none. A file that must not be used any more is never deleted: `move_aside`
moves it into a time-stamped folder (`aside_dir`), noting why in that folder's `reasons.txt`.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import json
import math
import os
import queue
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeAlias, TypeGuard

import yaml

from tcsexam.errors import InputError, os_error_text

#: A decoded JSON or YAML value: arbitrary data, whose shape the code that reads it checks. `Any`
#: (not a recursive union) so that a value whose shape is checked reads without casts; the one
#: place `Any` stands for "arbitrary" (CONTRIBUTING.md "Types").
Json: TypeAlias = Any
#: A decoded JSON object: a record, a result file, a config mapping
JsonObject: TypeAlias = dict[str, Json]

# mkstemp creates files with mode 0600; written files get the usual mode (0666 less the umask),
# the umask read at this process's first write (a fork server's command sets its own after the fork).
_file_mode: int | None = None


def _umask() -> int:
    """This process's umask, without changing it (/proc; elsewhere set and restored at once)."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a written file gets: 0666 less the umask (read once per process)."""
    global _file_mode
    if _file_mode is None:
        _file_mode = 0o666 & ~_umask()
    return _file_mode


def _forget_file_mode() -> None:
    global _file_mode
    _file_mode = None


os.register_at_fork(after_in_child=_forget_file_mode)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, durable: bool = True) -> None:
    """Write via a temp file + rename (a reader never sees a partial file, even after a kill). A
    failed write (a full disk, a read-only file system, ...) leaves no partial file and raises
    `InputError` naming the path and the reason. `durable` also fsyncs before the rename, so the
    bytes survive a power cut; per-instance records skip it (they carry a digest: one torn by a
    power cut is set aside and rerun)."""
    path = Path(path)
    try:
        _atomic_write(path, data, durable)
    except OSError as exc:
        raise InputError(f"cannot write the output {os_error_text(exc, path)}") from None


def _atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), file_mode())
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def dumps_json(obj: Json) -> str:
    """JSON as the pipeline writes it: indented, keys in insertion order, no NaN."""
    return json.dumps(obj, indent=2, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Json, *, durable: bool = True) -> None:
    atomic_write_text(path, dumps_json(obj), durable=durable)


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    """A UTF-8 text file; a missing or unreadable file raises `InputError` naming it."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read {what}: {exc}") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def read_json(path: str | os.PathLike, what: str = "JSON file") -> Json:
    """Load a JSON file; NaN/Infinity, malformed JSON, a missing or empty file raise `InputError`."""
    path = Path(path)
    text = read_text(path, what)
    if not text.strip():
        raise InputError(f"{path}: {what} is empty")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise InputError(f"{path}: malformed {what}: {exc}") from None


def read_jsonl(path: str | os.PathLike, what: str = "JSONL file") -> list[Json]:
    """Load a JSON-lines file; blank lines are skipped; errors name the line number."""
    path = Path(path)
    lines = read_text(path, what).splitlines()
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line, parse_constant=_reject_constant))
        except ValueError as exc:
            raise InputError(f"{path}: line {number}: malformed JSON: {exc}") from None
    return rows


def read_csv(path: str | os.PathLike, what: str = "CSV file") -> tuple[list[str] | None, list[list[str]]]:
    """The header (None for an empty file) and the rows of a CSV file (UTF-8, a BOM allowed), cells as
    written; `InputError` naming the file (`what` says what it is) when it is missing or unreadable."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh)
            return next(reader, None), list(reader)
    except FileNotFoundError:
        raise InputError(f"{path}: {what} not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{path}: cannot read {what}: {exc}") from None


def read_yaml(path: str | os.PathLike, what: str = "YAML file") -> Json:
    path = Path(path)
    text = read_text(path, what)
    try:
        # libyaml's parser when PyYAML has it (6x faster on a task file of 2,000 instances), with
        # the same safe constructor: the same values
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: malformed {what}: {' '.join(str(exc).split())}") from None


def is_finite_number(value: object) -> TypeGuard[float]:
    """True for int/float (not bool) values that are finite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class UntrustedFileError(Exception):
    """A file a candidate controls is not a plain regular file of its own (a symbolic link, a FIFO,
    a device, a socket, a folder, a hard link, under a linked folder). The message names only what
    the file is, never where a link points or what the target holds: it may go into a record."""


_UNTRUSTED_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def file_kind(mode: int) -> str:
    """What a file of this `st_mode` is, in words ("a FIFO"); "a regular file" for one."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def read_untrusted(path: str | os.PathLike, limit: int, *, one_link: bool = True) -> bytes | None:
    """At most `limit` + 1 bytes of a file a candidate could have written or replaced (a
    certificate, a program's result file), read without ever following a link or blocking: None
    when there is no such file; `UntrustedFileError` when it is not a regular file with one link
    in a folder that is not itself a link (`one_link=False` accepts hard links). A caller that
    gets `limit` + 1 bytes knows the file is over the cap. See `open_untrusted`."""
    return _read_bounded(open_untrusted(path, one_link=one_link), limit)


def read_untrusted_at(dir_fd: int, name: str, limit: int, *, one_link: bool = True) -> bytes | None:
    """`read_untrusted` of `name` in the folder open as `dir_fd` (a folder the harness opened before
    the candidate could swap it for a link)."""
    return _read_bounded(_open_in(dir_fd, name, one_link), limit)


def _read_bounded(fd: int | None, limit: int) -> bytes | None:
    """At most `limit` + 1 bytes of `fd` (closed afterwards); None for no file."""
    if fd is None:
        return None
    try:
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def open_untrusted(path: str | os.PathLike, *, one_link: bool = True) -> int | None:
    """A read-only file descriptor (the caller closes it) of a file a candidate controls, or None
    when there is none; `UntrustedFileError` unless it is a regular file (with one link, unless
    `one_link=False`) in a folder that is not a link.

    The folder is opened with O_NOFOLLOW | O_DIRECTORY, the name is looked at with lstat
    (nothing but a regular file is ever opened, so no device is touched), then opened relative
    to the folder with O_NOFOLLOW | O_NONBLOCK (a FIFO swapped in meanwhile neither blocks nor is
    read: fstat refuses it)."""
    folder, name = os.path.split(os.fspath(path))
    try:
        dir_fd = os.open(folder or ".", _DIR_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UntrustedFileError("its folder is a symbolic link or not a folder") from None
        raise
    try:
        return _open_in(dir_fd, name, one_link)
    finally:
        os.close(dir_fd)


def _open_in(dir_fd: int, name: str, one_link: bool) -> int | None:
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UntrustedFileError(f"it is {file_kind(st.st_mode)}, not a regular file")
    try:
        fd = os.open(name, _UNTRUSTED_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UntrustedFileError("it is a symbolic link, not a regular file") from None
        raise
    st = os.fstat(fd)
    problem = None
    if not stat.S_ISREG(st.st_mode):
        problem = f"it is {file_kind(st.st_mode)}, not a regular file"
    elif one_link and st.st_nlink != 1:
        problem = "it is a hard link to another file"
    if problem is not None:
        os.close(fd)
        raise UntrustedFileError(problem)
    return fd


def special_files(folder: str, names: list[str]) -> set[str]:
    """The entries of `folder` that are neither regular files, folders nor links (FIFOs, sockets,
    devices): an `ignore=` for shutil.copytree, which would block on a FIFO or copy a device."""
    out = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            out.add(name)
    return out


#: descriptors to close, and the thread that closes them (`close_later`)
_closing: queue.SimpleQueue[int] = queue.SimpleQueue()
_closer_lock = threading.Lock()
_closer: threading.Thread | None = None


def _close_queued() -> None:
    while True:
        fd = _closing.get()
        try:
            os.close(fd)
        except OSError:
            pass


def close_later(fd: int) -> None:
    """Close `fd` in a thread of its own, for a close the kernel makes slow, off the run's path:
    an inotify instance's waits for an SRCU grace period, and the last descriptor of a removed
    folder frees its inode (8-17 ms and 3.4 ms on the 2-core development machine, where a pipe's
    takes 0.01 ms). `fd` must be close-on-exec, so that no program started meanwhile gets it."""
    global _closer
    with _closer_lock:
        if _closer is None or not _closer.is_alive():  # first use, or a forked child
            _closer = threading.Thread(target=_close_queued, name="tcsexam-fd-closer", daemon=True)
            _closer.start()
    _closing.put(fd)


def remove_tree(path: str | os.PathLike) -> None:
    """Remove a folder a candidate wrote into, whatever it left there: links are removed, never
    followed (shutil.rmtree works on file descriptors), and a sub-folder it made unreadable or
    unwritable (mode 000) is made accessible to its owner and removed. Errors are ignored: what
    cannot be removed stays (a file the harness's user does not own, an immutable file)."""

    top = os.path.abspath(path)

    def fix(func, failed, exc):
        exc = exc[1] if isinstance(exc, tuple) else exc  # onerror passes sys.exc_info()
        if isinstance(exc, FileNotFoundError):
            return  # removed meanwhile (another sweep)
        failed = os.path.abspath(failed)
        parent = os.path.dirname(failed)
        try:
            # only folders inside the tree are ever chmod'ed: never the folder holding it (/tmp)
            if failed != top and _inside_tree(parent, top):
                os.chmod(parent, 0o700, follow_symlinks=False)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700, follow_symlinks=False)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)
        except OSError:
            pass

    if not os.path.lexists(path):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=fix)
    else:  # pragma: no cover - Python 3.11
        shutil.rmtree(path, onerror=fix)


def _inside_tree(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def aside_dir(parent: str | os.PathLike) -> Path:
    """A new folder name for files set aside now: `<parent>/<UTC time, %Y%m%dT%H%M%S>`, with
    `-2`, `-3`, ... when that exists already (not created here: `move_aside` creates it)."""
    parent = Path(parent)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    dest = parent / stamp
    n = 1
    while dest.exists():
        n += 1
        dest = parent / f"{stamp}-{n}"
    return dest


def move_aside(path: str | os.PathLike, folder: str | os.PathLike, reason: str) -> Path:
    """Move `path` into `folder` (created), never overwriting (`name.2`, `name.3`, ...); note the
    reason in the folder's reasons.txt. Returns where it went."""
    path, folder = Path(path), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / path.name
    n = 1
    while dest.exists():
        n += 1
        dest = folder / f"{path.name}.{n}"
    os.replace(path, dest)
    with open(folder / "reasons.txt", "a", encoding="utf-8") as fh:
        fh.write(f"{dest.name}: {' '.join(reason.split())}\n")
    return dest


LOCK_SUFFIX = ".tcsexam-run.lock"


def lock_path(target: str | os.PathLike, folder: bool = False) -> Path:
    """The lock file of an output: `<folder>/.tcsexam-run.lock` inside a folder, else
    `.<name>.tcsexam-run.lock` beside a file."""
    target = Path(os.path.abspath(target))
    return target / LOCK_SUFFIX if folder else target.with_name(f".{target.name}{LOCK_SUFFIX}")


@contextlib.contextmanager
def exclusive_use(targets: Sequence[tuple[str | os.PathLike, bool]]) -> Iterator[None]:
    """Hold an exclusive lock (fcntl.flock on `lock_path(target, folder)`) on every (target,
    folder) while inside, so two runs never write one output file or records folder at once: a
    second run stops at once with one line (`InputError`) naming the target and the holder (pid
    and host, written into the lock file). The kernel releases a lock when its holder exits, even
    on SIGKILL, so a killed run never leaves a stale lock; a run that ends removes its lock files
    (a lock taken on a file that was removed meanwhile is taken again on the new one), and the
    folders made for the locks are removed again when nothing was written into them (a run that
    stopped on bad input leaves no empty output folder behind)."""
    held: list[tuple[Path, int]] = []
    made: list[Path] = []
    try:
        for target, folder in targets:
            path = lock_path(target, folder)
            made += [p for p in reversed(path.parents) if not os.path.lexists(p)]
            held.append((path, _lock(path, target)))
        yield
    finally:
        for path, fd in reversed(held):
            with contextlib.suppress(OSError):
                os.unlink(path)  # before the close: nobody can lock this file once it is unlinked
            os.close(fd)
        for made_folder in reversed(made):  # deepest first; a folder with anything in it stays
            with contextlib.suppress(OSError):
                made_folder.rmdir()


def _lock(path: Path, target: str | os.PathLike) -> int:
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise InputError(f"cannot lock {os_error_text(exc, path.parent)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise InputError(
                f"{os.path.abspath(target)}: another tcsexam run is writing it ({holder}); wait for it to end "
                "or choose another output"
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # its holder removed it between our open and our lock: lock the new one
            os.close(fd)
            continue
        with contextlib.suppress(OSError):  # who holds it, for the message of a second run (best effort)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        return fd
