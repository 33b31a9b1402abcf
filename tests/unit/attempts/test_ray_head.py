"""The workflow's shared Ray head: start without waiting, clients wait for it, reuse, stop the tree."""

from __future__ import annotations

import psutil
import pytest

from tcsexam.attempts import ray_head


@pytest.mark.slow
def test_start_reuse_address_and_stop(tmp_path):
    state = tmp_path / "head"
    assert ray_head.current_address(state) is None
    address, started = ray_head.start(state, 1, wait=False)
    try:
        assert started and address is None
        pid = int((state / "pid").read_text())
        address = ray_head.current_address(state, wait_s=120)
        assert address and ":" in address
        again, started_again = ray_head.start(state, 1)
        assert (again, started_again) == (address, False)
        tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        assert len(tree) > 2  # gcs_server, raylet, ...
    finally:
        assert ray_head.stop(state)
    gone, alive = psutil.wait_procs(tree, timeout=10)
    assert not alive, alive
    assert ray_head.current_address(state) is None
    assert not (state / "pid").exists()
    assert not ray_head.stop(state)
