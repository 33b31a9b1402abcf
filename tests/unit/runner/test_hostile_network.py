"""Hostile candidates that reach for the network: a connection to a listener on the host's
loopback succeeds under local (the control: local is for trusted code) and fails under bwrap (its
own empty network namespace) and docker (`network_disabled`); the candidate still gets its
status.

Run as root and as an unprivileged user (`.ci/run` does both):
``pytest -m hostile tests/unit/runner``.
"""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

import pytest

from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.execute import run_instance

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import HOSTILE, run, sandbox_or_skip  # noqa: E402

pytestmark = pytest.mark.hostile


def _listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server


@pytest.mark.parametrize("sandbox", ["local", "bwrap"])
def test_network(task, tmp_path, sandbox):
    if sandbox == "bwrap":
        try:
            get_sandbox("bwrap").check_available()
        except Exception as exc:
            pytest.skip(str(exc))
    server = _listener()
    try:
        port = server.getsockname()[1]
        record, scratch, _ = run(
            task,
            "network",
            tmp_path,
            sandbox=sandbox,
            prepare=lambda d: (d / "port.txt").write_text(str(port)),
        )
    finally:
        server.close()
    assert record.status == "ok", record.message
    stderr = (scratch / "stderr.log").read_text()
    if sandbox == "local":
        assert "NETWORK: connected" in stderr  # the control: the listener was reachable
    else:
        assert "NETWORK: failed" in stderr and "connected" not in stderr


def test_docker_network_is_off(task, tmp_path):
    import socket

    box = sandbox_or_skip("docker")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        folder = tmp_path / "network"
        shutil.copytree(HOSTILE / "network", folder)
        (folder / "port.txt").write_text(str(server.getsockname()[1]))
        record = run_instance(
            task,
            task.instances[0],
            load_candidate(folder),
            sandbox=box,
            limits=task.limits.for_threads(1),
            seed=0,
            scratch_dir=tmp_path / "s",
        )
    finally:
        server.close()
    assert record.status == "ok", record.message
    stderr = (tmp_path / "s" / "stderr.log").read_text()
    assert "NETWORK: failed" in stderr and "connected" not in stderr
