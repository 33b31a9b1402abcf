"""Sandboxes, one module each: local (limits only), bwrap, docker, apptainer.

`get_sandbox(name, **options)` returns a sandbox object; call `.check_available()` once at the
start of a run: it raises `InputError` with one clear line when the sandbox cannot run here.
"""

from __future__ import annotations

import importlib

from tcsexam.errors import InputError
from tcsexam.runner.sandboxes.base import Sandbox

#: sandbox name -> (module, class)
SANDBOXES: dict[str, tuple[str, str]] = {
    "local": ("tcsexam.runner.sandboxes.local", "LocalSandbox"),
    "bwrap": ("tcsexam.runner.sandboxes.bwrap", "BwrapSandbox"),
    "docker": ("tcsexam.runner.sandboxes.docker", "DockerSandbox"),
    "apptainer": ("tcsexam.runner.sandboxes.apptainer", "ApptainerSandbox"),
}
NAMES = tuple(SANDBOXES)


def get_sandbox(name: str, **options) -> Sandbox:
    """The sandbox called `name` (local|bwrap|docker|apptainer); InputError for another name."""
    try:
        module_name, class_name = SANDBOXES[name]
    except KeyError:
        raise InputError(f"unknown sandbox {name!r}; choose one of {', '.join(NAMES)}") from None
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)


__all__ = ["NAMES", "SANDBOXES", "Sandbox", "get_sandbox"]
