# OR-Space evaluation: execute Build/Revise submissions, score objectives, score Explain answers.
# Self-contained: included by the Snakefile; does nothing unless config has an `orspace:` key
# (e.g. `--configfile config/orspace.yaml`) and the target `orspace_all` (or one of its files)
# is asked for. The config is validated against workflow/schemas/orspace.schema.yaml here.

import os

from snakemake.utils import validate

from tcsexam.workflow import OrspaceRuns

if config.get("orspace") is not None:
    validate(
        config["orspace"],
        os.path.join(workflow.basedir, "workflow", "schemas", "orspace.schema.yaml"),
    )
ORSPACE = OrspaceRuns(config.get("orspace"))
ORSPACE_OUT = ORSPACE.out


wildcard_constraints:
    run=r"[A-Za-z0-9][A-Za-z0-9_.-]*",


rule orspace_all:
    input:
        ORSPACE.targets,


# Records (the resume point) live in <run>/records/ and are not declared outputs, so a rerun after
# an interruption reuses every finished program instead of deleting it.
rule orspace_execute:
    output:
        predictions=f"{ORSPACE_OUT}/{{run}}/predictions.jsonl",
    log:
        f"{ORSPACE_OUT}/{{run}}/execute.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: lambda w: ORSPACE.runs[w.run]["workers"]
    resources:
        runtime=ORSPACE.execute_runtime,
        mem_mb=lambda w, threads: 1024 + threads * ORSPACE.runs[w.run]["mem_mb"],
        cpus_per_task=lambda w, threads: threads,
    params:
        workspaces=lambda w: ORSPACE.run(w)["workspaces"],
        outdir=lambda w: f"{ORSPACE_OUT}/{w.run}",
        modes=lambda w: " ".join(ORSPACE.run(w)["modes"]),
        limit=lambda w: ORSPACE.run(w)["time_limit_s"],
        mem=lambda w: ORSPACE.run(w)["mem_mb"],
        sandbox=lambda w: ORSPACE.run(w)["sandbox"],
    shell:
        "tcsexam orspace execute --workspaces {params.workspaces:q} --output-dir {params.outdir:q}"
        " --modes {params.modes} --time-limit {params.limit} --mem-mb {params.mem}"
        " --sandbox {params.sandbox} --workers {threads} > {log:q} 2>&1"


rule orspace_score_objectives:
    input:
        predictions=f"{ORSPACE_OUT}/{{run}}/predictions.jsonl",
    output:
        f"{ORSPACE_OUT}/{{run}}/objectives.json",
    log:
        f"{ORSPACE_OUT}/{{run}}/objectives.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        runtime=10,
        mem_mb=1024,
        cpus_per_task=1,
    params:
        release=lambda w: ORSPACE.run(w)["release"],
        workspaces=lambda w: ORSPACE.run(w)["workspaces"],
        modes=lambda w: " ".join(ORSPACE.run(w)["modes"]),
    shell:
        "tcsexam orspace score-objectives --release {params.release:q} --predictions {input.predictions:q}"
        " --workspaces {params.workspaces:q} --modes {params.modes} --output {output:q} > {log:q} 2>&1"


rule orspace_explain_score:
    input:
        answers=lambda w: ORSPACE.run(w)["explain"]["answers"],
    output:
        f"{ORSPACE_OUT}/{{run}}/explain.json",
    log:
        f"{ORSPACE_OUT}/{{run}}/explain.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        runtime=120,
        mem_mb=1024,
        cpus_per_task=1,
    params:
        args=ORSPACE.explain_args,
    shell:
        "tcsexam orspace explain-score {params.args} --output {output:q} > {log:q} 2>&1"
