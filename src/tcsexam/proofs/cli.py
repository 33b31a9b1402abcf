"""`tcsexam proof check`: judge one proof submission (a folder with proof.v) with Coq."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import actions, command, required
from tcsexam.runner.options import add_run_options, run_options


def register(sub: argparse._SubParsersAction) -> None:
    top = actions(
        sub,
        "proof",
        "proof_command",
        help="check theorem / open-conjecture proofs with Coq (docs/proofs.md)",
        description="Proof tasks (docs/proofs.md): check a submission's proof.v against the task's statement.",
    )
    p = command(top, "check", _check)
    p.add_argument("--task", required=True, help="proof task id or task file")
    p.add_argument("--submission", required=True, metavar="DIR", help="folder with proof.v")
    required(p, "--output", output="verdict.json")
    p.add_argument("--model", default=None, help="the verdict's model (default: the folder's grandparent's name)")
    p.add_argument("--attempt", default=None, help="the verdict's attempt (default: the folder's name)")
    add_run_options(p, pool=False, candidate=False)  # one coqc at a time, in this process


def _check(args: argparse.Namespace) -> int:
    """check SUBMISSION/proof.v against the task's statement; write the verdict

    Exit 0 whatever the verdict (complete, incomplete, invalid, timeout, memout, crash,
    infrastructure_error); 1 on bad input (task file, folder, no coqc of the task's version)."""
    from pathlib import Path

    from tcsexam.cliutil import sigterm_as_exit
    from tcsexam.proofs.check import check_proof, write_verdict
    from tcsexam.runner.engine.batch import RUN_ONE
    from tcsexam.runner.solver.orchestrate import hidden_paths

    out = Path(args.output)
    # the verdict's folder exists before the checker starts: the sandbox hides it (bwrap cannot
    # hide a folder that is not there yet, and one made later would be visible inside)
    out.parent.mkdir(parents=True, exist_ok=True)
    with sigterm_as_exit():
        verdict = check_proof(
            args.task,
            args.submission,
            run=run_options(args, base=RUN_ONE),
            model=args.model,
            attempt=args.attempt,
            hidden_paths=hidden_paths(out, out.parent),
        )
    write_verdict(out, verdict)
    print(f"{verdict['item']}: {verdict['status']}: {verdict['reason']} -> {out}")
    return 0
