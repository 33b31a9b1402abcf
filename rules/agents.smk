# The agent stage: every model of `agents.models` works in the staged OR-Space workspaces
# (`tcsexam agents generate`, Inspect AI), then the OR-Space rules judge what it left and report.
# Self-contained like rules/orspace.smk, and included BEFORE it: each model and attempt becomes
# the OR-Space run `<model>.a<k>` (tcsexam.workflow.agents.AgentRuns), added to `orspace.runs`
# here, so rules/orspace.smk stages, executes, scores and reports it. Does nothing unless config
# has an `agents:` key (e.g. `--configfile config/agents.yaml`); target `agents_all`.
# docs/agents.md.

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
