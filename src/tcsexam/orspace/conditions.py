"""The conditions an OR-Space workspace is staged under (the paper's ablations).

A condition is three choices, recorded in the stage manifest and carried by every prediction and
score made from the staged workspaces (so results of different conditions never mix):

- `view` (Revise workspaces): which legacy model artifacts of `original/` the agent sees:
  `revise-code` the legacy code only, `revise-model` the formulation only, `revise-all` both
  (the release as shipped). Build and Explain workspaces ignore it.
- `context` (Build and Explain workspaces): which model artifacts beside documents, data, logs and
  solver records are visible: `none`, `formulation`, `code` or `both` (the release as shipped).
  Revise workspaces take the `view` instead. Submission folders (Build `src/`, Revise
  `revised/src/`) are never filtered: they hold the agent's own program.
- `interface`: `filesystem` (the agent works in the folder) or `flat` (the agent gets one prompt
  file that serialises every visible artifact, `flat.py`; the folder is still what its program
  runs in).

A *model artifact* is a file under a `src/` folder (at any depth) that the agent did not write. It is
a *formulation* when its suffix is `.tex`, `.lp`, `.mps`, `.md`, `.txt` or its name contains
`formulation`; every other such file (`.py`, `.jl`, ...) is *code*. A condition's slug
(`<view>_<interface>_<context>`, e.g. `revise-all_filesystem_both`) names its results folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from tcsexam.errors import InputError
from tcsexam.fileio import Json, read_json
from tcsexam.orspace.release import Mode

VIEWS = ("revise-all", "revise-code", "revise-model")


class Interface(StrEnum):
    FILESYSTEM = "filesystem"
    FLAT = "flat"


class Context(StrEnum):
    BOTH = "both"
    NONE = "none"
    FORMULATION = "formulation"
    CODE = "code"


INTERFACES = tuple(i.value for i in Interface)
CONTEXTS = tuple(c.value for c in Context)
#: what a model artifact is (`artifact_kind`): the two kinds a context can keep
ARTIFACT_KINDS = (Context.CODE.value, Context.FORMULATION.value)
FORMULATION_SUFFIXES = {".tex", ".lp", ".mps", ".md", ".txt"}
#: what each view / context keeps of the model artifacts
KEPT = {
    "revise-all": set(ARTIFACT_KINDS),
    "revise-code": {"code"},
    "revise-model": {"formulation"},
    "both": set(ARTIFACT_KINDS),
    "none": set(),
    "formulation": {"formulation"},
    "code": {"code"},
}


def artifact_kind(relative: str | PurePosixPath) -> str | None:
    """`code`, `formulation`, or None (not a model artifact) for a workspace-relative path."""
    path = PurePosixPath(relative)
    if "src" not in path.parts[:-1]:
        return None
    name = path.name.lower()
    if path.suffix.lower() in FORMULATION_SUFFIXES or "formulation" in name:
        return "formulation"
    return "code"


@dataclass(frozen=True)
class Condition:
    view: str = "revise-all"
    interface: str = Interface.FILESYSTEM
    context: str = Context.BOTH

    def __post_init__(self):
        for name, value, choices in (
            ("view", self.view, VIEWS),
            ("interface", self.interface, INTERFACES),
            ("context", self.context, CONTEXTS),
        ):
            if value not in choices:
                raise InputError(f"unknown {name} {value!r} (choose {', '.join(choices)})")

    @property
    def slug(self) -> str:
        return f"{self.view}_{self.interface}_{self.context}"

    def as_dict(self) -> dict[str, str]:
        return {"view": self.view, "interface": self.interface, "context": self.context, "slug": self.slug}

    @classmethod
    def from_dict(cls, data: Json, where: str = "condition") -> Condition:
        if not isinstance(data, dict):
            raise InputError(f"{where}: a condition must be an object with view, interface and context")
        cond = cls(
            view=data.get("view", "revise-all"),
            interface=data.get("interface", "filesystem"),
            context=data.get("context", "both"),
        )
        if "slug" in data and data["slug"] != cond.slug:
            raise InputError(f"{where}: condition slug {data['slug']!r} does not match its fields ({cond.slug})")
        return cond

    @classmethod
    def parse(cls, slug: str) -> Condition:
        parts = slug.split("_")
        if len(parts) != 3:
            raise InputError(f"condition {slug!r} is not of the form <view>_<interface>_<context>")
        return cls(*parts)

    def visible(self, relative: str | PurePosixPath, mode: Mode) -> bool:
        """Is this release file visible to the agent under the condition? Only model artifacts can
        be hidden, and never the submission folders (Build `src/`, Revise `revised/src/`): the view
        acts on Revise's legacy `original/`, the context on the other modes' artifacts."""
        kind = artifact_kind(relative)
        if kind is None:
            return True
        top = PurePosixPath(relative).parts[0]
        if mode == Mode.REVISE:
            return top != "original" or kind in KEPT[self.view]
        if mode == Mode.BUILD and top == "src":
            return True
        return kind in KEPT[self.context]

    def applied(self, mode: Mode) -> dict[str, str]:
        """The parts of the condition that act on a workspace of `mode`."""
        selector = {"view": self.view} if mode == Mode.REVISE else {"context": self.context}
        return {**selector, "interface": self.interface}


DEFAULT_CONDITION = Condition()


def staged_condition(workspaces_root, declared: str | None = None) -> str | None:
    """The condition slug of a workspaces folder: its stage manifest's (`manifest.json` beside the
    workspaces), else `declared`; a manifest that disagrees with `declared` is an error (results of
    two conditions never mix)."""
    if declared is not None:
        declared = Condition.parse(declared).slug
    path = Path(workspaces_root) / "manifest.json"
    if not path.exists():
        return declared
    manifest = read_json(path, "stage manifest")
    data = manifest.get("condition") if isinstance(manifest, dict) else None
    if data is None:
        return declared
    slug = Condition.from_dict(data, str(path)).slug
    if declared is not None and declared != slug:
        raise InputError(f"{path}: staged under condition {slug}, not {declared}")
    return slug
