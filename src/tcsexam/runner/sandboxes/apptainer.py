"""`apptainer`: Apptainer/Singularity containment around the limiter.

`apptainer exec --containall --no-home --net --network none --cleanenv` with a read-only
image, the instance and candidate bound read-only and the scratch directory read-write at their own
paths, `--pwd` the working directory. The image comes from the sandbox option `image` or
TCSEXAM_APPTAINER_IMAGE (a .sif file or docker:// reference already in the local cache). The limits
are enforced by the limiter around the apptainer process (its starter stays in our cgroup/tree).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from tcsexam.containment import SandboxName
from tcsexam.errors import InputError
from tcsexam.runner.limiter import Launch, ProcessOutcome, RunSpec
from tcsexam.runner.limiter.launcher import harness_env
from tcsexam.runner.sandboxes.base import WrappingSandbox
from tcsexam.runner.sandboxes.runas import candidate_ids


class ApptainerSandbox(WrappingSandbox):
    name = SandboxName.APPTAINER
    uses_host_programs = False  # the image's (coqc included)

    def __init__(self, image: str | None = None, executable: str | None = None):
        self.image = image or os.environ.get("TCSEXAM_APPTAINER_IMAGE")
        self.executable = executable or os.environ.get("TCSEXAM_APPTAINER", "apptainer")
        # resolved once, to an absolute path, from the harness's own PATH (never the candidate's)
        self._resolved = next(
            (found for name in (self.executable, "singularity") if (found := shutil.which(name))), None
        )

    def not_started(self, outcome: ProcessOutcome) -> bool:
        """apptainer reports an exec failure of the program itself (exit 126, 127 or 255)."""
        return outcome.exit_code in (126, 127, 255) and "executable file not found" in outcome.stderr_tail.lstrip()

    def _exe(self) -> str | None:
        return os.path.abspath(self._resolved) if self._resolved else None

    def check_available(self) -> None:
        exe = self._exe()
        if exe is None:
            raise InputError(f"sandbox apptainer: {self.executable!r} not found on PATH (install Apptainer)")
        if not self.image:
            raise InputError("sandbox apptainer: no image; set TCSEXAM_APPTAINER_IMAGE to a .sif file")
        if "://" not in self.image and not os.path.exists(self.image):
            raise InputError(f"sandbox apptainer: image {self.image} not found")
        try:
            probe = subprocess.run(
                [exe, "exec", "--containall", "--no-home", self.image, "true"],
                capture_output=True,
                text=True,
                timeout=120,
                env=harness_env(),
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise InputError(f"sandbox apptainer: cannot run {exe}: {exc}") from None
        if probe.returncode != 0:
            line = " ".join(probe.stderr.split())[-300:] or f"exit code {probe.returncode}"
            raise InputError(f"sandbox apptainer: a test container failed to start: {line}")

    def command(self, argv, *, cwd: str, env=None, readonly_paths=(), writable_paths=()) -> list[str]:
        exe = self._exe() or self.executable
        args = [exe, "exec", "--containall", "--no-home", "--net", "--network", "none", "--cleanenv"]
        for path in writable_paths:
            args += ["--bind", f"{path}:{path}:rw"]
        for path in readonly_paths:
            args += ["--bind", f"{path}:{path}:ro"]
        for key, value in sorted((env or {}).items()):
            if key != "PATH":
                args += ["--env", f"{key}={value}"]
        if env and "PATH" in env:
            args += ["--env", f"PATH={env['PATH']}"]
        args += ["--pwd", cwd, str(self.image), *argv]
        return args

    def prepare(self, spec: RunSpec) -> Launch:
        if not self.image:
            raise InputError("sandbox apptainer: no image; set TCSEXAM_APPTAINER_IMAGE")
        paths = spec.paths
        return Launch(
            self.command(
                spec.argv,
                cwd=spec.cwd,
                env=spec.env,
                readonly_paths=paths.readonly_paths,
                writable_paths=paths.writable_paths,
            ),
            spec.cwd,
            harness_env(),  # apptainer itself: the harness's environment; the candidate's only inside (--env)
            signal_from_exit_code=True,  # a death by signal N may come back as exit code 128+N
            run_as=candidate_ids(),  # a root harness starts apptainer (and so the candidate) unprivileged
            no_new_privs=False,  # its setuid starter, where installed so, must work
        )
