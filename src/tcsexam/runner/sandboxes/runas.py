"""Who a candidate runs as, and what it can reach, when the harness is root.

A root harness never runs a candidate as root: the launcher drops to an unprivileged uid/gid
(`candidate_ids`: ``TCSEXAM_CANDIDATE_UID=UID[:GID]`` or a range ``FIRST-LAST``, default
65534:65534, nobody/nogroup; ``harness``: as the harness itself, for trusted candidates only)
right before the exec, with no supplementary groups and
PR_SET_NO_NEW_PRIVS. That uid owns only the run's work folder (`give_to`); the instance and the
candidate folder are readable, nothing else is writable. A range gives every harness process
its own uid (a lock file per uid under /run/tcsexam/uids), so that two workers' candidates never
share /tmp files; after each run the files that uid left in /tmp, /dev/shm and /var/tmp are
removed (`sweep_shared_tmp`).

The candidate still gets the harness's Python where it lives in a folder that only root can
traverse (a pyenv under /root, mode 0700): under bwrap the unreachable ancestors are replaced by
empty tmpfs and the interpreter bound read-only below them (`opaque_ancestors`); under local a
read-only bind mount of the interpreter's prefixes under /run/tcsexam/python and a small venv
pointing at them (`python_dir`). The interpreter's own shared libraries (libpython found through a
RUNPATH under /root) are loaded from the view too: its `python3` runs the binary through its ELF
loader with the view's library folders (`view_libraries`), else the loader, unable to enter the
RUNPATH, would take another libpython of the same soname (Debian's) and `import ssl` would fail.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import stat
import struct
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

from tcsexam.errors import InputError

RUN_DIR = Path("/run/tcsexam")
_lock = threading.Lock()
_ids: tuple[tuple[int, int] | None, int] | None = None  # (ids, pid that chose them)
_uid_lock_fd: int | None = None
_python_dir: str | None = None


def _parse(spec: str) -> tuple[list[int], int | None]:
    uid_part, _, gid_part = spec.partition(":")
    first, _, last = uid_part.partition("-")
    uids = list(range(int(first), int(last or first) + 1))
    gid = int(gid_part) if gid_part else None
    if not uids or min(uids) <= 0 or gid == 0:
        raise ValueError(spec)
    return uids, gid


def candidate_ids() -> tuple[int, int] | None:
    """(uid, gid) candidates run as: None unless the harness is root (a non-root harness runs
    them as itself, inside bwrap's user namespace as 65534)."""
    global _ids, _uid_lock_fd
    if os.geteuid() != 0:
        return None
    with _lock:
        if _ids is not None and _ids[1] == os.getpid():
            return _ids[0]

        spec = os.environ.get("TCSEXAM_CANDIDATE_UID", "65534:65534")
        if spec == "harness":  # candidates are trusted: they run as the harness itself (root)
            _ids = (None, os.getpid())
            return None
        try:
            uids, gid = _parse(spec)
        except ValueError:
            raise InputError(
                f"TCSEXAM_CANDIDATE_UID={spec!r}: expected UID[:GID] or FIRST-LAST[:GID], uid and gid > 0"
            ) from None
        chosen = uids[0]
        if len(uids) > 1:  # one uid per harness process: the first whose lock is free
            (RUN_DIR / "uids").mkdir(parents=True, exist_ok=True, mode=0o755)
            for uid in uids:
                fd = os.open(RUN_DIR / "uids" / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                chosen, _uid_lock_fd = uid, fd
                break
        ids = (chosen, gid if gid is not None else chosen)
        _ids = (ids, os.getpid())
        return ids


def can_traverse(st: os.stat_result, ids: tuple[int, int]) -> bool:
    uid, gid = ids
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == gid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def can_read(path, ids: tuple[int, int] | None, *, ancestors: bool) -> bool:
    """`ids` can read `path` (a folder: list and enter it), and, with `ancestors`, reach it."""
    if ids is None:
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False
    uid, gid = ids
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    want = 0o5 if stat.S_ISDIR(st.st_mode) else 0o4
    return (st.st_mode >> shift) & want == want and not (ancestors and opaque_ancestors([str(path)], ids))


def readable_copy(source: Path, target: Path) -> Path:
    """A root-owned copy of `source` at `target` that anybody may read (nobody else may write)."""
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    for root, dirs, files in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                os.chmod(full, 0o555 if os.stat(full).st_mode & 0o111 else 0o444)
    if target.is_dir():
        os.chmod(target, 0o755)
    return target


def _first_opaque(path: str, ids: tuple[int, int]) -> str | None:
    """The shallowest folder on the way to `path` that `ids` cannot traverse, or None."""
    current = Path("/")
    for part in Path(path).parts[1:-1]:
        current = current / part
        try:
            st = os.stat(current)
        except OSError:
            return None
        if not can_traverse(st, ids):
            return str(current)
    return None


def opaque_ancestors(paths, ids: tuple[int, int] | None) -> list[str]:
    """The shallowest folder on the way to each of `paths` that `ids` cannot traverse (bwrap
    puts an empty tmpfs there, then binds the paths below it: nothing else of it is visible)."""
    if ids is None:
        return []
    return sorted({found for path in paths if (found := _first_opaque(path, ids)) is not None})


def interpreter_paths() -> list[str]:
    """The harness's Python: its prefix (a venv) and base prefix, as given and resolved."""
    return sorted({os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), os.path.abspath(sys.prefix)})


def give_to(paths, ids: tuple[int, int] | None) -> None:
    """Make the run's writable folders (and everything in them) the candidate uid's own. The
    folders themselves carry the harness's group, which is how `sweep_shared_tmp` tells a folder
    given to a (possibly concurrent) run from litter; what is in them carries the candidate's own
    group, like what it creates, so that moving it out into /tmp does not make it look given."""
    if ids is None:
        return
    for path in paths:
        for root, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), *ids)
        os.lchown(path, ids[0], os.getegid())


#: the folders everybody may write on a Linux host (those that exist here are swept); world-writable
#: folders below them that someone else owns (a /tmp/.X11-unix, a Ray temp dir) are swept too
SHARED_TMP = ("/tmp", "/dev/shm", "/var/tmp", "/run/lock", "/var/crash")
SHARED_DEPTH = 3  #: how deep below SHARED_TMP world-writable folders are looked for


def shared_folders(ids: tuple[int, int]) -> list[str]:
    """SHARED_TMP's folders that exist (each once) and the world-writable folders below them,
    down to SHARED_DEPTH, that the candidate uid does not own (what it owns goes as a whole)."""
    found: list[str] = []

    def walk(folder: str, depth: int) -> None:
        found.append(folder)
        if depth == 0:
            return
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_mode & stat.S_IWOTH and st.st_uid != ids[0]:
                walk(entry.path, depth - 1)

    for root in dict.fromkeys(os.path.realpath(p) for p in SHARED_TMP if os.path.isdir(p)):
        walk(root, SHARED_DEPTH)
    return found


def shared_tmp_marks(ids: tuple[int, int]) -> dict[str, int | None]:
    """The shared folders (`shared_folders`) with their modification times: a folder whose time
    has not moved has no new entry (`sweep_shared_tmp` skips it); None: scan it anyway."""
    marks: dict[str, int | None] = {}
    for folder in shared_folders(ids):
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            continue
        # only a time well in the past is a proof: file times tick coarsely (a jiffy, up to 10 ms),
        # so a change within the same tick as the mark would not move it
        marks[folder] = mtime if time.time_ns() - mtime > 50_000_000 else None
    return marks


def sweep_shared_tmp(ids: tuple[int, int] | None, marks: dict[str, int | None] | None = None) -> None:
    """Remove what the candidate uid created in the shared folders (`shared_folders`: /tmp,
    /dev/shm, /var/tmp, /run/lock and the world-writable folders in them; a folder it created goes
    as a whole); folders given to runs (`give_to`) stay. With `marks` (taken before the run),
    only the folders marked then and changed since are scanned."""
    if ids is None:
        return
    folders = shared_folders(ids) if marks is None else list(marks)
    for folder in folders:
        try:
            if marks is not None and marks[folder] is not None and os.stat(folder).st_mtime_ns == marks[folder]:
                continue
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if st.st_uid != ids[0] or st.st_gid == os.getegid():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


_SYSTEM_PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


def _mount_points() -> set[str]:
    """The mount points of this process's mount namespace (/proc/self/mountinfo, unescaped)."""
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if len(fields) > 4:
            points.add(re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4]))
    return points


def view_live(source: str, target: Path) -> bool:
    """`target` shows `source` itself, read-only, in this mount namespace: the same folder (device
    and inode) through a read-only mount. A folder left by a mount that died with its namespace
    (an empty directory), or a mount of something else, is not."""
    try:
        seen, real = os.stat(target), os.stat(source)
        return (seen.st_dev, seen.st_ino) == (real.st_dev, real.st_ino) and bool(
            os.statvfs(target).f_flag & os.ST_RDONLY
        )
    except OSError:
        return False


def _bind_readonly(source: str, target: Path) -> None:
    """Make `target` a live read-only bind mount of `source` (`view_live`) in this mount namespace:
    kept when it is one, else whatever is mounted there is detached and `source` bound afresh."""
    if view_live(source, target):
        return
    for _ in range(8):  # stacked stale mounts: detach them all
        if str(target) not in _mount_points():
            break
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30, env=_SYSTEM_PATH)
    target.mkdir(parents=True, exist_ok=True, mode=0o755)
    for args in (["--bind", source, str(target)], ["-o", "remount,bind,ro", str(target)]):
        subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30, env=_SYSTEM_PATH)
    if not view_live(source, target):
        raise RuntimeError(f"the interpreter view {target} does not show {source} after mounting it")


def sweep_python_views() -> None:
    """Unmount and remove the interpreter views whose harness prefix is gone (a deleted venv)."""
    for view in (RUN_DIR / "python").glob("*/sources"):
        if all(os.path.isdir(source) for source in view.read_text().split("\n") if source):
            continue
        inside = [point for point in _mount_points() if point.startswith(f"{view.parent}/")]
        for point in sorted(inside, key=len, reverse=True):  # library folders in the venv first
            subprocess.run(["umount", "-l", point], capture_output=True, timeout=30, env=_SYSTEM_PATH)
        shutil.rmtree(view.parent, ignore_errors=True)


#: bumped whenever the view's layout changes: a view of another layout lives in its own folder
#: (a running job may still use the old one)
VIEW_LAYOUT = "2"
_libraries: list[str] | None = None


def elf_interpreter(path: str) -> str | None:
    """The ELF loader (PT_INTERP) `path` names, or None (not a dynamic ELF executable)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
            if head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
                return None
            wide, end = head[4] == 2, "<" if head[5] == 1 else ">"
            # e_phoff, e_phentsize, e_phnum; a program header's p_type, p_offset and p_filesz
            (phoff,), (phentsize, phnum) = (
                (struct.unpack_from(end + "Q", head, 32), struct.unpack_from(end + "HH", head, 54))
                if wide
                else (struct.unpack_from(end + "I", head, 28), struct.unpack_from(end + "HH", head, 42))
            )
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
            for i in range(phnum):
                if wide:
                    kind, _, offset, _, _, size = struct.unpack_from(end + "IIQQQQ", table, i * phentsize)
                else:
                    kind, offset, _, _, size = struct.unpack_from(end + "IIIII", table, i * phentsize)
                if kind == 3:  # PT_INTERP
                    handle.seek(offset)
                    return handle.read(size).rstrip(b"\0").decode() or None
    except (OSError, struct.error, UnicodeDecodeError):
        return None
    return None


def interpreter_libraries() -> list[str]:
    """The shared libraries (real paths) the harness's interpreter loads: its executable's and its
    standard extension modules' (lib-dynload), as the dynamic loader resolves them for the harness
    (`ldd`: through RUNPATH, RPATH, $ORIGIN and the harness's LD_LIBRARY_PATH). Empty where ldd is
    missing or says nothing."""
    global _libraries
    if _libraries is not None:
        return _libraries
    exe = os.path.realpath(sys.executable)
    base = {"installed_platbase": sys.base_prefix, "platbase": sys.base_prefix}
    dynload = Path(
        sysconfig.get_config_var("DESTSHARED") or Path(sysconfig.get_path("platstdlib", vars=base)) / "lib-dynload"
    )
    files = [exe, *sorted(str(p) for p in dynload.glob("*.so"))]
    found: dict[str, None] = {}
    env = dict(_SYSTEM_PATH)
    if os.environ.get("LD_LIBRARY_PATH"):  # what the harness's own loader searches too
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    try:
        out = subprocess.run(["ldd", *files], capture_output=True, text=True, timeout=120, env=env, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        _, arrow, resolved = line.partition("=>")
        path = resolved.strip().rsplit(" (0x", 1)[0].strip() if arrow else ""
        if path.startswith("/"):
            found[os.path.realpath(path)] = None
    _libraries = list(found)
    return _libraries


def _in_view(path: str, mounts: list[tuple[str, Path]]) -> str | None:
    """`path` as the view at mounts shows it (the deepest source holding it), or None."""
    for source, target in sorted(mounts, key=lambda m: -len(m[0])):
        if path == source or path.startswith(source.rstrip("/") + "/"):
            return str(target / os.path.relpath(path, source))
    return None


def view_libraries(root: Path, mounts: list[tuple[str, Path]], ids: tuple[int, int]):
    """What the view at `root` must add so that `ids` loads the interpreter's own libraries
    (`interpreter_libraries`) and not another of the same soname: (the loader, as the view shows
    it; the library folders, as the view shows them, in order; extra (source, mount point) for
    hidden library folders outside the prefixes, mounted in the view's venv). No folders: the
    candidate reaches every library by itself, the view's python3 is the binary itself."""
    folders: dict[str, None] = {}
    extra: list[tuple[str, Path]] = []
    for library in interpreter_libraries():
        folder = os.path.dirname(library)
        if _first_opaque(library, ids) is None:
            continue
        shown = _in_view(folder, mounts + extra)
        if shown is None:
            extra.append((folder, root / "venv" / "libs" / str(len(extra))))
            shown = str(extra[-1][1])
        folders[shown] = None
    loader = elf_interpreter(os.path.realpath(sys.executable))
    if loader and _first_opaque(os.path.realpath(loader), ids) is not None:
        loader = _in_view(os.path.realpath(loader), mounts + extra) or loader
    return loader, list(folders), extra


def _loader_takes_argv0(loader: str) -> bool:
    """The loader, run as a command, accepts ``--argv0`` (glibc >= 2.33)."""
    try:
        out = subprocess.run([loader, "--help"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--argv0" in out.stdout + out.stderr


def _launcher(binary: str, loader: str | None, folders: list[str], link: str) -> str:
    """The view's `python3`: a script that starts `binary` with `folders` searched first for its
    libraries. Through its loader (``--library-path``: for this process only, and ``--argv0``:
    sys.executable stays the script, which finds pyvenv.cfg and is what children re-run); else
    with LD_LIBRARY_PATH (which the candidate's children inherit) and `binary` through `link`, a
    symbolic link beside the script (sys.executable, by which Python finds pyvenv.cfg)."""
    path = ":".join(folders)
    if loader and _loader_takes_argv0(loader):
        return f'#!/bin/sh\nexec {shlex.quote(loader)} --library-path {shlex.quote(path)} --argv0 "$0" {shlex.quote(binary)} "$@"\n'
    return (
        f'#!/bin/sh\nLD_LIBRARY_PATH={shlex.quote(path)}"${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"\n'
        f'export LD_LIBRARY_PATH\nexec {shlex.quote(link)} "$@"\n'
    )


def _view_mounts(root: Path, base: str, prefix: str) -> list[tuple[str, Path]]:
    """(source, mount point) of the interpreter view at `root`'s prefixes."""
    return [(base, root / "base"), *([(prefix, root / "prefix")] if prefix != base else [])]


def python_dir(ids: tuple[int, int] | None) -> str:
    """The folder whose `python3` a candidate running as `ids` outside any namespace (local)
    starts: the harness's own when `ids` can reach it, else a venv under /run/tcsexam/python
    built on read-only bind mounts of the harness's prefixes (see the module doc), whose
    `python3` loads the interpreter's own shared libraries through the view (`view_libraries`).

    The venv stays for later jobs, its mounts live only as long as the mount namespace that made
    them (a first job in `unshare -m`, SLURM's job_container/tmpfs, a systemd unit with
    PrivateMounts leaves the venv without them): every call checks that each mount is live here
    and shows the harness's prefix or library folder (`view_live`: same device and inode,
    read-only) and mounts it again when not, under a lock on the view (concurrent jobs)."""
    global _python_dir
    here = os.path.dirname(sys.executable)
    if ids is None or not opaque_ancestors([os.path.join(here, "python3"), *interpreter_paths()], ids):
        return here
    base, prefix = os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)
    tag = hashlib.sha256(f"{base}\0{prefix}\0{VIEW_LAYOUT}".encode()).hexdigest()[:12]
    root = RUN_DIR / "python" / tag
    mounts = _view_mounts(root, base, prefix)
    loader, folders, extra = view_libraries(root, mounts, ids)
    mounts = mounts + extra
    with _lock:
        if _python_dir is not None and all(view_live(source, target) for source, target in mounts):
            return _python_dir
        for folder in (RUN_DIR, RUN_DIR / "python"):
            folder.mkdir(exist_ok=True, mode=0o755)
        lock = os.open(RUN_DIR / "python" / f"{tag}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one job at a time mounts or builds this view
            _python_dir = _build_view(root, base, prefix, mounts, loader, folders)
        finally:
            os.close(lock)
        return _python_dir


def _build_view(
    root: Path,
    base: str,
    prefix: str,
    mounts: list[tuple[str, Path]],
    loader: str | None = None,
    folders: list[str] | None = None,
) -> str:
    sweep_python_views()
    root.mkdir(exist_ok=True, mode=0o755)
    os.chmod(root, 0o755)
    (root / "sources").write_text(
        "".join(f"{source}\n" for source in dict.fromkeys([base, prefix, *(s for s, _ in mounts)]))
    )
    venv = root / "venv"
    if not (venv / "pyvenv.cfg").is_file():
        tmp = root / f"venv.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        (tmp / "bin").mkdir(parents=True, mode=0o755)
        (tmp / "lib" / version).mkdir(parents=True, mode=0o755)
        binary = str(root / "base" / "bin" / os.path.basename(os.path.realpath(sys.executable)))
        link = venv / "bin" / ".python-binary"
        launcher = _launcher(binary, loader, folders, str(link)) if folders else None
        if launcher is not None:
            os.symlink(binary, tmp / "bin" / link.name)
        for name in ("python", "python3", version):
            if launcher is None:
                os.symlink(binary, tmp / "bin" / name)
            else:
                (tmp / "bin" / name).write_text(launcher)
                os.chmod(tmp / "bin" / name, 0o755)
        own = prefix != base
        if own:
            site = Path(os.path.realpath(sysconfig.get_path("purelib"))).relative_to(prefix)
            os.symlink(root / "prefix" / site, tmp / "lib" / version / "site-packages")
        (tmp / "pyvenv.cfg").write_text(
            f"home = {root / 'base' / 'bin'}\ninclude-system-site-packages = {'false' if own else 'true'}\n"
            f"version = {sys.version_info.major}.{sys.version_info.minor}.{sys.version_info.micro}\n"
        )
        os.replace(tmp, venv)
    for source, target in mounts:  # after the venv: hidden library folders are mounted inside it
        _bind_readonly(source, target)
    return str(venv / "bin")
