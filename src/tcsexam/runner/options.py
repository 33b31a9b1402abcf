"""One way to build a run: the options every command that runs programs takes, and the
`RunOptions` made from them (`tcsexam run`, `construction run`, `orspace execute`, `proof check`).

`add_run_options(parser, pool=..., candidate=...)` declares them on a command (or an argument
group): always the sandbox, the docker sandbox's image, whether `auto` may fall back to local, and
the limiter; with `pool`
the pool (workers, where Ray is, retries) and the progress bar; with `candidate` what only a
candidate program has (its seed, its build step's limit). `run_options(args, base)` reads back what
was declared; what a command does not declare, or leaves at its default, is `base`'s (a command's
own defaults: `orspace execute` runs one program at a time, `proof check` one coqc in this
process). Not a command module: any command may import it.
"""

from __future__ import annotations

import argparse
import dataclasses

from tcsexam.containment import Limiter, SandboxName
from tcsexam.limits import DEFAULT_SEED, seed_option
from tcsexam.runner.engine.batch import DEFAULT_BUILD_TIMEOUT_S, PoolKind, RunOptions
from tcsexam.runner.engine.contract import DEFAULT_MAX_RETRIES
from tcsexam.runner.limiter.types import LIMITER_OPTION
from tcsexam.runner.sandboxes import SANDBOX_OPTION

#: the help lines of the run options
RUN_HELP = {
    "workers": "concurrent runs (default: this job's CPUs // the candidate's threads; "
    "with --ray-address: the cluster's CPUs // threads)",
    "ray_address": "use an existing Ray cluster (also RAY_ADDRESS); default: this user's default Ray head when "
    "one is alive (`tcsexam runner ray-head start`; TCSEXAM_RAY_HEAD=none: never), else a local Ray",
    "ray_head": "use the shared Ray head whose state folder is DIR (`tcsexam runner ray-head start --state-dir DIR`), "
    "waiting for it while it starts; a local Ray when none is alive there",
    "no_ray": "run in this process, one at a time (same executor; debugging): --pool in-process",
    "pool": "where the runs go: ray (actors), in-process (one at a time, no Ray) or auto: in process when even "
    "its worst case (every run to the wall limit) costs less than Ray's start, else Ray (default %(default)s)",
    "docker_image": "the image of the docker sandbox (default: $TCSEXAM_DOCKER_IMAGE, else the candidate image; "
    "orspace execute: $TCSEXAM_ORSPACE_IMAGE, else tcsexam-orspace:latest when present)",
    "allow_unsandboxed": "the programs are trusted: `--sandbox auto` may fall back to local "
    "(records and index.json say so)",
    "seed": "seed passed to the candidate ({seed}, TCSEXAM_SEED): 1..2^31-1, default %(default)s",
    "max_retries": "resubmissions after an infrastructure failure (lost actor, ...); default %(default)s",
    "build_timeout": "wall limit of the candidate's build step (default 600)",
    "no_progress": "no progress bar on stderr",
}

#: an argparse parser or argument group
Declarer = argparse.ArgumentParser | argparse._ArgumentGroup


def add_run_options(parser: Declarer, *, pool: bool = True, candidate: bool = True, workers: str = "") -> None:
    """Declare the run options (module docstring). `workers`: the --workers help where the
    command's default is not the candidates' (e.g. orspace execute's one at a time)."""
    h = RUN_HELP
    parser.add_argument("--sandbox", **SANDBOX_OPTION)
    parser.add_argument("--docker-image", default=None, metavar="IMAGE", help=h["docker_image"])
    parser.add_argument("--allow-unsandboxed", action="store_true", help=h["allow_unsandboxed"])
    parser.add_argument("--limiter", **LIMITER_OPTION)
    if pool:
        parser.add_argument("--workers", type=int, default=None, metavar="N", help=workers or h["workers"])
        ray_where = parser.add_mutually_exclusive_group()
        ray_where.add_argument("--ray-address", default=None, metavar="ADDR", help=h["ray_address"])
        ray_where.add_argument("--ray-head", default=None, metavar="DIR", help=h["ray_head"])
        parser.add_argument("--no-ray", action="store_true", help=h["no_ray"])
        parser.add_argument("--pool", type=PoolKind, choices=list(PoolKind), default=PoolKind.AUTO, help=h["pool"])
        retries = DEFAULT_MAX_RETRIES
        parser.add_argument("--max-retries", type=int, default=retries, metavar="K", help=h["max_retries"])
        parser.add_argument("--no-progress", action="store_true", help=h["no_progress"])
    if candidate:
        parser.add_argument("--seed", type=seed_option, default=DEFAULT_SEED, help=h["seed"])
        timeout = DEFAULT_BUILD_TIMEOUT_S
        parser.add_argument("--build-timeout", type=float, default=timeout, metavar="SECONDS", help=h["build_timeout"])


def run_options(args: argparse.Namespace, base: RunOptions | None = None) -> RunOptions:
    """The `RunOptions` of the options `add_run_options` declared on `args`' command, the rest
    (and an option left at its default) `base`'s (default `RunOptions()`)."""
    base = base or RunOptions()
    given = vars(args)
    run = dataclasses.replace(
        base,
        sandbox=SandboxName(given["sandbox"]),
        limiter=Limiter(given["limiter"]),
        allow_unsandboxed=given["allow_unsandboxed"] or base.allow_unsandboxed,
        docker_image=given["docker_image"] or base.docker_image,
    )
    if "build_timeout" in given:
        run = dataclasses.replace(run, build_timeout_s=given["build_timeout"])
    if "workers" in given:
        chosen = {k: given[k] for k in ("workers", "ray_address", "ray_head") if given[k] is not None}
        pool = dataclasses.replace(
            base.pool,
            **chosen,
            use_ray=base.pool.use_ray and not given["no_ray"],
            max_retries=given["max_retries"],
            kind=PoolKind(given["pool"]) if given["pool"] != PoolKind.AUTO else base.pool.kind,
        )
        pool.check()
        run = dataclasses.replace(run, progress=base.progress and not given["no_progress"], pool=pool)
    return run
