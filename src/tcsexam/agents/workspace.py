"""The agent's workspace on the host: what enters it, how the harness reads and writes in it, and
what leaves it.

- In (`copy_in`): exactly the files the stage manifest lists for the workspace (each checked
  against its sha256) and the mode's empty submission folder: the staged folder passed the
  leakage audit as listed, so nothing else (no oracle, rubric, metric, no file added after the
  stage) can enter. A staged workspace that differs from its manifest is an `InputError`.
- Harness reads and writes (`read_confined`, `write_confined`): a path relative to the workspace,
  or absolute inside it, walked one folder at a time with O_NOFOLLOW from a descriptor of the
  workspace itself, so no symbolic link the agent made (`ln -s /etc x`), no `..`, no hard link
  and no FIFO takes the harness (possibly root) outside the workspace or blocks it.
- Out (`copy_out`): folders and regular files only, links and special files left out (listed).
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path, PurePosixPath

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.orspace.release import parse_workspace_id
from tcsexam.records.digest import hash_file

#: the submission folder each mode's agent writes in (created empty by the stage)
SUBMISSION_DIRS = {"build": ("src",), "revise": ("revised/src",), "explain": ()}
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def stage_manifest(staged: str | Path) -> JsonObject:
    """The stage manifest of a staged folder (`tcsexam orspace stage`), checked to have passed its
    leakage audit."""
    path = Path(staged) / "manifest.json"
    if not path.is_file():
        raise InputError(f"{staged}: not a staged folder (no manifest.json; make one with tcsexam orspace stage)")
    manifest = read_json(path, "stage manifest")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("workspaces"), dict):
        raise InputError(f"{path}: a stage manifest must have a `workspaces` object")
    if (manifest.get("leakage_audit") or {}).get("passed") is not True:
        raise InputError(f"{path}: the stage's leakage audit did not pass; stage again")
    return manifest


def manifest_files(manifest: JsonObject, wid: str, where: str = "stage manifest") -> list[tuple[str, str]]:
    """(relative POSIX path, sha256) of every file the manifest lists for workspace `wid`."""
    entry = manifest["workspaces"].get(wid)
    if not isinstance(entry, dict) or not isinstance(entry.get("files"), list):
        raise InputError(f"{where}: no file list for workspace {wid}")
    out = []
    for item in entry["files"]:
        rel = item.get("path") if isinstance(item, dict) else None
        digest = item.get("sha256") if isinstance(item, dict) else None
        parts = PurePosixPath(str(rel)).parts
        if not isinstance(rel, str) or not isinstance(digest, str) or not parts or ".." in parts or rel.startswith("/"):
            raise InputError(f"{where}: workspace {wid}: bad file entry {item!r}")
        out.append((PurePosixPath(rel).as_posix(), digest))
    return out


def check_staged(staged: Path, manifest: JsonObject, wid: str) -> list[tuple[str, str]]:
    """The manifest's files of `wid`, each checked to be in `staged/<wid>/` as listed, and no other
    file there; InputError naming the first difference."""
    folder = staged / wid
    listed = manifest_files(manifest, wid, str(staged / "manifest.json"))
    for rel, digest in listed:
        path = folder / rel
        if path.is_symlink() or not path.is_file():
            raise InputError(f"{path}: listed in the stage manifest but not a regular file here")
        if hash_file(path) != digest:
            raise InputError(f"{path}: changed since it was staged (sha256 differs from the manifest); stage again")
    names = {rel for rel, _ in listed}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if (path.is_symlink() or not path.is_dir()) and rel not in names:
            raise InputError(f"{path}: not in the stage manifest (never audited); stage again")
    return listed


def copy_in(staged: Path, manifest: JsonObject, wid: str, dest: Path) -> None:
    """Make `dest` (absent) the agent's copy of staged workspace `wid`: the listed files, checked,
    and the mode's empty submission folder."""
    listed = check_staged(staged, manifest, wid)
    dest.mkdir(mode=0o755)
    for rel, _ in listed:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(staged / wid / rel, target, follow_symlinks=False)
    for folder in SUBMISSION_DIRS[parse_workspace_id(wid)[1]]:
        (dest / folder).mkdir(parents=True, exist_ok=True)


def copy_out(workspace: Path, dest: Path) -> list[str]:
    """Copy the worked workspace to `dest` (absent): folders and regular files, never following a
    link; returns the relative paths left out (links, FIFOs, sockets, devices)."""
    skipped: list[str] = []
    dest.mkdir(parents=True)

    def walk(src: Path, out: Path) -> None:
        with os.scandir(src) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = (src / entry.name).relative_to(workspace).as_posix()
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    (out / entry.name).mkdir()
                    walk(src / entry.name, out / entry.name)
                elif stat.S_ISREG(mode):
                    fd = os.open(src / entry.name, _READ)
                    with os.fdopen(fd, "rb") as fin, open(out / entry.name, "wb") as fout:
                        shutil.copyfileobj(fin, fout)
                else:
                    skipped.append(rel)

    walk(workspace, dest)
    return skipped


def workspace_parts(root: Path, file: str) -> list[str]:
    """The components of `file` below `root` (`file` relative to it, or absolute inside it), `..`
    resolved by name; PermissionError for a path outside the workspace."""
    path = os.path.normpath(os.path.join(str(root), file))
    base = os.path.normpath(str(root))
    if path != base and not path.startswith(base + os.sep):
        raise PermissionError(f"{file}: outside the workspace ({root})")
    rel = os.path.relpath(path, base)
    return [] if rel == "." else rel.split(os.sep)


def _open_dir(root: Path, parts: list[str], file: str, *, make: bool, owner: tuple[int, int] | None) -> int:
    """A descriptor of the folder `root/parts...`, reached without following any link (made,
    owned by `owner`, when `make`)."""
    fd = os.open(root, _DIR)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not make:
                    raise FileNotFoundError(errno.ENOENT, "no such file or folder in the workspace", file) from None
                os.mkdir(part, 0o755, dir_fd=fd)
                if owner is not None:
                    os.chown(part, *owner, dir_fd=fd, follow_symlinks=False)
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PermissionError(f"{file}: a folder on its path is a symbolic link or not a folder") from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _checked_file(fd: int, file: str) -> os.stat_result:
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder", file)
    if not stat.S_ISREG(st.st_mode):
        raise PermissionError(f"{file}: not a regular file")
    if st.st_nlink != 1:
        raise PermissionError(f"{file}: a hard link (not read or written by the harness)")
    return st


def read_confined(root: Path, file: str, limit: int) -> bytes:
    """The bytes of workspace file `file`; FileNotFoundError, IsADirectoryError, PermissionError
    (outside, a link on the way, not a regular file), OverflowError when over `limit` bytes."""
    parts = workspace_parts(root, file)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "is a folder", file)
    dir_fd = _open_dir(root, parts[:-1], file, make=False, owner=None)
    try:
        try:
            fd = os.open(parts[-1], _READ, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PermissionError(f"{file}: a symbolic link (not followed)") from None
            if exc.errno == errno.ENOENT:
                raise FileNotFoundError(errno.ENOENT, "no such file in the workspace", file) from None
            raise
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as fh:
        if _checked_file(fd, file).st_size > limit:
            raise OverflowError(f"{file}: larger than {limit} bytes")
        return fh.read(limit + 1)


def write_confined(root: Path, file: str, data: bytes, owner: tuple[int, int] | None) -> None:
    """Write `data` to workspace file `file` (its folders made), owned by `owner` (the uid the
    agent's commands run as) when given; the same refusals as `read_confined`."""
    parts = workspace_parts(root, file)
    if not parts:
        raise IsADirectoryError(errno.EISDIR, "is a folder", file)
    dir_fd = _open_dir(root, parts[:-1], file, make=True, owner=owner)
    try:
        try:
            fd = os.open(parts[-1], _WRITE, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PermissionError(f"{file}: a symbolic link (not followed)") from None
            if exc.errno == errno.ENXIO:
                raise PermissionError(f"{file}: not a regular file") from None
            raise
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "wb") as fh:
        _checked_file(fd, file)
        os.ftruncate(fd, 0)
        fh.write(data)
        if owner is not None:
            os.fchown(fd, *owner)
