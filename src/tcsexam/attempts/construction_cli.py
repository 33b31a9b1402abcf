"""`tcsexam construction run` (judge one construction submission) and `tcsexam construction row`
(its attempt row and checker output)."""

from __future__ import annotations

import argparse

from tcsexam.runner.pool import DEFAULT_MAX_RETRIES
from tcsexam.runner.sandboxes import SANDBOX_OPTION


def register(sub: argparse._SubParsersAction) -> None:
    top = sub.add_parser(
        "construction",
        help="judge construction submissions (a program writing the object, or construction.txt)",
        description="Construction tasks (docs/constructions.md): run or check a submission, then "
        "turn its record into the attempt row.",
    )
    actions = top.add_subparsers(dest="construction_command", metavar="ACTION", required=True)
    run = actions.add_parser(
        "run",
        help="judge solvers/<model>/<item>/<attempt>/: solver.yaml runs like `tcsexam run`, construction.txt is checked",
        description="Write records.json with the submission's one record (status, value A, reward, "
        "message). A solver.yaml program runs through tcsexam run's runner (limits, sandbox, records, "
        "resume); construction.txt is checked in this process. Exit 0 whatever the verdict; 1 on bad input.",
    )
    run.add_argument("--task", required=True, help="construction task id or task file")
    run.add_argument("--submission", required=True, metavar="DIR", help="folder with solver.yaml or construction.txt")
    run.add_argument("--attempt", default=None, metavar="ID")
    run.add_argument("--output", required=True, metavar="FILE", help="records.json")
    run.add_argument("--records-dir", default=None, metavar="DIR", help="default: records/ beside --output")
    run.add_argument("--workers", type=int, default=None, metavar="N")
    run.add_argument("--ray-head", default=None, metavar="DIR", help="the shared Ray head's state folder")
    run.add_argument("--no-ray", action="store_true", help="run the program in this process (same executor)")
    run.add_argument("--sandbox", **SANDBOX_OPTION)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--limiter", default="auto", choices=["auto", "light", "cgroup", "benchexec"])
    run.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES, metavar="K")
    run.add_argument("--no-progress", action="store_true")
    run.set_defaults(handler=_run)

    row = actions.add_parser(
        "row",
        help="records.json of a construction submission -> its attempt row (original_task_score = reward)",
        description="ok -> the reward; invalid, certificate_failed, timeout, memout, crash -> 0 with the "
        "status kept; infrastructure_error -> judge_failed; no records -> not_finished. The checker's "
        "full output (value, status, reward, message, checker) goes to --checker-output.",
    )
    row.add_argument("--records", required=True)
    row.add_argument("--task", required=True)
    row.add_argument("--model", required=True)
    row.add_argument("--attempt", required=True)
    row.add_argument("--checker-output", required=True, metavar="FILE")
    row.add_argument("--output", required=True, metavar="ROW.json")
    row.set_defaults(handler=_row)


def _run(args: argparse.Namespace) -> int:
    from tcsexam.runner.construction import judge_submission
    from tcsexam.runner.ray_job import sigterm_as_exit

    with sigterm_as_exit():
        judge_submission(
            task=args.task,
            submission=args.submission,
            output=args.output,
            attempt=args.attempt,
            records_dir=args.records_dir,
            workers=args.workers,
            ray_head=args.ray_head,
            use_ray=not args.no_ray,
            sandbox=args.sandbox,
            seed=args.seed,
            limiter=args.limiter,
            max_retries=args.max_retries,
            progress=not args.no_progress,
        )
    return 0


def _row(args: argparse.Namespace) -> int:
    from tcsexam.attempts.construction import construction_row

    row = construction_row(
        task=args.task,
        model=args.model,
        attempt=args.attempt,
        records=args.records,
        checker_output=args.checker_output,
        output=args.output,
    )
    print(f"{row.model},{row.track},{row.item},{row.attempt}: {row.score_status} {row.score}")
    return 0
