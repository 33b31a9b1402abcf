"""The workflow's shared Ray head: start without waiting, clients wait for it, reuse, stop the tree."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil
import pytest

from tcsexam.errors import InputError
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
def test_an_armed_folder_gets_its_head_from_the_first_job_that_wants_ray(tmp_path):
    """`arm` starts nothing; concurrent `start_on_demand` calls start exactly one head and all get
    its address; `stop` disarms, so no later job starts another."""
    from concurrent.futures import ThreadPoolExecutor

    state = tmp_path / "head"
    assert ray_head.start_on_demand(state) is None  # not armed: nothing starts
    ray_head.arm(state, 1)
    assert ray_head.armed(state) and not (state / "pid").exists()
    assert ray_head.current_address(state) is None
    try:
        with ThreadPoolExecutor(3) as pool:
            addresses = list(pool.map(lambda _: ray_head.start_on_demand(state), range(3)))
        assert addresses[0] and ":" in addresses[0] and len(set(addresses)) == 1, addresses
        assert ray_head.current_address(state) == addresses[0]
        assert ray_head.armed(state)  # a head that dies mid-run is started again by the next job
    finally:
        assert ray_head.stop(state)
    assert not ray_head.armed(state) and ray_head.start_on_demand(state) is None


def test_arming_refuses_no_cpus_and_a_detached_stop_disarms(tmp_path):
    state = tmp_path / "head"
    with pytest.raises(InputError, match="--num-cpus must be >= 1"):
        ray_head.arm(state, 0)
    ray_head.arm(state, 2)
    assert (state / "on-demand").read_text() == "2\n" and (state.stat().st_mode & 0o777) == 0o700
    assert not ray_head.stop_detached(state)  # no head ran: nothing to stop, but no job may start one now
    assert not ray_head.armed(state)


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


def test_the_default_state_folder_is_per_user_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.delenv("TCSEXAM_RAY_HEAD", raising=False)
    assert ray_head.default_state_dir() == Path(f"/tmp/tcsexam-ray-head-{os.geteuid()}")
    monkeypatch.setenv("TCSEXAM_RAY_HEAD", str(tmp_path / "h"))
    assert ray_head.default_state_dir() == tmp_path / "h"
    for off in ("", "none", "None"):
        monkeypatch.setenv("TCSEXAM_RAY_HEAD", off)
        assert ray_head.default_state_dir() is None and ray_head.local_head() is None


def test_only_a_folder_private_to_this_user_is_trusted(tmp_path):
    state = tmp_path / "h"
    assert not ray_head.private_to_me(state)  # missing
    state.mkdir(mode=0o700)
    assert ray_head.private_to_me(state)
    for mode in (0o750, 0o705, 0o770):
        state.chmod(mode)
        assert not ray_head.private_to_me(state), oct(mode)
    state.chmod(0o700)
    (tmp_path / "link").symlink_to(state)
    assert not ray_head.private_to_me(tmp_path / "link")
    (tmp_path / "file").write_text("")
    (tmp_path / "file").chmod(0o600)
    assert not ray_head.private_to_me(tmp_path / "file")


def test_no_default_head_is_joined_inside_slurm_or_beside_ray_address(monkeypatch, tmp_path):
    state = tmp_path / "h"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("TCSEXAM_RAY_HEAD", str(state))
    monkeypatch.setattr(ray_head, "join", lambda state_dir, wait_s: "127.0.0.1:1")  # as if a head were alive
    assert ray_head.local_head() == (state, "127.0.0.1:1")
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert ray_head.local_head() is None
    monkeypatch.delenv("SLURM_JOB_ID")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert ray_head.local_head() is None


def test_the_default_head_is_not_started_in_a_folder_others_may_write(monkeypatch, tmp_path):
    state = tmp_path / "h"
    state.mkdir()
    state.chmod(0o777)
    monkeypatch.setenv("TCSEXAM_RAY_HEAD", str(state))
    with pytest.raises(InputError, match="not a folder private to this user"):
        ray_head.start(state, 1, wait=False)
    assert not (state / "pid").exists()
