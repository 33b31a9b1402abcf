"""`docker`: one container per run through the Docker SDK.

The container has no network (`network_disabled`), a memory limit with no extra swap
(`mem_limit` = `memswap_limit`), CPUs (`nano_cpus` = CPU seconds / wall seconds, at least one),
`pids_limit`, a read-only root filesystem, a tmpfs /tmp, RLIMIT_FSIZE at the output cap, the
instance and candidate as read-only volumes and the scratch directory as the one writable volume,
all at their host paths. The harness waits up to the wall limit, then stops the container (SIGTERM,
SIGKILL after the grace). Termination comes from `docker inspect` (`OOMKilled` -> memory); wall
time from the container's start/finish times; stdout and stderr from its logs (capped). CPU seconds
are not measured here (None). The image comes from the sandbox option `image` or
TCSEXAM_DOCKER_IMAGE (default tcsexam-candidate:latest, built by `make candidate-image` from
envs/candidate.Dockerfile) and must already be present (no network). Its id is part of every
record key (a new image reruns). A death by signal N (exit code 128+N) is `termination: signal`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal as _signal
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tcsexam.errors import InputError
from tcsexam.runner.anytime import note_go
from tcsexam.runner.limiter import LaunchError, Limits, MiB, ProcessOutcome, Termination, classify
from tcsexam.runner.sandboxes.base import Sandbox

#: built by `make candidate-image` (envs/candidate.Dockerfile)
DEFAULT_IMAGE = "tcsexam-candidate:latest"


def _read(path: Path, limit: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return b""


def _parse_time(text: str | None) -> float | None:
    if not text or text.startswith("0001-"):
        return None
    head, _, frac = text.rstrip("Z").partition(".")
    try:
        base = datetime.fromisoformat(head + "+00:00").timestamp()
    except ValueError:
        return None
    return base + (float("0." + "".join(c for c in frac if c.isdigit())[:9]) if frac else 0.0)


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self, image: str | None = None, client: Any = None):
        self.image = image or os.environ.get("TCSEXAM_DOCKER_IMAGE") or DEFAULT_IMAGE
        self._client = client

    def client(self):
        if self._client is None:
            import docker

            self._client = docker.from_env()
        return self._client

    def image_id(self) -> str | None:
        """The configured image's id (sha256:...), looked up once."""
        if getattr(self, "_image_id", None) is None:
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
            "log_config": docker.types.LogConfig(
                type="json-file", config={"max-size": str(max(limits.output_bytes, 1024))}
            ),
            "detach": True,
            "stdin_open": False,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
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

    def run(
        self,
        argv,
        *,
        cwd,
        limits,
        env,
        stdout_path=None,
        stderr_path=None,
        readonly_paths=(),
        writable_paths=(),
        output_paths=(),
        hidden_paths=(),  # nothing but the named paths is mounted: hidden already
    ) -> ProcessOutcome:
        from tcsexam.runner.limiter.process import whole_run_exclusive

        with whole_run_exclusive():  # one container of a worker at a time (no start ahead)
            return self._run(argv, cwd, limits, env, stdout_path, stderr_path, readonly_paths, writable_paths,
                             output_paths)  # fmt: skip

    def _run(self, argv, cwd, limits, env, stdout_path, stderr_path, readonly_paths, writable_paths,
             output_paths) -> ProcessOutcome:  # fmt: skip
        # stdout and stderr go to files (under RLIMIT_FSIZE, like a local run: an output bomb dies
        # at the cap with SIGXFSZ), not to the engine's log, which would only rotate them
        io_dir = Path(tempfile.mkdtemp(prefix="tcsexam-docker-io-"))
        out_file, err_file = io_dir / "stdout", io_dir / "stderr"
        same = stdout_path is not None and stdout_path == stderr_path
        redirect = f">{shlex.quote(str(out_file))} " + ("2>&1" if same else f"2>{shlex.quote(str(err_file))}")
        config = self.container_config(
            ["/bin/sh", "-c", f'exec "$0" "$@" {redirect}', *argv],
            cwd=cwd,
            env={k: v for k, v in env.items() if k != "PATH"},
            limits=limits,
            readonly_paths=[os.path.abspath(p) for p in readonly_paths],
            writable_paths=[*(os.path.abspath(p) for p in writable_paths), str(io_dir)],
        )
        client = self.client()
        try:
            container = client.containers.run(**config)
        except Exception as exc:
            shutil.rmtree(io_dir, ignore_errors=True)
            raise LaunchError(f"docker could not start the container: {exc}", False) from None
        t0 = time.monotonic()
        note_go(t0)  # an anytime trace's clock (tcsexam.runner.anytime), as the wall limit's
        killed = False
        try:
            try:
                container.wait(timeout=limits.wall_s)
            except Exception:  # requests' ReadTimeout / ConnectionError: the wall limit
                killed = True
                try:
                    container.kill(signal=_signal.SIGTERM)
                    container.wait(timeout=max(limits.grace_s, 0.1))
                except Exception:
                    container.kill(signal=_signal.SIGKILL)
                    container.wait(timeout=30)
            wall = time.monotonic() - t0
            container.reload()
            state = container.attrs.get("State", {})
            started, finished = _parse_time(state.get("StartedAt")), _parse_time(state.get("FinishedAt"))
            if started is not None and finished is not None and finished >= started and not killed:
                wall = finished - started
            cap = limits.output_bytes
        finally:
            try:
                container.remove(force=True)
            except Exception:
                pass
        out, err = (_read(f, cap + 1) for f in (out_file, err_file))
        shutil.rmtree(io_dir, ignore_errors=True)
        writes = [(stdout_path, out)] if same else [(stdout_path, out), (stderr_path, err)]
        for path, data in writes:
            if path is not None:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_bytes(data)
        over = [p for p in output_paths if os.path.exists(p) and os.path.getsize(p) > cap]
        over_name = "stdout" if len(out) > cap else "stderr" if len(err) > cap else Path(over[0]).name if over else None
        verdict = classify(
            limits=limits,
            exit_code=state.get("ExitCode") if not killed else None,
            signal=None,
            wall_s=wall,
            enforced=Termination.WALLTIME if killed else None,
            enforced_detail=f"wall limit {limits.wall_s:g} s" if killed else "",
            oom_killed=bool(state.get("OOMKilled")) and not killed,
            output_over=over_name,
            stderr_tail=err[-4096:].decode("utf-8", "replace"),
            signal_from_exit_code=True,
        )
        return ProcessOutcome(
            exit_code=verdict.exit_code,
            signal=verdict.signal,
            termination=verdict.termination,
            wall_s=round(wall, 6),
            cpu_s=None,
            peak_mem_mb=None,
            stdout_tail=out[-4096:].decode("utf-8", "replace"),
            stderr_tail=err[-4096:].decode("utf-8", "replace"),
            limiter="docker",
            sandbox=self.name,
            killed_by_harness=killed,
            message=verdict.message,
        )
