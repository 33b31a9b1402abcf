"""The workflow's shared Ray head: start without waiting, clients wait for it, reuse, stop the tree."""

from __future__ import annotations

import time

import psutil
import pytest

from tcsexam.runner.ray import head as ray_head


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


@pytest.mark.slow
def test_detached_stop_forgets_the_head_at_once_and_ends_its_tree(tmp_path):
    state = tmp_path / "head"
    address, _ = ray_head.start(state, 1)
    pid = int((state / "pid").read_text())
    tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    assert ray_head.stop_detached(state)
    # no later run can reuse the dying head: its state is gone before the tree has ended
    assert ray_head.current_address(state) is None
    gone, alive = psutil.wait_procs(tree, timeout=30)
    assert not alive, alive
    for _ in range(200):  # the detached stopper removes its renamed state folder last
        if not list(tmp_path.glob("head.stopping-*")):
            break
        time.sleep(0.1)
    assert not list(tmp_path.glob("head.stopping-*"))
    assert not ray_head.stop_detached(state)
