"""Two jobs' Rays on one node at once (what SLURM does when it packs two Solver jobs onto one
machine): each `start_ray` gets its own ports from the kernel, none of Ray's fixed defaults, and
both run tasks while the other is up. Real Ray, two real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

JOB = textwrap.dedent(
    """
    import json, os, sys
    import psutil
    from tcsexam.runner.ray.job import start_ray
    handle = start_ray(num_cpus=1)
    import ray

    @ray.remote
    def where():
        return os.getpid()

    first = ray.get(where.remote(), timeout=300)
    procs = [psutil.Process()] + psutil.Process().children(recursive=True)
    ports = set()
    for p in procs:
        try:
            conns = p.net_connections(kind="inet") if hasattr(p, "net_connections") else p.connections(kind="inet")
        except psutil.Error:
            continue
        ports |= {c.laddr.port for c in conns if c.status == psutil.CONN_LISTEN}
    print(json.dumps({"ports": sorted(ports), "worker": first}), flush=True)
    sys.stdin.readline()  # the other job's Ray is up too now
    print(json.dumps({"again": ray.get(where.remote(), timeout=300)}), flush=True)
    handle.shutdown()
    """
)

#: Ray's fixed defaults: GCS, dashboard, client server, dashboard agent
FIXED_DEFAULTS = {6379, 8265, 10001, 52365}


@pytest.mark.slow
def test_two_job_rays_on_one_machine_use_disjoint_kernel_assigned_ports():
    jobs = [
        subprocess.Popen(
            [sys.executable, "-c", JOB],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        up = [json.loads(job.stdout.readline() or "{}") for job in jobs]  # both Rays started, together
        assert all("ports" in u for u in up), [job.stderr.read()[-2000:] for job in jobs if job.poll() is not None]
        for job in jobs:
            job.stdin.write("\n")
            job.stdin.flush()
        again = [json.loads(job.stdout.readline() or "{}") for job in jobs]
        assert all("again" in a for a in again)  # each still runs tasks with the other one up
        assert [job.wait(timeout=120) for job in jobs] == [0, 0]
    finally:
        for job in jobs:
            if job.poll() is None:
                job.kill()
                job.wait()
    a, b = (set(u["ports"]) for u in up)
    assert a and b and not a & b, (a, b)
    # every port is the kernel's, the dashboard agent's included (start_ray asks Ray for port 0)
    assert not (a | b) & FIXED_DEFAULTS, (a, b)
