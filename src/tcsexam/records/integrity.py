"""Self-checking result files: a digest of their own content and the sha256 of their inputs.

Instance records carry `digest` (see `tcsexam.records.digest.record_digest`: an HMAC under the results
tree's key, `tcsexam.records.key`). The derived JSON files the workflow reads back (relative.json,
attempt rows, index.json's checksums) carry the same kind of `digest`, under the key of the tree
the file is in (`at`: the file's path), and,
where they are computed from other files, `inputs_sha256`: {name: sha256 of that file's bytes}.
A file whose digest does not match was edited or damaged; one whose recorded input checksums differ
from the inputs on disk is stale. Either way it is not trusted: `tcsexam.workflow.heal` sets it
aside so the next `snakemake` run rebuilds it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject
from tcsexam.records.digest import DIGEST_FIELD, digest_problem, hash_file, record_digest
from tcsexam.records.key import ensure_key, find_key

INPUTS_FIELD = "inputs_sha256"


def file_sha256(path: str | os.PathLike) -> str | None:
    """'sha256:<hex>' of a file's bytes; None when it does not exist or cannot be read."""
    try:
        return "sha256:" + hash_file(path)
    except InputError:
        return None


def seal(
    data: Mapping[str, Json], inputs: Mapping[str, str | os.PathLike[str]] | None, *, at: str | os.PathLike
) -> JsonObject:
    """`data` plus `inputs_sha256` (when inputs are named) and `digest` (last, over the rest), for
    the file at `at` (sealed with its tree's key, created beside it when the tree has none)."""
    out = {k: v for k, v in data.items() if k not in (DIGEST_FIELD, INPUTS_FIELD)}
    if inputs is not None:
        out[INPUTS_FIELD] = {name: file_sha256(path) for name, path in inputs.items()}
    out[DIGEST_FIELD] = record_digest(out, ensure_key(Path(os.path.abspath(at)).parent))
    return out


def require_sound(data: Mapping[str, Json], what: str, *, at: str | os.PathLike) -> None:
    """Refuse a sealed file (read from `at`) that fails its own digest (`what` names it, e.g.
    "FILE: attempt row"); one written before digests existed, without one, passes."""
    if DIGEST_FIELD in data and (problem := digest_problem(data, find_key(at))) is not None:
        raise InputError(f"{what} fails its integrity check ({problem}); rerun to rebuild it")


def seal_problem(
    data: Json, inputs: Mapping[str, str | os.PathLike[str]] | None = None, *, at: str | os.PathLike
) -> str | None:
    """Why a decoded sealed file (read from `at`) cannot be trusted (None when it can): it fails
    its digest, or one of the named inputs is not the file it was computed from."""
    problem = digest_problem(data, find_key(at))
    if problem is not None:
        return problem
    if inputs:
        recorded = data.get(INPUTS_FIELD)
        if not isinstance(recorded, dict):
            return f"no {INPUTS_FIELD} (it cannot be checked against its inputs)"
        for name, path in inputs.items():
            if recorded.get(name) != file_sha256(path):
                state = "missing" if not Path(path).exists() else "changed"
                return f"stale: its input {path} is {state} since it was computed"
    return None
