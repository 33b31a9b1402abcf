"""How a run is held: the closed vocabularies of the sandboxes (`SandboxName`) and of the limiters
(`Limiter`). They sit below the records that name them and the runner that implements them
(`tcsexam.runner.sandboxes`, `tcsexam.runner.limiter`)."""

from __future__ import annotations

from enum import StrEnum
from typing import TypedDict


class SandboxName(StrEnum):
    """A sandbox (docs/runner.md#sandboxes): what a command chooses (`--sandbox`: `auto` or one of
    the four) and what a record says it ran in (one of the four, or `none`)."""

    AUTO = "auto"  #: a choice: the strongest sandbox that works here (`sandboxes.choose_sandbox`)
    LOCAL = "local"  #: limits only
    BWRAP = "bwrap"
    DOCKER = "docker"
    APPTAINER = "apptainer"
    NONE = "none"  #: a record's: checked in the harness's own process, nothing run (a construction.txt)


#: the sandboxes that run programs (`tcsexam.runner.sandboxes.SANDBOXES`)
SANDBOX_NAMES: tuple[SandboxName, ...] = (
    SandboxName.LOCAL,
    SandboxName.BWRAP,
    SandboxName.DOCKER,
    SandboxName.APPTAINER,
)


class Limiter(StrEnum):
    """What enforces a run's limits (docs/runner.md#limiters): what a command chooses (`auto` picks
    the strongest that works, `light`, `cgroup`, `benchexec`) and what a record says held the run
    (`light`, `benchexec`, the cgroup version, or `docker`: the Docker sandbox's own limits)."""

    AUTO = "auto"
    LIGHT = "light"
    CGROUP = "cgroup"
    BENCHEXEC = "benchexec"
    CGROUP_V1 = "cgroup-v1"  #: a record's: `cgroup` on cgroup v1
    CGROUP_V2 = "cgroup-v2"  #: a record's: `cgroup` on cgroup v2
    DOCKER = "docker"  #: a record's: the docker sandbox's own limits


#: what `--limiter` and a task may choose
LIMITER_CHOICES: tuple[Limiter, ...] = (Limiter.AUTO, Limiter.LIGHT, Limiter.CGROUP, Limiter.BENCHEXEC)


class ChoiceOption(TypedDict):
    """The keyword arguments of a command's `--sandbox` or `--limiter` (`add_argument(**option)`)."""

    default: str
    choices: tuple[str, ...]
    help: str
