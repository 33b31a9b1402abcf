"""`docker`: one container per run through the Docker SDK.

The container has no network (`network_disabled`), a memory limit with no extra swap
(`mem_limit` = `memswap_limit`), CPUs (`nano_cpus` = CPU seconds / wall seconds, at least one),
`pids_limit`, a read-only root filesystem, a tmpfs /tmp, RLIMIT_FSIZE at the output cap, the
instance and candidate as read-only volumes and the scratch directory as the one writable volume,
all at their host paths. The harness waits up to the wall limit, then stops the container (SIGTERM,
SIGKILL after the grace). Termination comes from `docker inspect` (`OOMKilled` -> memory); wall
time from the container's start/finish times; stdout and stderr through the engine's API only (a
live follow of the logs kills the container once a stream passes the output cap; then the logged output,
kept as two json-file logs of cap + 64 KiB, so an output past the cap is seen even when the
container ended first), never through files the container could replace. CPU seconds
are not measured here (None). The image comes from the sandbox option `image` or
TCSEXAM_DOCKER_IMAGE (default tcsexam-candidate:latest, built by `make candidate-image` from
envs/candidate.Dockerfile) and must already be present (no network). Its id is part of every
record key (a new image reruns). A death by signal N (exit code 128+N) is `termination: signal`.
"""

from __future__ import annotations

import os
import signal as _signal
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tcsexam.containment import Limiter, SandboxName
from tcsexam.errors import InputError
from tcsexam.records import Termination
from tcsexam.runner.limiter import Ended, LaunchError, Limits, MiB, ProcessOutcome, RunSpec, classify
from tcsexam.runner.limiter.classify import outcome_of
from tcsexam.runner.limiter.go import note_go
from tcsexam.runner.limiter.process import disk_text, disk_usage, whole_run_exclusive
from tcsexam.runner.sandboxes.base import Sandbox, shell_exec_failed
from tcsexam.runner.sandboxes.runas import candidate_ids, give_to

#: built by `make candidate-image` (envs/candidate.Dockerfile)
DEFAULT_IMAGE = "tcsexam-candidate:latest"


class _Streams:
    """The container's stdout and stderr from the engine: a live follow of each logged stream
    counts what it sends and kills the container once one passes `cap` (named in `over`); once the
    container has stopped, `finish` takes the output the engine logged, up to `cap` + 1 bytes each.

    The live count follows the logs, never an attach: docker-py reads an attach from the raw
    socket past what http.client has already buffered, so a stream whose first bytes came with
    the response headers loses its framing ("120 is not a valid stream"); the reader then stops
    reading, and the engine, which finishes a container's exit only once every attached stream is
    drained, holds the container and every call on it (moby#41827). A log follower holds nothing
    up. The kill runs in a thread of its own, so that a follower never waits on the engine.
    """

    def __init__(self, container, cap: int, same: bool):
        self.container, self.cap, self.same = container, cap, same
        self.data = (bytearray(), bytearray())
        self.seen = [0, 0]
        self.over: str | None = None
        indices = (0,) if same else (0, 1)  # one follow of both streams when they share a file
        self.threads = [threading.Thread(target=self._follow, args=(index,), daemon=True) for index in indices]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def _follow(self, index: int) -> None:
        name = "stdout" if index == 0 else "stderr"
        try:
            chunks = self.container.logs(
                stdout=index == 0 or self.same, stderr=index == 1 or self.same, stream=True, follow=True
            )
            for chunk in chunks:
                self.seen[index] += len(chunk)
                if self.seen[index] > self.cap and self._over(name):
                    threading.Thread(target=self._kill, daemon=True).start()
        except Exception:  # the container went away: `finish` reads the log
            pass

    def _over(self, name: str) -> bool:
        """Note the first stream past the cap; True when this call noted it."""
        if self.over is not None:
            return False
        self.over = name
        return True

    def _kill(self) -> None:
        try:
            self.container.kill(signal=_signal.SIGKILL)
        except Exception:  # 409 once it has stopped meanwhile
            pass

    def finish(self) -> None:
        """Once the container has stopped: its output as the engine logged it (the live follow
        only watches the cap)."""
        wanted = [(0, True, True)] if self.same else [(0, True, False), (1, False, True)]
        for index, out, err in wanted:
            try:
                text = self.container.logs(stdout=out, stderr=err)
            except Exception:
                continue
            self.data[index].extend(text[: self.cap + 1])
            if len(text) > self.cap:
                self._over("stdout" if out else "stderr")


def _parse_time(text: str | None) -> float | None:
    if not text or text.startswith("0001-"):
        return None
    head, _, frac = text.rstrip("Z").partition(".")
    try:
        base = datetime.fromisoformat(head + "+00:00").timestamp()
    except ValueError:
        return None
    return base + (float("0." + "".join(c for c in frac if c.isdigit())[:9]) if frac else 0.0)


def container_user() -> str:
    """The unprivileged uid:gid the container's program runs as (never root): the candidate uid
    of a root harness (`runas.candidate_ids`), else this user's own (files in the work folder stay
    the harness's to read and remove)."""
    ids = candidate_ids()
    if ids is None:
        ids = (os.getuid(), os.getgid())
    return f"{ids[0]}:{ids[1]}"


class DockerSandbox(Sandbox):
    name = SandboxName.DOCKER
    uses_harness_python = False  # the image's own python3 (PATH is the image's)
    uses_host_programs = False

    def __init__(self, image: str | None = None, client: Any = None):
        self.image = image or os.environ.get("TCSEXAM_DOCKER_IMAGE") or DEFAULT_IMAGE
        self._client = client
        self._image_id: str | None = None  #: the image's id, looked up once (`image_id`)

    def __getstate__(self) -> dict[str, object]:
        """The sandbox as it travels to an actor: without its engine client (the copy opens its own)."""
        return {**self.__dict__, "_client": None}

    def client(self):
        if self._client is None:
            import docker

            self._client = docker.from_env()
        return self._client

    def python_dir(self) -> str | None:
        return None  # the image's own Python (PATH is the image's)

    @property
    def image_name(self) -> str | None:
        return self.image

    def not_started(self, outcome: ProcessOutcome) -> bool:
        return shell_exec_failed(outcome)  # the /bin/sh that execs the command in the container

    def image_id(self) -> str | None:
        """The configured image's id (sha256:...), looked up once."""
        if self._image_id is None:
            self._image_id = self.client().images.get(self.image).id
        return self._image_id

    def check_available(self) -> None:
        try:
            client = self.client()
            client.ping()
        except Exception as exc:  # docker.errors.DockerException and connection errors
            line = " ".join(str(exc).split())[:200]
            raise InputError(f"sandbox docker: no Docker engine reachable ({line})") from None
        try:
            client.images.get(self.image)
        except Exception:
            raise InputError(
                f"sandbox docker: image {self.image} is not present locally "
                "(build it: make candidate-image; or set TCSEXAM_DOCKER_IMAGE)"
            ) from None

    def container_config(
        self,
        argv: list[str],
        *,
        cwd: str,
        env: dict[str, str],
        limits: Limits,
        readonly_paths=(),
        writable_paths=(),
    ) -> dict[str, Any]:
        """The keyword arguments of `client.containers.run` for one run."""
        import docker.types

        volumes: dict[str, dict[str, str]] = {}
        for path in writable_paths:
            volumes[str(path)] = {"bind": str(path), "mode": "rw"}
        for path in readonly_paths:
            volumes[str(path)] = {"bind": str(path), "mode": "ro"}
        cpus = 1.0
        if limits.cpu_s:
            cpus = max(1.0, round(limits.cpu_s / limits.wall_s))
        cpus = min(cpus, float(os.cpu_count() or 1))  # the engine refuses more CPUs than the machine has
        config: dict[str, Any] = {
            "image": self.image,
            "command": list(argv),
            "working_dir": cwd,
            "environment": dict(env),
            "network_disabled": True,
            "read_only": True,
            "tmpfs": {"/tmp": f"rw,size={min(limits.output_bytes * 4, 1024 * MiB)}"},
            "volumes": volumes,
            "nano_cpus": int(cpus * 1e9),
            "ulimits": [docker.types.Ulimit(name="fsize", soft=limits.output_bytes + 1, hard=limits.output_bytes + 1)],
            "log_config": docker.types.LogConfig(  # two files of cap + 64 KiB: an output past the cap stays visible
                type="json-file", config={"max-size": str(limits.output_bytes + 65536), "max-file": "2"}
            ),
            "detach": True,
            "stdin_open": False,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],  # and the engine's default seccomp profile (none replaced)
            "user": container_user(),
            # the engine's init (tini) is PID 1 and reaps; the program is its child, so a signal it
            # sends itself (abort, a self-kill) ends it as on a host, not ignored as by a PID 1
            "init": True,
        }
        if limits.mem_mb:
            config["mem_limit"] = int(limits.mem_mb * MiB)
            config["memswap_limit"] = int(limits.mem_mb * MiB)
        if limits.nproc:
            config["pids_limit"] = int(limits.nproc)
        if limits.cpu_s:
            config["ulimits"].append(
                docker.types.Ulimit(name="cpu", soft=int(limits.cpu_s) + 1, hard=int(limits.cpu_s) + 2)
            )
        return config

    def run(self, spec: RunSpec) -> ProcessOutcome:  # hidden_paths: only the named paths are mounted anyway

        with whole_run_exclusive():  # one container of a worker at a time (no start ahead)
            return self._run(spec)

    def _run(self, spec: RunSpec) -> ProcessOutcome:
        # stdout and stderr come through the engine's API (its logs), never through files the
        # container could replace; a stream past the output cap kills the container (`output`)
        limits, paths = spec.limits, spec.paths
        writable = list(paths.writable_paths)
        give_to(writable, candidate_ids())
        config = self.container_config(
            [
                "/bin/sh",
                "-c",
                'exec "$0" "$@"',
                *spec.argv,
            ],  # a missing program: exit 127 (`invalid`), not a start failure
            cwd=spec.cwd,
            env={k: v for k, v in spec.env.items() if k != "PATH"},
            limits=limits,
            readonly_paths=paths.readonly_paths,
            writable_paths=writable,
        )
        client = self.client()
        try:
            container = client.containers.run(**config)
        except Exception as exc:
            raise LaunchError(f"docker could not start the container: {exc}", False) from None
        t0 = time.monotonic()
        cap = limits.output_bytes
        streams = _Streams(container, cap, _same_file(paths))
        note_go(t0)  # an anytime trace's clock (tcsexam.runner.solver.anytime), as the wall limit's
        killed = False
        over_disk: bool | str = False
        try:
            streams.start()
            over_disk = _wait_within_limits(container, limits, writable, t0)
            if over_disk is not False:  # the wall limit, or the work folder past disk_mb
                killed = True
                for sig, grace in ((_signal.SIGTERM, max(limits.grace_s, 0.1)), (_signal.SIGKILL, 30)):
                    try:  # (409 once it has stopped meanwhile, e.g. killed for its output)
                        container.kill(signal=sig)
                        container.wait(timeout=grace)
                        break
                    except Exception:
                        continue
            wall = time.monotonic() - t0
            streams.finish()
            container.reload()
            state = container.attrs.get("State", {})
            started, finished = _parse_time(state.get("StartedAt")), _parse_time(state.get("FinishedAt"))
            if started is not None and finished is not None and finished >= started and not killed:
                wall = finished - started
        finally:
            try:
                container.remove(force=True)
            except Exception:
                pass
        return _outcome(spec, streams, state, wall, killed, over_disk)


def _same_file(paths) -> bool:
    return paths.stdout_path is not None and paths.stdout_path == paths.stderr_path


def _outcome(spec: RunSpec, streams: _Streams, state: dict, wall: float, killed: bool, over_disk) -> ProcessOutcome:
    """The outcome of a stopped container: its streams written to `spec.paths`' files, its
    termination by `classify`."""
    limits, paths, cap = spec.limits, spec.paths, spec.limits.output_bytes
    same = _same_file(paths)
    stdout_path, stderr_path = paths.stdout_path, paths.stderr_path
    out, err = bytes(streams.data[0]), bytes(streams.data[1])
    writes = [(stdout_path, out)] if same else [(stdout_path, out), (stderr_path, err)]
    for path, data in writes:
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_bytes(data)
    if streams.over is not None:  # past the cap (seen live or in the logs): `output`, whatever came later
        killed = True
    over = [p for p in paths.output_paths if os.path.exists(p) and os.path.getsize(p) > cap]
    over_name = "stdout" if len(out) > cap else "stderr" if len(err) > cap else Path(over[0]).name if over else None
    enforced, detail = None, ""
    if streams.over is not None:
        enforced, detail = Termination.OUTPUT, f"{streams.over} over {cap} bytes"
    elif isinstance(over_disk, str):
        enforced, detail = Termination.DISK, over_disk
    elif killed:
        enforced, detail = Termination.WALLTIME, f"wall limit {limits.wall_s:g} s"
    ended = Ended(
        exit_code=state.get("ExitCode") if not killed else None,
        signal=None,
        wall_s=wall,
        enforced=enforced,
        enforced_detail=detail,
        oom_killed=bool(state.get("OOMKilled")) and not killed,
        output_over=over_name,
        stderr_tail=err[-4096:].decode("utf-8", "replace"),
        signal_from_exit_code=True,
    )
    verdict = classify(limits, ended)
    return outcome_of(
        verdict,
        wall_s=round(wall, 6),
        cpu_s=None,
        peak_mem_mb=None,
        stdout_tail=out[-4096:].decode("utf-8", "replace"),
        stderr_tail=err[-4096:].decode("utf-8", "replace"),
        limiter=Limiter.DOCKER,
        sandbox=DockerSandbox.name,
        killed_by_harness=killed,
    )


#: how often a running container's work folder is measured against `Limits.disk_mb`
DISK_POLL_S = 0.5


def _wait_within_limits(container, limits: Limits, writable: list[str], t0: float) -> bool | str:
    """Wait for the container's end: False when it ended inside its limits, True at the wall limit,
    and the reason (a string) when its work folder (the writable volumes) went past `disk_mb`,
    measured every DISK_POLL_S as the light and cgroup limiters do (the volume is the host's)."""
    while True:
        left = limits.wall_s - (time.monotonic() - t0)
        if left <= 0:
            return True
        try:
            container.wait(timeout=min(left, DISK_POLL_S) if limits.disk_mb and writable else left)
            return False
        except Exception:  # requests' ReadTimeout / ConnectionError: this slice is over
            pass
        if limits.disk_mb and writable:
            used = disk_usage(writable)
            if used > limits.disk_mb * MiB:
                return disk_text(used, limits.disk_mb)
