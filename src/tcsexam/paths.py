"""Where the project's data folders are: config/, references/, solvers/.

The package is installed from the repository (`pip install -e .`); its data lives beside `src/`.
`TCSEXAM_ROOT` overrides the location (for a workflow copied elsewhere); otherwise the nearest
folder above the working directory holding `config/suites/` wins, then the repository this
package was installed from.
"""

from __future__ import annotations

import os
import stat
from functools import cache
from pathlib import Path


def _is_root(path: Path) -> bool:
    return (path / "config" / "suites").is_dir()


@cache
def project_root() -> Path:
    env = os.environ.get("TCSEXAM_ROOT")
    if env:
        return Path(env).resolve()
    cwd = Path.cwd().resolve()
    for candidate in (cwd, *cwd.parents):
        if _is_root(candidate):
            return candidate
    return Path(__file__).resolve().parents[2]


def config_dir() -> Path:
    return project_root() / "config"


def references_dir() -> Path:
    return project_root() / "references"


def solvers_dir() -> Path:
    return project_root() / "solvers"


def config_file(spec: str | os.PathLike, kind: str) -> Path:
    """A file named by id or by path: anything ending in .yaml/.yml is a path, an id resolves to
    config/<kind>/<id>.yaml (kind: "tasks", "suites")."""
    path = Path(spec)
    if path.suffix in (".yaml", ".yml"):
        return path
    return config_dir() / kind / f"{spec}.yaml"


def cache_dir() -> Path:
    """The harness's own cache ($TCSEXAM_CACHE, default ~/.cache/tcsexam): the compiled limiter
    launcher, the schema checks already passed. Hidden from candidates (bwrap's harness_homes)."""
    return Path(os.environ.get("TCSEXAM_CACHE") or Path.home() / ".cache" / "tcsexam")


def harness_owned(path: Path) -> bool:
    """`path` is a regular file that, like its folder, belongs to this process's user and nobody
    else can write: what a cached file must be before the harness trusts it."""
    try:
        for item in (path, path.parent):
            st = os.lstat(item)
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return False
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
