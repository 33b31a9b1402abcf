"""`tcsexam check` (one certificate against one instance) and `tcsexam generate` (seeded instances)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tcsexam.errors import InputError, UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="check one certificate against one instance",
        description="Check a solver's certificate against an instance and print status, value, "
        "claimed value, original checker reward and message. Exit 0 whatever the verdict; 1 on "
        "bad input (missing file, unreadable instance).",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", help="task id (config/tasks/<id>.yaml) or path to a task file")
    which.add_argument(
        "--problem",
        help="problem name (maxcut, sat, tsp, coloring, maxsat), "
        "for an instance outside any task (no metadata, so no reward)",
    )
    p.add_argument("--instance", required=True, help="an instance name of the task, or the path of an instance file")
    p.add_argument("--certificate", required=True, help="the certificate file the solver wrote")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    p.set_defaults(handler=check_main)

    g = sub.add_parser(
        "generate",
        help="write seeded random instances of a problem",
        description="Write COUNT seeded random instances (the same seed gives the same bytes).",
    )
    g.add_argument("--problem", required=True, help="maxcut, sat, tsp, coloring or maxsat")
    g.add_argument(
        "--size", required=True, type=int, help="vertices (maxcut, coloring), variables (sat, maxsat) or cities (tsp)"
    )
    g.add_argument("--count", type=int, default=1, help="number of instances (default 1)")
    g.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    g.add_argument("--output-dir", required=True, help="folder to write the instances into")
    g.add_argument(
        "--format",
        choices=("new", "old"),
        default="new",
        help="maxsat only: 'new' h-line WCNF (default) or 'old' 'p wcnf ... top'",
    )
    g.set_defaults(handler=generate_main)


def _resolve(args):
    from tcsexam.problems import get_problem

    if args.problem:
        problem = get_problem(args.problem)
        return problem, Path(args.instance), {}, args.instance
    from tcsexam.tasks import load_task

    task = load_task(args.task)
    problem = task.problem_impl
    for inst in task.instances:
        if inst.name == args.instance:
            return problem, inst.path, inst.meta, inst.name
    path = Path(args.instance)
    if not path.exists():
        raise InputError(f"{args.instance}: neither an instance of task {task.id} nor a file")
    resolved = path.resolve()
    for inst in task.instances:
        if inst.path.resolve() == resolved:
            return problem, inst.path, inst.meta, inst.name
    return problem, path, {}, str(path)


def check_main(args) -> int:
    problem, path, meta, name = _resolve(args)
    instance = problem.parse_instance(path)
    cert = Path(args.certificate)
    try:
        data = cert.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{cert}: certificate file not found") from None
    except OSError as exc:
        raise InputError(f"{cert}: cannot read certificate: {exc.strerror or exc}") from None
    result = problem.check_certificate(instance, data, meta)
    out = {
        "instance": name,
        "problem": problem.name,
        "status": result.status,
        "value": result.value,
        "solved": result.solved,
        "claimed": result.claimed,
        "reward": result.reward,
        "message": result.message,
    }
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            if key == "solved" and problem.kind != "solve":
                continue
            print(f"{key}: {'-' if value is None else value}")
    return 0


def generate_main(args) -> int:
    import numpy as np

    from tcsexam.fileio import atomic_write_text
    from tcsexam.problems import get_problem

    problem = get_problem(args.problem)
    if args.size < 1:
        raise UsageError("--size must be at least 1")
    if args.count < 1:
        raise UsageError("--count must be at least 1")
    if args.seed < 0:
        raise UsageError("--seed must be non-negative")
    if args.format != "new" and problem.name != "maxsat":
        raise UsageError("--format applies to --problem maxsat only")
    out = Path(args.output_dir)
    children = np.random.SeedSequence(args.seed).spawn(args.count)
    for k, child in enumerate(children, start=1):
        rng = np.random.default_rng(child)
        if problem.name == "maxsat":
            text = problem.generate(rng, args.size, form=args.format)
            tag = f"-{args.format}"
        else:
            text = problem.generate(rng, args.size)
            tag = ""
        path = out / f"{problem.name}{tag}-n{args.size}-s{args.seed}-{k}{problem.instance_suffix}"
        atomic_write_text(path, text)
        print(path)
    return 0
