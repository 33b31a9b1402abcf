"""The `tcsexam` command line.

Each concern registers its own subcommands (`register(subparsers)` in its `cli` module) and keeps
heavy imports inside the handlers; `tcsexam WORD` imports only WORD's module (`COMMANDS`), so each
command starts as fast as its own imports allow.
Handlers return an exit code. `InputError` becomes one line on stderr and exit code 1;
`UsageError` exit code 2 (argparse's own usage errors exit 2 as well).
"""

from __future__ import annotations

import argparse
import atexit
import faulthandler
import importlib
import logging
import os
import sys
import threading
from pathlib import Path
from typing import NoReturn

from tcsexam import __version__
from tcsexam.errors import InputError, UsageError, os_error_text
from tcsexam.logs import setup_logging

#: every command word and the module that registers it (`register(subparsers)`), in help order.
#: `tcsexam WORD ...` loads that module alone (a Python start of a workflow job pays for its own
#: command only: `tcsexam attempts verdict-row` never imports numpy, Ray or the problem modules);
#: `tcsexam --help`, a bare `tcsexam` or an unknown word load them all.
COMMANDS: dict[str, str] = {
    "solver-score": "tcsexam.scoring.cli",  # solver-score, solver-profile, score, reference build|check
    "solver-profile": "tcsexam.scoring.cli",
    "score": "tcsexam.scoring.cli",
    "reference": "tcsexam.scoring.cli",
    "check": "tcsexam.runner.solver.check_cli",
    "generate": "tcsexam.tasks.cli",
    "run": "tcsexam.runner.cli",  # run, repair
    "repair": "tcsexam.runner.cli",
    "runner": "tcsexam.runner.ray.cli",  # runner ray-head
    "construction": "tcsexam.attempts.construction_cli",  # construction run|row
    "proof": "tcsexam.proofs.cli",  # proof check
    "attempts": "tcsexam.attempts.cli",  # verdict/attempt rows, the attempt table (the workflow's glue)
    "orspace": "tcsexam.orspace.cli",  # orspace stage|execute|score-objectives|explain-score
    "agents": "tcsexam.agents.cli",  # agents generate (models at work in staged OR-Space workspaces)
    "manifest": "tcsexam.reproduce.cli",
    "compare": "tcsexam.view.compare_cli",
    "status": "tcsexam.status",
    "view": "tcsexam.view.cli",  # the static results explorer
    "export": "tcsexam.export.cli",  # a per-instance table; the Every Eval Ever schema
    "job-failed": "tcsexam.jobfail",  # the rules' last word on a failed command
    "twins": "tcsexam.twins.cli",  # twins make|translate
    "scan-candidate": "tcsexam.twins.cli",
    "doctor": "tcsexam.workflow.doctor_cli",  # what works here
    "plan": "tcsexam.campaign.cli",  # a campaign's core-hours, submissions, wall time
    "batch": "tcsexam.workflow.batch_cli",  # batch run|take: several cluster jobs as one (the workflow)
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def _command_modules(argv: list[str] | None) -> tuple[str, ...] | None:
    """The module of the command `argv` names (None: every module, for --help or a bad word)."""
    words = sys.argv[1:] if argv is None else argv
    command = next((w for w in words if not w.startswith("-")), None)
    return (COMMANDS[command],) if command in COMMANDS else None


def build_parser(modules: tuple[str, ...] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tcsexam",
        description="Evaluate candidate solvers and agent submissions (TCSExam, OR-Space).",
    )
    parser.add_argument("--version", action="version", version=f"tcsexam {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more log lines (debug); log lines carry UTC time and level"
    )
    parser.add_argument("-q", "--quiet", action="count", default=0, help="fewer log lines (-q warnings, -qq errors)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in modules or COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # a concern not installed in this build
                continue
            raise
        module.register(sub)
    return parser


def _input_paths(args: argparse.Namespace) -> set[Path]:
    """Every path-like argument but --output, resolved (files the command reads)."""
    found: set[Path] = set()
    for name, value in vars(args).items():
        if name == "output" or name == "handler":
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, (str, Path)) and v:
                try:
                    found.add(Path(v).resolve())
                except (OSError, RuntimeError, ValueError):
                    pass
    return found


def _set_aside_stale_output(args: argparse.Namespace) -> str:
    """After a refusal: an older --output must not pass for this run's result. Move it aside
    (`<output>.stale`, never deleted) unless it is one of the command's inputs; say what happened."""
    output = getattr(args, "output", None)
    if not isinstance(output, str) or not output:
        return ""
    path = Path(output)
    try:
        if not path.is_file() or path.resolve() in _input_paths(args):
            return ""
        dest = path.with_name(path.name + ".stale")
        n = 1
        while dest.exists():
            n += 1
            dest = path.with_name(f"{path.name}.stale{n}")
        os.replace(path, dest)
    except OSError as exc:
        return f" (an older {path} is left from a previous run and could not be moved aside: {exc.strerror})"
    return f" (an older {path} from a previous run was moved to {dest}: it is not this run's result)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(_command_modules(argv))
    args = parser.parse_args(argv)
    log = setup_logging(args.verbose - args.quiet)
    try:
        return int(args.handler(args) or 0)
    except InputError as exc:
        log.error("tcsexam %s: error: %s%s", args.command, exc, _set_aside_stale_output(args))
        return int(exc.exit_code)
    except UsageError as exc:
        log.error("tcsexam %s: usage error: %s%s", args.command, exc, _set_aside_stale_output(args))
        return 2
    except OSError as exc:  # a full disk, a read-only folder, ...: one line naming the path
        log.error("tcsexam %s: error: %s%s", args.command, os_error_text(exc), _set_aside_stale_output(args))
        return 1
    except KeyboardInterrupt:
        log.error("tcsexam %s: interrupted", args.command)
        return 130


def run_command(*, forked: bool = False) -> None:
    """The console script: `main`, then the process ends. A process that connected to Ray ends
    with `os._exit` once its output is flushed: Ray's core worker can deadlock in its own teardown
    at interpreter exit (its IO thread blocked on a lock the exiting thread holds; seen under
    load, a finished `tcsexam run` that never exited and stalled its workflow). Everything the
    command writes is on disk by then; there is nothing left for the interpreter's exit to do.
    A fatal signal in the process (a segfault in Ray's core worker: seen once under load, a
    `tcsexam run` on the shared head that died with 139 after its last record and no word) writes
    every thread's Python stack to stderr first (`faulthandler`), the job's log.

    `forked`: a fork server's command (`tcsexam.forkserver`), which ends as the interpreter's exit
    begins (its threads joined, its atexit hooks run, its streams flushed: `end_process`) and skips
    the teardown of the server's hundreds of modules, 40 ms of every served job's time spent
    freeing objects of a process that is about to end. An `exit` inside the command (argparse's
    usage error) ends it the same way, with the status Python would give it."""
    try:
        faulthandler.enable()
    except (OSError, ValueError):  # a stderr without a file descriptor (captured in-process)
        pass
    if not forked:
        code = main()
    else:
        try:
            code = main()
        except SystemExit as stop:
            code = exit_status(stop)
    if "ray._raylet" in sys.modules:
        end_process(code, hooks=False)  # Ray's own atexit hook is the teardown that deadlocks
    if forked:
        end_process(code, hooks=True)
    raise SystemExit(code)


def exit_status(stop: SystemExit) -> int:
    """The status the interpreter gives an uncaught SystemExit (a message is printed, status 1)."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code & 0xFF
    print(stop.code, file=sys.stderr)
    return 1


def end_process(code: int, *, hooks: bool) -> NoReturn:
    """End this process now with `code`, as the interpreter's exit would up to its teardown: with
    `hooks` its other threads joined and its atexit hooks run (logging's flush among them), then
    the standard streams flushed; without, logging flushed. Objects still alive are not finalised:
    every command writes its files whole (atomic writes, closed handles) before it returns."""
    if hooks:
        threading._shutdown()  # type: ignore[attr-defined]  # the interpreter's own first step at exit
        atexit._run_exitfuncs()
    else:
        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said there
            pass
    os._exit(code)


if __name__ == "__main__":
    run_command()
