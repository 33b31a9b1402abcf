# Input functions and shared settings. The planning itself (which attempts, which rows, which
# files) lives in tcsexam.workflow so that it is tested like the rest of the package.

import os
import subprocess
import sys
from pathlib import Path

import tcsexam

from tcsexam.attempts.plots import PLOTS
from tcsexam.runner.ray.head import stop_detached
from tcsexam.status import write_plan
from tcsexam.suites import TRACK_PATTERN
from tcsexam.workflow.batching import Batches
from tcsexam.workflow.resources import one_cpu_job
from tcsexam.workflow.salvage import run_started, salvage
from tcsexam.workflow.startup import (
    arm_ray_head,
    finish_tool_checks,
    keep_going,
    local_scheduling,
    prepare,
    stop_fork_server,
)

# tcsexam on PATH, the config checked (one line and exit 1 on a typo: `snakemake -n` shows it),
# a sandbox for the candidates checked once, damaged or stale derived files set aside so that this
# run rebuilds them. Every rule's shell command ends `> {log:q} 2>&1 || tcsexam job-failed {log:q}
# $?`: its output goes to its log and, when it fails, the log's one-line reason is printed on the
# terminal too (Snakemake itself only says "check log file(s)").
PLAN = prepare(
    config,
    workflow.basedir,
    main_process=workflow.is_main_process,
    local_exec=workflow.local_exec,
)
# `--sdm conda`: envs/tcsexam.post-deploy.sh installs the tcsexam imported here (this checkout)
os.environ.setdefault(
    "TCSEXAM_SOURCE", str(Path(tcsexam.__file__).resolve().parents[2])
)
OUT = PLAN.out
STARTED = run_started()
PLOT_FILES = [f"{OUT}/plots/{name}" for name in PLOTS]
RAY_STATE = f"{PLAN.results}/.ray-head"
# config `batch`: the cluster jobs packed into few, long ones (rules/batch.smk; none when off)
BATCHES = Batches(PLAN)


wildcard_constraints:
    model=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    task=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    item=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    attempt=r"[A-Za-z0-9][A-Za-z0-9_.+-]*",
    track=TRACK_PATTERN,
    seed=r"[0-9]+",


# One Ray head for a local run's Solver jobs (saves a Ray start per job), started by the first job
# that chooses Ray (none when every job runs in process); cluster jobs start their own. A head left
# by a killed run is reused by the next one and stopped at the end.
# A head that cannot start (a full or read-only results folder) stops the run with tcsexam's one line.
# A failed job never stops the rest: every job whose inputs exist still runs (--keep-going by
# default: keep_going), and `onerror` below writes the incomplete Index with each failed attempt's
# reason (tcsexam.workflow.salvage).
onstart:
    finish_tool_checks()  # prepare()'s checks of Coq and the DRAT checker: their lines first
    keep_going(workflow)
    # a local run: scheduled when jobs end, not by a rate limiter every second
    local_scheduling(workflow)
    write_plan(PLAN)  # what `tcsexam status` counts as planned
    try:
        # the online protocol runs no candidate: no Ray head
        if not PLAN.online and (
            config["run"]["ray"] == "shared"
            or (config["run"]["ray"] == "auto" and workflow.local_exec)
        ):
            # as `tcsexam runner ray-head start --on-demand`, in this process
            arm_ray_head(RAY_STATE, workflow.cores)
        else:
            shell(f"tcsexam runner ray-head stop --state-dir {RAY_STATE}")
    except subprocess.CalledProcessError:
        sys.exit(1)


# The stop finishes in a detached process: the workflow's result does not wait for Ray's teardown.
# stop_detached is `tcsexam runner ray-head stop --no-wait`, run in this process.
onsuccess:
    stop_detached(RAY_STATE)
    stop_fork_server()


# A run with failed jobs: the Index from what it produced, incomplete, each failed attempt
# judge_failed with its job's one-line reason (and the fix where the reason has one).
onerror:
    shell(f"tcsexam runner ray-head stop --state-dir {RAY_STATE}")
    stop_fork_server()
    if workflow.is_main_process:
        salvage(PLAN, since=STARTED)
