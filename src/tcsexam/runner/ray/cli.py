"""CLI: `tcsexam runner ray-head start | stop | address`, the Ray head shared by the Solver jobs of a
local workflow run (started in the workflow's onstart, stopped at its end)."""

from __future__ import annotations

import argparse
import os

from tcsexam.logs import logger

_log = logger("runner.head")


def register(subparsers) -> None:
    top = subparsers.add_parser("runner", help="runner services (the shared Ray head of a local workflow run)")
    sub = top.add_subparsers(dest="runner_command", metavar="ACTION", required=True)
    add_ray_head_parser(sub, help="one Ray head shared by a local workflow run's jobs")


def add_ray_head_parser(sub, help: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser("ray-head", help=help)
    p.add_argument("action", choices=("start", "stop", "address"))
    p.add_argument(
        "--state-dir",
        default=None,
        help="holds the head's pid, address and log (default: this user's default head, "
        "$TCSEXAM_RAY_HEAD or /tmp/tcsexam-ray-head-UID, which a standalone `tcsexam run` joins)",
    )
    p.add_argument("--num-cpus", type=int, default=None, help="start: CPUs of the head (default: all)")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="start: return once the head process is launched (clients wait with address --wait); "
        "stop: hand the stop to a detached process and return at once",
    )
    p.add_argument(
        "--on-demand",
        action="store_true",
        help="start: only arm the folder: the first job that chooses Ray (`tcsexam run --ray-head DIR`) starts the head",
    )
    p.add_argument("--remove-state", action="store_true", help="stop: also remove the state folder")
    p.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="address: wait this long for a head that is still starting",
    )
    p.set_defaults(handler=_ray_head)
    return p


def _ray_head(args: argparse.Namespace) -> int:
    from tcsexam.errors import UsageError
    from tcsexam.runner.ray import head as ray_head

    if args.state_dir is None:
        args.state_dir = ray_head.default_state_dir()
        if args.state_dir is None:
            raise UsageError(f"ray-head: give --state-dir ({ray_head.DEFAULT_STATE_ENV} says no default head)")
    if args.action == "start":
        cpus = args.num_cpus or len(os.sched_getaffinity(0))
        if args.on_demand:
            address = ray_head.arm(args.state_dir, cpus)
            _log.info(
                "ray head %s (%s)",
                f"reused at {address}" if address else "armed: started by the first job that uses Ray",
                args.state_dir,
            )
            return 0
        address, started = ray_head.start(args.state_dir, cpus, wait=not args.no_wait)
        where = address or "(starting)"
        _log.info("ray head %s at %s (%s)", "started" if started else "reused", where, args.state_dir)
        if address:
            print(address)
    elif args.action == "stop":
        if args.no_wait:
            stopped = ray_head.stop_detached(args.state_dir)
        else:
            stopped = ray_head.stop(args.state_dir, remove_state=args.remove_state)
        _log.info("ray head %s (%s)", "stopped" if stopped else "was not running", args.state_dir)
    else:
        address = ray_head.current_address(args.state_dir, wait_s=args.wait)
        if address:
            print(address)
    return 0
