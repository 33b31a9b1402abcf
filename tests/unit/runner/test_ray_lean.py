"""A job's own Ray starts lean: no log monitor (nothing reads what it forwards with
`log_to_driver=False`), and it still runs tasks; TCSEXAM_RAY_LEAN=0 gives the previous start (with
it), which shows that the check can see the process. Real Ray, a real process each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

JOB = textwrap.dedent(
    """
    import json, os
    import psutil
    from tcsexam.runner.ray.job import start_ray
    handle = start_ray(num_cpus=1)
    import ray

    @ray.remote
    def where():
        return os.getpid()

    pid = ray.get(where.remote(), timeout=300)
    lines = []
    for p in psutil.Process().children(recursive=True):
        try:
            lines.append(" ".join(p.cmdline()))
        except psutil.Error:
            pass
    ray.shutdown()
    print(json.dumps({"pid": pid, "cmdlines": lines}))
    """
)


def _own_ray(lean: str) -> dict:
    env = {**os.environ, "TCSEXAM_RAY_LEAN": lean}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run([sys.executable, "-c", JOB], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("lean", ["1", "0"])
def test_own_ray_starts_without_log_monitor_unless_asked(lean):
    seen = _own_ray(lean)
    assert seen["pid"] > 0
    assert any("raylet" in line for line in seen["cmdlines"]), seen["cmdlines"]
    monitors = [line for line in seen["cmdlines"] if "log_monitor.py" in line]
    assert bool(monitors) == (lean == "0"), seen["cmdlines"]
