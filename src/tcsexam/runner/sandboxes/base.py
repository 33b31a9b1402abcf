"""The sandbox interface: how a program is wrapped (or containerised) before the limiter runs it.

A sandbox keeps every path where it is on the host (the instance, the candidate and the scratch
directory appear at the same paths inside), so argv placeholders need no translation.
"""

from __future__ import annotations

import os
import sys
import time
from abc import ABC, abstractmethod

from tcsexam.containment import SandboxName
from tcsexam.runner.limiter import Launch, ProcessOutcome, RunSpec, execute_limited
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to, shared_tmp_marks, sweep_shared_tmp


class Sandbox(ABC):
    """Runs one program under limits inside an isolation layer. Besides running, a sandbox
    answers what callers would otherwise decide by comparing sandbox names: whether it confines
    the candidate's writes (`isolates_files`), which interpreter the candidates call
    (`candidate_python`, `uses_harness_python`), which image it runs (`image_name`, `image_id`)
    and how a program that could not be started looks in its outcome (`not_started`).

    A sandbox pickles as its own small state, as `check_available` resolved it (bwrap: the
    executable found working; docker: the image, without its engine client): a run context sends
    the one chosen at the start of a run to every Ray actor, never rebuilt by name."""

    name: SandboxName
    #: the candidate can write only its writable folders (False: wherever its uid can, e.g. its
    #: own candidate folder; the caller then checks that folder after the run)
    isolates_files: bool = True
    #: the candidates' `python3` is the harness's own interpreter (False: the image's own)
    uses_harness_python: bool = True
    #: the candidates' programs (python3, coqc, ...) are the host's (False: an image's own)
    uses_host_programs: bool = True

    @abstractmethod
    def check_available(self) -> None:
        """Raise `InputError` (one line) when this sandbox cannot run on this machine."""

    @abstractmethod
    def run(self, spec: RunSpec) -> ProcessOutcome:
        """Run `spec` (argv, cwd, environment, paths) under its limits and limiter; the outcome
        says how it ended and which limiter ran. Raises `LaunchError` when the program cannot be
        started; never leaves a process behind."""

    def image_id(self) -> str | None:
        """The id of the image a container sandbox runs (part of the record key), else None."""
        return None

    @property
    def image_name(self) -> str | None:
        """The name of the image a container sandbox runs (as configured), else None."""
        return None

    @property
    def candidate_python(self) -> str:
        """The interpreter a candidate's command names as its Python: the harness's own
        (`sys.executable`) unless the sandbox brings its own (docker: the image's `python3`)."""
        return sys.executable if self.uses_harness_python else "python3"

    def not_started(self, outcome: ProcessOutcome) -> bool:
        """Whether `outcome` (an exit, no limit hit) is this sandbox's report that the candidate's
        program could not be executed (missing, not executable): the record is then `invalid`,
        not a crash. Without a starter of its own a sandbox raises `LaunchError` instead: False."""
        return False

    def describe(self) -> dict[str, str | None]:
        """What runs the sandbox, for the job's log, the records (`extra.sandbox_info`) and the
        manifest (bwrap: its path, version and origin); empty when there is nothing to add."""
        return {}

    def python_dir(self) -> str | None:
        """The folder put first on the candidate's PATH (its `python3`): the harness's
        interpreter folder as the candidate sees it; None: the image's own (containers)."""
        return os.path.dirname(sys.executable)

    def __repr__(self) -> str:
        return f"<sandbox {self.name}>"


def shell_exec_failed(outcome: ProcessOutcome) -> bool:
    """The in-sandbox `/bin/sh -c 'exec "$0" "$@"'` (bwrap, docker) could not exec the program:
    exit code 126 or 127 with dash's `...: 1: exec: ...` as the last stderr line."""
    tail = outcome.stderr_tail.lstrip()
    return bool(tail) and outcome.exit_code in (126, 127) and ": 1: exec: " in tail.splitlines()[-1]


class WrappingSandbox(Sandbox):
    """A sandbox that is a command-line wrapper (local, bwrap, apptainer): the host's limiter runs
    the wrapped command, so limits, measurement and the whole-tree kill are the same for all.
    When the harness is root the candidate runs as `runas.candidate_ids`, owning only its
    writable folders; under a sandbox that `shares_tmp` with the host, what that uid left in
    /tmp, /dev/shm and /var/tmp is removed after the run."""

    shares_tmp = False
    #: a sandbox that failed to set itself up because the host changed under it (`setup_race`)
    #: is started again, at most this many times in all; nothing of the program ran before
    SETUP_TRIES = 3
    SETUP_RETRY_S = 0.05  #: the pause before the second try (doubled before each later one)

    @abstractmethod
    def prepare(self, spec: RunSpec) -> Launch:
        """The command line that runs `spec.argv` inside the sandbox."""

    def setup_race(self, outcome: ProcessOutcome) -> bool:
        """Whether `outcome.sandbox_error` is a set-up failure caused by the host changing while
        the sandbox was being built (a mount that came or went): worth another try. Never, by
        default."""
        return False

    def run(self, spec: RunSpec) -> ProcessOutcome:
        writable = spec.paths.writable_paths
        ids = candidate_ids()
        give_to(list(writable), ids)  # the only folders the candidate owns
        outcome = self._run_once(spec, ids)
        for tries in range(1, self.SETUP_TRIES):
            if outcome.sandbox_error is None or not self.setup_race(outcome):
                break
            time.sleep(self.SETUP_RETRY_S * 2 ** (tries - 1))
            outcome = self._run_once(spec, ids)
        return outcome

    def _run_once(self, spec: RunSpec, ids: tuple[int, int] | None) -> ProcessOutcome:
        writable = spec.paths.writable_paths
        marks = shared_tmp_marks(ids) if self.shares_tmp and ids is not None else None
        launch = self.prepare(spec)
        launch.disk_paths = tuple(writable)
        if self.shares_tmp and ids is not None:  # its own uid: its files in /dev/shm are its memory
            launch.tmpfs_owner = ids[0]
        try:
            return execute_limited(launch, spec, sandbox_name=self.name)
        finally:
            if self.shares_tmp:
                sweep_shared_tmp(ids, marks)
            for fd in launch.close_after:
                try:
                    os.close(fd)
                except OSError:
                    pass
            launch.close_after.clear()
