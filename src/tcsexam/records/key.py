"""The secret that seals a results tree's records: their digests are HMACs under it.

A record's `digest` (and a derived file's, see `tcsexam.records.integrity`) is
`hmac-sha256:<key id>:<HMAC-SHA256 of its canonical content>` under the key of the tree it lives
in, so a record edited with its digest recomputed is only accepted by whoever holds the key: the
harness, never a candidate (bwrap hides the folder holding it, docker and apptainer never mount it,
and under `local` a root harness runs candidates as another user, who cannot read a 0600 file).

Where the key is: the file `.tcsexam-key` (mode 0600, 32 random bytes in hex) in the folder of the
file being sealed or checked, or the nearest folder above it that has one; `TCSEXAM_RECORD_KEY`
(the path of a key file) overrides the search. A writer that finds none creates one at the root of
what it writes (`tcsexam run`: the folder holding both its `--output` and `--records-dir`; the
workflow: its evaluation tree `<results>/<suite>/<protocol>`, at start), atomically, so concurrent
jobs agree on one key.

Moving and copying: the key travels with the tree (copy the tree's root folder with it, e.g.
`cp -a results/ elsewhere/` or `rsync -a`), and records copied without it cannot be checked: `run`
sets them aside and reruns them, the scorers refuse them, saying no key was found. To adopt
records from another tree, copy its `.tcsexam-key` to the root of the new one (or point
`TCSEXAM_RECORD_KEY` at it). Rotating: move the key file away; the next run creates a new key,
and every record sealed under the old one is set aside and run again (nothing is deleted).

A key file owned by another user is ignored (someone else planted it); one of this user's that
others may read is refused with one line (chmod 600 it).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tcsexam.errors import InputError, os_error_text

KEY_FILE = ".tcsexam-key"
KEY_ENV = "TCSEXAM_RECORD_KEY"
DIGEST_PREFIX = "hmac-sha256:"
_HEADER = "tcsexam record key v1\n"


@dataclass(frozen=True)
class RecordKey:
    path: Path
    secret: bytes = b""

    @property
    def id(self) -> str:
        """A short public name of the key (not the key): says which key sealed a record."""
        return hashlib.sha256(b"tcsexam-key-id\0" + self.secret).hexdigest()[:12]

    def digest(self, text: bytes) -> str:
        """`hmac-sha256:<key id>:<hex>` of `text` under this key."""
        mac = hmac.new(self.secret, text, hashlib.sha256).hexdigest()
        return f"{DIGEST_PREFIX}{self.id}:{mac}"

    def __repr__(self) -> str:  # never the secret
        return f"RecordKey({str(self.path)!r}, id={self.id})"


_cache: dict[tuple, RecordKey] = {}


def _read(path: Path, st: os.stat_result) -> RecordKey:
    ident = (str(path), st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_mode, st.st_uid)
    found = _cache.get(ident)
    if found is not None:
        return found
    if st.st_mode & 0o077:
        raise InputError(
            f"{path}: the record key may be read by others (mode {st.st_mode & 0o777:o}): chmod 600 {path}"
        )
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the record key: {exc}") from None
    body = text.removeprefix(_HEADER).strip()
    try:
        secret = bytes.fromhex(body)
    except ValueError:
        secret = b""
    if not text.startswith(_HEADER) or len(secret) < 16:
        raise InputError(f"{path}: not a tcsexam record key (expected {_HEADER.strip()!r} and 64 hex digits)")
    key = RecordKey(path, secret)
    if len(_cache) > 256:
        _cache.clear()
    _cache[ident] = key
    return key


def _own_key_in(folder: Path) -> RecordKey | None:
    path = folder / KEY_FILE
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        return None  # a link, or a file someone else put there: not this tree's key
    return _read(path, st)


def find_key(near: str | os.PathLike) -> RecordKey | None:
    """The key of the tree `near` (a file or folder, existing or not) is in: `TCSEXAM_RECORD_KEY`,
    else the nearest `.tcsexam-key` in its folder or above; None when there is none."""
    env = os.environ.get(KEY_ENV)
    if env:
        path = Path(env)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise InputError(f"{path}: the record key named by {KEY_ENV} cannot be read: {exc.strerror}") from None
        return _read(path, st)
    start = Path(os.path.abspath(near))
    for folder in (start, *start.parents):
        key = _own_key_in(folder)
        if key is not None:
            return key
    return None


def ensure_key(root: str | os.PathLike, near: str | os.PathLike | None = None) -> RecordKey:
    """The key for what is written under `root`: the one `find_key(near or root)` finds, else a new
    one created at `root` (mode 0600; atomic: of two writers racing, both get the first one's)."""
    found = find_key(near if near is not None else root)
    if found is not None:
        return found
    root = Path(os.path.abspath(root))
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f"{KEY_FILE}.", suffix=".tmp", dir=root)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                os.fchmod(fh.fileno(), 0o600)
                fh.write(_HEADER + secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, root / KEY_FILE)  # fails if another writer was first: use theirs
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.ENOSPC, errno.EDQUOT, errno.EPERM):
            raise InputError(f"cannot create the record key {os_error_text(exc, root / KEY_FILE)}") from None
        raise
    key = _own_key_in(root)
    if key is None:
        raise InputError(f"{root / KEY_FILE}: is not this user's regular file: cannot use it as the record key")
    return key


def run_key(output: str | os.PathLike, records_dir: str | os.PathLike, candidate_dir: str | os.PathLike) -> RecordKey:
    """The key a run seals its records and records.json with: the one both `records_dir` and the
    output's folder find, else one created in the folder holding both. Refused with one line:
    two different keys for the two, no common folder below `/`, or a key the candidate could see
    (inside its folder)."""
    out_dir = Path(os.path.abspath(output)).parent
    rec_dir = Path(os.path.abspath(records_dir))
    root = Path(os.path.commonpath([out_dir, rec_dir]))
    found_out, found_rec = find_key(out_dir), find_key(rec_dir)
    if found_out is None and found_rec is None:
        if root == Path(root.anchor):
            raise InputError(
                f"--output {output} and --records-dir {records_dir} share no folder below {root} to keep their "
                f"record key in: put them in one folder, or name a key file with {KEY_ENV}"
            )
        key = ensure_key(root)
    elif found_out is not None and found_rec is not None and found_out.path == found_rec.path:
        key = found_out
    else:
        raise InputError(
            f"--records-dir {records_dir} and --output {output} are under different record keys "
            f"({found_rec.path if found_rec else 'none'}, {found_out.path if found_out else 'none'}): "
            f"keep them in one tree, or name one key file with {KEY_ENV}"
        )
    cand = Path(os.path.abspath(candidate_dir))
    if key.path.parent == cand or cand in key.path.parents:
        raise InputError(f"{key.path}: the record key must not be inside the candidate folder {cand}")
    return key
