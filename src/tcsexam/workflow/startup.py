"""What the workflow does when its Snakefile is read, before any job: rules/common.smk calls
`prepare()`.

1. `tcsexam` must be on PATH for the rules' shell commands: when it is not (e.g.
   `.venv/bin/snakemake` without the venv activated) the `tcsexam` beside the running Python is put
   first on PATH; when there is none, one clear line says to activate the venv.
2. The config is checked (`Plan.check`): a typo in a model name, `solvers_dir`, `verdicts_dir` or
   the reference stops here, so `snakemake -n` shows it. Whether the run is batched is decided
   (`batch.enabled: auto`: when the jobs go to a cluster; tcsexam.workflow.batching.decide) into the
   plan's own config, and handed down in the environment to the Snakemake inside each job.
3. The evaluation tree's record key (`tcsexam.records.key`, `<results>/<suite>/<protocol>/.tcsexam-key`)
   is created when it has none, so every job of the run seals its records with the one key, and
   the tree copied (e.g. for `tcsexam compare`) carries it.
4. A sandbox for the candidates works here (`check_sandbox`: the config's `run.sandbox`, `auto`
   never `local` unless `run.allow_unsandboxed`), checked once in the main process of a run or a
   dry run, so that `snakemake -n` says it, not a failed job's log. On a cluster (no local
   execution) the jobs choose on their nodes: a sandbox that cannot run on the submit host is
   only noted.
5. The other tools the run needs work here (`check_tools`: `tcsexam doctor`'s checks of the proof
   checker and the DRAT checker): each that does not is one warning line with the true cause and
   the fix (a missing coqc is "not installed"), and the run goes on: the jobs that need it fail,
   every other item is judged, and index.json is incomplete (tcsexam.workflow.salvage). In a run
   these checks (about a second: Coq and the DRAT checker each run once under the limiter) go on
   in a thread while Snakemake reads the rules and builds the DAG; `onstart` waits for them
   (`finish_tool_checks`), so their lines come before the first job. A dry run waits at once.
6. The derived files are checked (`heal`): those that cannot be trusted are set aside, so this
   run rebuilds them. Skipped while another Snakemake holds the working directory's lock, in a
   job step, and for commands that run nothing (--unlock, --lint, --report, ...); a dry run
   only lists what it would set aside.
7. A run's fork server (config `run.fork_server`, `start_fork_server`) starts, in a run's main
   process whose working directory no other Snakemake holds: its imports and its one sandbox
   check go on while Snakemake reads the rules and builds the DAG, so the run's first jobs find it
   listening (started at `onstart`, it listened 1.2 s after the first jobs, which each started
   their own Python).

Every error here is one line on stderr and exit status 1, never a traceback.

At the run's start (`onstart`), `keep_going` makes the run go on past a failed job, as
`--keep-going` does: Snakemake has no directive for it, and its default (stop scheduling at the
first failure) would leave every item after a failed one unjudged.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import NoReturn

import snakemake.cli as snakemake_cli
from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

from tcsexam import forkserver, launch
from tcsexam.doctor import Need, checks_for, failures, needs_of, plan_options
from tcsexam.errors import InputError, os_error_text
from tcsexam.records.key import ensure_key
from tcsexam.runner.limiter.proctable import stop_being_subreaper
from tcsexam.runner.ray import head as ray_head
from tcsexam.runner.sandboxes import choose_sandbox
from tcsexam.workflow.batching import AUTO, decide, hand_down
from tcsexam.workflow.heal import heal
from tcsexam.workflow.plan import Plan

#: Snakemake options after which nothing is executed (heal would only disturb the files).
_NO_RUN = {
    "--unlock",
    "--lint",
    "--report",
    "--list",
    "-l",
    "--list-target-rules",
    "--lt",
    "--summary",
    "-S",
    "--detailed-summary",
    "-D",
    "--dag",
    "--rulegraph",
    "--filegraph",
    "--d3dag",
    "--touch",
    "-t",
    "--delete-all-output",
    "--delete-temp-output",
    "--cleanup-metadata",
    "--cm",
    "--list-changes",
    "--lc",
    "--print-compilation",
    "--archive",
    "--containerize",
    "--generate-unit-tests",
    "--list-code-changes",
    "--list-input-changes",
    "--list-params-changes",
    "--list-untracked",
    "--lu",
}
_DRY = {"-n", "--dry-run", "--dryrun"}


def _fail(message: str) -> NoReturn:
    print(f"tcsexam: error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def ensure_cli_on_path() -> None:
    if shutil.which("tcsexam"):
        return
    beside = Path(sys.executable).parent / "tcsexam"
    if beside.is_file() and os.access(beside, os.X_OK):
        os.environ["PATH"] = f"{beside.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        print(
            f"tcsexam: note: `tcsexam` was not on PATH; using {beside} (activate the venv to silence this)",
            file=sys.stderr,
        )
        return
    _fail(
        "the `tcsexam` command is not on PATH, so no rule can run: activate the project's venv "
        "(`. .venv/bin/activate`, after `make setup`) or install the package (`pip install -e .`)"
    )


def _mode(argv: list[str]) -> str:
    """'run', 'dry' or 'none' (a command that executes nothing) from Snakemake's arguments."""
    dry = False
    for arg in argv[1:]:
        name = arg.split("=", 1)[0]
        if name in _NO_RUN:
            return "none"
        if name in _DRY or (arg.startswith("-") and not arg.startswith("--") and arg[1:].isalpha() and "n" in arg[1:]):
            dry = True
    return "dry" if dry else "run"


def executor_is_local(argv: list[str], *, default: bool = True) -> bool:
    """Whether Snakemake runs the jobs on this machine (its executor is the local one), from its
    own command-line parsing of `argv` with the profiles it names or finds (the SLURM profile's
    `executor: slurm` is in no argv). `workflow.local_exec` cannot say it while the Snakefile is
    read: Snakemake chooses its executor after that (until then it says True), and a dry run's is
    `dryrun`, whatever it would submit to. `default` where the arguments are not Snakemake's own
    (Snakemake run through its Python API). About 0.2 s (the parser and the profiles)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            _, args = snakemake_cli.parse_args(argv[1:])  # it says which profiles it uses: not again
        name = getattr(args, "executor", None)
        if not name:
            return True  # Snakemake's default: local (dryrun and touch with -n, -t: local too)
        return bool(ExecutorPluginRegistry().get_plugin(name).common_settings.local_exec)
    except (Exception, SystemExit):
        return default


def _locked(workdir: Path) -> bool:
    locks = workdir / ".snakemake" / "locks"
    try:
        return any(locks.iterdir())
    except OSError:
        return False


def check_sandbox(plan, *, local_exec: bool = True) -> None:
    """Step 4: the sandbox the rules' `tcsexam run --sandbox ...` will choose works here (one line
    and exit 1 when not; on a cluster only a note). The online protocol runs no candidate."""
    if plan.online:
        return
    name = plan.run.get("sandbox", "auto")
    try:
        choose_sandbox(name, allow_unsandboxed=bool(plan.run.get("allow_unsandboxed")))
    except InputError as exc:
        if local_exec:
            _fail(f"config run.sandbox: {exc}")
        print(
            f"tcsexam: note: on this submit host: {exc} (cluster jobs choose their sandbox on their node)",
            file=sys.stderr,
        )


def check_tools(plan) -> list[str]:
    """Step 5: what this run needs beyond the candidates' sandbox (step 4), checked by `tcsexam
    doctor`'s own checks (the proof checker, the DRAT checker): each missing or broken piece one
    warning line (its cause, what follows, its fix), returned. The run goes on: the jobs that need
    the piece fail with the same cause and everything else is judged (tcsexam.workflow.salvage)."""
    needs = needs_of(plan) - {Need.CANDIDATES}
    if not needs:
        return []
    checks = checks_for(needs, **plan_options(plan))
    lines = []
    for check in failures(checks):
        lines.append(f"tcsexam: warning: {check.line()}; the jobs that need it will fail, the rest are judged")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


#: the run's tool checks in progress (`start_tool_checks`), awaited by `finish_tool_checks`
_tool_checks: threading.Thread | None = None


def start_tool_checks(plan) -> None:
    """`check_tools` in a thread of its own: its lines once `finish_tool_checks` has waited."""
    global _tool_checks
    _tool_checks = threading.Thread(target=check_tools, args=(plan,), name="tcsexam-tool-checks", daemon=True)
    _tool_checks.start()
    atexit.register(finish_tool_checks)  # a run that ends before `onstart` (nothing to do) waits too


def finish_tool_checks() -> None:
    """Wait for the checks `start_tool_checks` started (their lines are printed), then stop
    being a child subreaper: the checks' probes ran under the limiter, which made this process
    (Snakemake) one, and every process a job leaves behind would become its zombie (it reaps only
    the jobs themselves). Nothing to wait for: only the latter."""
    global _tool_checks
    checks, _tool_checks = _tool_checks, None
    if checks is not None:
        checks.join()
    stop_being_subreaper()


def prepare(
    config: dict,
    basedir: str,
    *,
    main_process: bool = True,
    argv: list[str] | None = None,
    local_exec: bool = True,
):
    """The checked Plan of this workflow run (see the module docstring)."""
    argv = list(sys.argv if argv is None else argv)
    ensure_cli_on_path()
    # `local_exec` (the Snakefile's workflow.local_exec) is True whatever the executor while the
    # Snakefile is read: the arguments say where the jobs run, asked at most once (0.2 s)
    runs_here = functools.cache(lambda: executor_is_local(argv, default=local_exec))
    try:
        plan = Plan(config, basedir)
        plan.check(reference_target=any(a in ("reference", "reference_build") for a in argv[1:]))
        batch = plan.config["batch"]
        batch["enabled"] = decide(batch.get("enabled", AUTO), local_exec=runs_here, main_process=main_process)
    except InputError as exc:
        _fail(str(exc))
    hand_down(batch["enabled"])  # what the jobs' Snakemake decides too (the Snakefile's `envvars:`)
    mode = _mode(argv)
    if not main_process or mode == "none":
        return plan
    check_sandbox(plan, local_exec=runs_here())
    if runs_here():  # on a cluster the nodes' tools count, not the submit host's
        start_tool_checks(plan)
        if mode != "run":  # no onstart to wait for them
            finish_tool_checks()
    else:
        stop_being_subreaper()
    if _locked(Path.cwd()):
        return plan
    try:
        if mode != "dry":  # the evaluation tree's record key, before any job (they all find this one)
            ensure_key(plan.layout.root)
        report = heal(plan, dry_run=mode == "dry")
    except InputError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{exc.filename or plan.out}: cannot set aside damaged derived files: {exc.strerror or exc}")
    for line in report.lines():
        print(line.replace("are set aside", "would be set aside") if mode == "dry" else line, file=sys.stderr)
    if mode == "run" and plan.run.get("fork_server"):
        # now, not at `onstart`: its imports (0.8 s) and sandbox check overlap the rest of the
        # Snakefile and the DAG, and the run's first jobs find it listening
        start_fork_server(f"{plan.results}/.fork-server.log", plan)
    return plan


def local_scheduling(workflow) -> bool:
    """From `onstart`, in a run whose jobs run here: schedule when a job ends, not also every
    second. Snakemake's submission rate limit (`--max-jobs-per-timespan`, 100/1s by default) has
    its scheduler start a timer after every scheduling pass that triggers another pass when it
    fires, so every pass begets the next: chains of a pass a second that never stop, one more
    for each job that ends, each pass stat()ing the inputs of every waiting job (Snakemake's PR
    #3744 discusses the same loop). benchmarks/snakemake_rate_limiter.py: 1528 passes against
    203, and 1.74 s of Snakemake's CPU against none in 5 s of a long job; in the Full demo on 2
    cores it took 10 s of 60. Locally the cores bound the jobs and a rate limit has nothing to do;
    a cluster run keeps its limit (its profile's 20/1s). True when the limit was dropped."""
    scheduler = getattr(workflow, "scheduler", None)
    if scheduler is None or not workflow.local_exec or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    scheduler.job_rate_limiter = None
    return True


def keep_going(workflow) -> bool:
    """Make this run keep going past a failed job (`--keep-going`), from `onstart`: the settings
    and the scheduler that already read them. False (and a note) where this Snakemake has neither."""
    settings = getattr(workflow, "execution_settings", None)
    scheduler = getattr(workflow, "scheduler", None)
    if settings is None or scheduler is None or not hasattr(scheduler, "keepgoing"):
        print(
            "tcsexam: note: this Snakemake cannot be told to keep going here; pass --keep-going so that "
            "a failed job does not stop the others",
            file=sys.stderr,
        )
        return False
    settings.keep_going = True
    scheduler.keepgoing = True
    return True


def arm_ray_head(state_dir: str, num_cpus: int) -> None:
    """`onstart`: let the first Solver job that chooses Ray start the run's shared head, as
    `tcsexam runner ray-head start --on-demand` does, in this process (no Python start before
    the first job). A folder it cannot write stops the run with one line."""
    try:
        address = ray_head.arm(state_dir, num_cpus)
    except InputError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"ray-head: {os_error_text(exc)}")
    if address:  # a head left by a killed run: this run's jobs join it
        print(f"tcsexam: the Ray head of {state_dir} is reused at {address}", file=sys.stderr, flush=True)


#: the run's fork server (config run.fork_server), started by `prepare`, stopped by onsuccess/onerror
#: (or when this process ends: the server serves its owner only and ends with it)
_fork_server: forkserver.Server | None = None


def start_fork_server(log: str, plan=None) -> None:
    """Start the run's fork server (`tcsexam.forkserver`) and name it to the jobs this Snakemake
    starts from now on (their environment: os.environ). The jobs sent to a cluster never use it
    (another node, or refused: not this process's descendants). Nothing but a note when it cannot
    start: every job then runs as its own process, as with run.fork_server false. With the run's
    `plan` (offline: candidates run) the server checks the run's sandbox once for its commands."""
    global _fork_server
    settings = None
    if plan is not None and not plan.online:
        run = plan.run
        settings = forkserver.Warm(
            str(run.get("sandbox", "auto")),
            str(run.get("limiter", "auto")),
            bool(run.get("allow_unsandboxed")),
            proofs=bool(plan.proof_runs()),
            candidates=bool(plan.solver_runs() or plan.construction_runs()),
        )
    try:
        _fork_server = forkserver.start(log, settings)
    except OSError as exc:
        print(f"tcsexam: note: no fork server ({exc}); every job starts its own Python", file=sys.stderr)
        return
    os.environ[launch.ENV] = _fork_server.address


def stop_fork_server() -> None:
    """Stop the run's fork server, if it started one."""
    global _fork_server
    os.environ.pop(launch.ENV, None)
    if _fork_server is not None:
        forkserver.stop(_fork_server)
        _fork_server = None
