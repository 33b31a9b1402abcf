# The agent stage: every model of `agents.models` works in the staged OR-Space workspaces
# (`tcsexam agents generate`, Inspect AI), then the OR-Space rules judge what it left and report.
# Self-contained like rules/orspace.smk, and included BEFORE it: each model and attempt becomes
# the OR-Space run `<model>.a<k>` (tcsexam.workflow.agents.AgentRuns), added to `orspace.runs`
# here, so rules/orspace.smk stages, executes, scores and reports it. Does nothing unless config
# has an `agents:` key with `release` (e.g. `--configfile config/agents.yaml`); target `agents_all`.
# With `agents.tcsexam`, the models write their TCSExam submissions inside the evaluation run
# (rule agents_solve, below; e.g. `--configfile config/test/agents-tracks.yaml`). docs/agents.md.

import os

from snakemake.utils import validate

from tcsexam.workflow.agents import AgentRuns

if config.get("agents") is not None:
    validate(
        config["agents"],
        os.path.join(workflow.basedir, "workflow", "schemas", "agents.schema.yaml"),
    )
AGENTS = AgentRuns(
    config.get("agents"),
    (config.get("orspace") or {}).get("output_dir", "results/orspace"),
)
if AGENTS.models:
    config["orspace"] = AGENTS.merged_orspace(config.get("orspace"))
AGENTS_OUT = AGENTS.out


rule agents_all:
    input:
        AGENTS.targets,


# One generation run: the model in every staged workspace of one condition. Its per-sample records
# (generation/samples/) are not declared outputs: a rerun after an interruption or an infrastructure
# failure resumes them without asking the model again. The job exits 1 while a sample is
# incomplete, so the judges wait for the rerun.
rule agents_generate:
    input:
        staged=f"{AGENTS_OUT}/{{run}}/{{cond}}/staged",
    output:
        f"{AGENTS_OUT}/{{run}}/{{cond}}/generation/generation.json",
    log:
        f"{AGENTS_OUT}/{{run}}/{{cond}}/generate.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: AGENTS.generate_threads
    resources:
        **AGENTS.endpoint_resources(),
        runtime=AGENTS.generate_runtime,
        mem_mb=AGENTS.generate_mem_mb,
        cpus_per_task=lambda w, threads: threads,
    params:
        outdir=lambda w: AGENTS.generation_dir(w.run, w.cond),
        args=AGENTS.generate_args,
    shell:
        "tcsexam agents generate --staged {input.staged:q} --output {params.outdir:q} {params.args}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


if AGENTS.config.get("run_locally"):

    localrules:
        agents_generate,


# The TCSExam tracks (`agents.tcsexam`): each model of the config's `models` that agents.models
# names writes its submissions of the suite's items of each track, one `tcsexam agents solve` job
# per model, track and planned attempt (tcsexam.workflow.agent_tracks). A checkpoint: which
# judge jobs and rows the evaluation has depends on what the agents left, so the plan's input
# functions wait for it (PLAN.agents_waiter) and plan afresh. The Solver sessions' candidates are
# judged online inside the job (the online protocol's records); the evaluation's rules judge the
# submission folders offline. Its per-item records (samples/, the attempt folders' generation.json)
# are not declared outputs: a rerun after an interruption resumes without asking the model again.
# The job exits 1 while an item is incomplete (an infrastructure failure), so nothing is judged
# from it until a rerun. (This file also runs alone, without the evaluation's rules: no PLAN.)
if globals().get("PLAN") is not None and PLAN.agent_jobs():

    checkpoint agents_solve:
        output:
            f"{PLAN.agent_runs_dir}/{{model}}/{{track}}/{{attempt}}/generation.json",
        log:
            f"{PLAN.agent_runs_dir}/{{model}}/{{track}}/{{attempt}}/solve.log",
        conda:
            "../envs/tcsexam.yaml"
        threads: PLAN.agents_threads
        resources:
            **PLAN.agents_endpoint_resources(),
            runtime=PLAN.agents_runtime,
            mem_mb=lambda w, threads: 2048
            + threads
            * int((PLAN.agents_config.get("sandbox") or {}).get("call_mem_mb", 4096)),
            cpus_per_task=lambda w, threads: threads,
        params:
            outdir=lambda w: PLAN.agent_run_dir(w.model, w.track, w.attempt),
            args=PLAN.agents_solve_args,
        shell:
            "tcsexam agents solve {params.args} --output {params.outdir:q}"
            " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"

    PLAN.agents_waiter = lambda: [
        checkpoints.agents_solve.get(**job) for job in PLAN.agent_jobs()
    ]

    rule agents_tracks:
        input:
            PLAN.agent_summaries,

    if PLAN.agents_config.get("run_locally"):

        localrules:
            agents_solve,
