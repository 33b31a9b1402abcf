"""The project's hashes and digests, in one base module (imported by every layer, importing none
of them): file hashes, text hashes, candidate hashes, record keys and record digests.

- `hash_file`: sha256 of a file's bytes (task files' instance hashes, record keys, the manifest,
  sealed files' inputs); `hash_text` the same of a text's UTF-8 bytes.
- `hash_candidate`: sha256 over a candidate folder's files (`candidate_files`), without following
  links or opening anything but regular files.
- `record_key`: the key of one (candidate, instance, limits, harness, sandbox, seed) combination
  that decides whether a stored record may be reused.
- `record_digest` / `digest_problem`: the HMAC a record (or a sealed derived file) carries of its
  own canonical content, under the results tree's key (`tcsexam.records.key`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tcsexam import HARNESS_VERSION
from tcsexam.errors import InputError
from tcsexam.fileio import Json, file_kind
from tcsexam.records.key import DIGEST_PREFIX, KEY_FILE, RecordKey

#: Folders and files of a candidate that do not define it (caches the interpreter writes).
IGNORED_DIRS = frozenset({"__pycache__", ".git", ".pytest_cache", ".mypy_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo")
#: The field that holds a record's digest of its own content.
DIGEST_FIELD = "digest"
_CHUNK = 1 << 20


def hash_file(path: str | os.PathLike) -> str:
    """sha256 (hex) of a file's bytes (`hashlib.file_digest`): the one file hash of the project
    (record keys, task files' instance hashes, the manifest, sealed files' inputs); InputError
    naming the file if it cannot be read."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise InputError(f"{Path(path)}: cannot read file: {exc.strerror or exc}") from None


def hash_text(text: str) -> str:
    """sha256 (hex) of a text's UTF-8 bytes: what `hash_file` gives for the file holding it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_files(directory: str | os.PathLike) -> list[Path]:
    """The files that define a candidate, as sorted relative paths (caches left out): regular
    files, symbolic links (a link to a folder too: listed, not followed) and any other kind of
    file (a FIFO, a socket, a device), never opened here."""
    root = Path(directory)
    files = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS and d not in links)
        for name in (*filenames, *links):
            if name.endswith(IGNORED_SUFFIXES):
                continue
            files.append((Path(dirpath) / name).relative_to(root))
    return sorted(files, key=lambda p: p.as_posix())


_NOFOLLOW_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


def _hash_entry_into(h: hashlib._Hash, full: Path) -> None:
    """One candidate file into `h`: a link by its target text, a regular file by size, executable
    bit and bytes (opened with O_NOFOLLOW | O_NONBLOCK and checked with fstat, so a FIFO or a link
    swapped in meanwhile is never waited on or followed), anything else by its kind alone."""
    st = os.lstat(full)
    if stat.S_ISLNK(st.st_mode):
        h.update(b"link\0" + os.readlink(full).encode("utf-8", "surrogateescape") + b"\0")
        return
    if not stat.S_ISREG(st.st_mode):
        h.update(b"special\0" + file_kind(st.st_mode).encode() + b"\0")
        return
    fd = os.open(full, _NOFOLLOW_READ)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            h.update(b"special\0" + file_kind(st.st_mode).encode() + b"\0")
            return
        h.update(b"file\0%d\0%d\0" % (st.st_size, st.st_mode & 0o111))
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


def hash_candidate(directory: str | os.PathLike) -> str:
    """sha256 over the candidate's relative paths and file contents, in sorted order.

    A symbolic link is hashed by its target text (a link out of the folder is not followed), a
    FIFO, socket or device by its kind: nothing but a regular file is opened, so a FIFO planted
    in the folder (under `local`) cannot hang the hash.
    """
    root = Path(directory)
    h = hashlib.sha256()
    for rel in candidate_files(root):
        full = root / rel
        h.update(b"path\0" + rel.as_posix().encode("utf-8", "surrogateescape") + b"\0")
        try:
            _hash_entry_into(h, full)
        except OSError as exc:
            raise InputError(f"{full}: cannot read candidate file: {exc.strerror or exc}") from None
    return h.hexdigest()


def _canonical(obj: Json) -> Json:
    """JSON-able form with stable ordering; numbers that are integral floats stay distinct."""
    return json.loads(json.dumps(obj, sort_keys=True, default=str))


def record_key(
    *,
    candidate_hash: str,
    instance_hash: str,
    limits: Mapping[str, Any],
    sandbox: str,
    seed: int,
    meta: Mapping[str, Any] | None = None,
    problem: str | None = None,
    harness_version: str = HARNESS_VERSION,
) -> str:
    """The key of one (candidate, instance, limits, harness, sandbox, seed) combination."""
    payload = {
        "candidate": candidate_hash,
        "instance": instance_hash,
        "limits": _canonical(dict(limits)),
        "sandbox": sandbox,
        "seed": seed,
        "meta": _canonical(dict(meta or {})),
        "problem": problem,
        "harness_version": harness_version,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical_bytes(data: Mapping[str, object]) -> bytes:
    body = {k: v for k, v in data.items() if k != DIGEST_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False, default=str).encode("utf-8")


def record_digest(data: Mapping[str, object], key: RecordKey) -> str:
    """The digest of a record's (or sealed file's) canonical content: every field but `digest`,
    keys sorted, compact JSON, HMAC-SHA256 under the results tree's key
    (`hmac-sha256:<key id>:<hex>`, see `tcsexam.records.key`): the one digest of the project.

    A record read back from its file gives the same digest (JSON floats round-trip exactly), so a
    mismatch means the record was edited (or damaged) after it was written; without the key
    nobody can compute a digest that matches.
    """
    return key.digest(_canonical_bytes(data))


def digest_problem(data: Json, key: RecordKey | None) -> str | None:
    """Why a decoded record fails its own digest under `key` (None when it passes): no digest, no
    key to check it with, a plain (unkeyed) sha256, another tree's key, or a mismatch."""
    if not isinstance(data, dict):
        return "not a JSON object"
    stored = data.get(DIGEST_FIELD)
    if stored is None:
        return "no digest"
    if not isinstance(stored, str) or not stored.startswith(DIGEST_PREFIX):
        return "unkeyed digest (a plain sha256 anyone can recompute; not sealed with this tree's record key)"
    if key is None:
        return f"no record key ({KEY_FILE}) in its folder or above to check it with (see docs/runner.md)"
    key_id, _, _ = stored.removeprefix(DIGEST_PREFIX).partition(":")
    if key_id != key.id:
        return f"sealed under another record key ({key_id}, this tree's is {key.id}): copied without its key?"
    try:
        actual = record_digest(data, key)
    except (TypeError, ValueError):
        return "content cannot be digested"
    if not hmac.compare_digest(stored, actual):
        return "digest mismatch (edited after it was written)"
    return None
