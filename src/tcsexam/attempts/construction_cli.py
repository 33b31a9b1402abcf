"""`tcsexam construction run` (judge one construction submission) and `tcsexam construction row`
(its attempt row and checker output)."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import actions, command, pick, required
from tcsexam.runner.options import add_run_options, run_options


def register(sub: argparse._SubParsersAction) -> None:
    top = actions(
        sub,
        "construction",
        "construction_command",
        help="judge construction submissions (a program writing the object, or construction.txt)",
        description="Construction tasks (docs/constructions.md): run or check a submission, then "
        "turn its record into the attempt row.",
    )
    run = command(top, "run", _run)
    run.add_argument("--task", required=True, help="construction task id or task file")
    run.add_argument("--submission", required=True, metavar="DIR", help="folder with solver.yaml or construction.txt")
    run.add_argument("--attempt", default=None, metavar="ID")
    run.add_argument("--output", required=True, metavar="FILE", help="records.json")
    run.add_argument("--records-dir", default=None, metavar="DIR", help="default: records/ beside --output")
    add_run_options(run)

    row = command(top, "row", _row)
    required(row, "--records", "--task", "--model", "--attempt")
    required(row, "--checker-output", "--output", checker_output="FILE", output="ROW.json")


def _run(args: argparse.Namespace) -> int:
    """judge solvers/<model>/<item>/<attempt>/: solver.yaml runs like `tcsexam run`, construction.txt is checked

    Write records.json with the submission's one record (status, value A, reward, message). A
    solver.yaml program runs through tcsexam run's runner (limits, sandbox, records, resume);
    construction.txt is checked in this process. Exit 0 whatever the verdict; 1 on bad input."""
    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.runner.construction import judge_submission

    with sigterm_as_exit():
        judge_submission(
            **pick(args, "task", "submission", "output", "attempt", "records_dir", "seed"), options=run_options(args)
        )
    return 0


def _row(args: argparse.Namespace) -> int:
    """records.json of a construction submission -> its attempt row (original_task_score = reward)

    ok -> the reward; invalid, certificate_failed, timeout, memout, crash -> 0 with the status kept;
    infrastructure_error -> judge_failed; no records -> not_finished. The checker's full output
    (value, status, reward, message, checker) goes to --checker-output."""
    from tcsexam.attempts.construction import construction_row

    row = construction_row(**pick(args, "task", "model", "attempt", "records", "checker_output", "output"))
    from tcsexam.logs import say_for

    say_for("construction row", "attempts")(
        f"{row.model},{row.track},{row.item},{row.attempt}: {row.score_status} {row.score}"
    )
    return 0
