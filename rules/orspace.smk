# OR-Space evaluation: per run and stage condition, stage the release (leakage audit), execute the
# Build/Revise submissions, score objectives and Explain answers; per run, the condition effects.
# Self-contained: included by the Snakefile; does nothing unless config has an `orspace:` key
# (e.g. `--configfile config/orspace.yaml`) and the target `orspace_all` (or one of its files)
# is asked for. The config is validated against workflow/schemas/orspace.schema.yaml here.

import os

from snakemake.utils import validate

from tcsexam.workflow import OrspaceRuns
from tcsexam.workflow.resources import one_cpu_job

if config.get("orspace") is not None:
    validate(
        config["orspace"],
        os.path.join(workflow.basedir, "workflow", "schemas", "orspace.schema.yaml"),
    )
ORSPACE = OrspaceRuns(config.get("orspace"))
ORSPACE_OUT = ORSPACE.out


wildcard_constraints:
    run=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    cond=r"revise-(?:all|code|model)_(?:filesystem|flat)_(?:both|none|formulation|code)",


rule orspace_all:
    input:
        ORSPACE.targets,


# The staged release of one condition (what the agent is given), refused on any leak.
rule orspace_stage:
    output:
        directory(f"{ORSPACE_OUT}/{{run}}/{{cond}}/staged"),
    log:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/stage.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=30, mem_mb=2048),
    params:
        args=ORSPACE.stage_args,
    shell:
        "tcsexam orspace stage {params.args} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Records (the resume point) live in <run>/<cond>/records/ and are not declared outputs, so a
# rerun after an interruption reuses every finished program instead of deleting it.
rule orspace_execute:
    input:
        staged=f"{ORSPACE_OUT}/{{run}}/{{cond}}/staged",
        generation=ORSPACE.generation,
    output:
        predictions=f"{ORSPACE_OUT}/{{run}}/{{cond}}/predictions.jsonl",
    log:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/execute.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: lambda w: ORSPACE.runs[w.run]["workers"]
    resources:
        runtime=ORSPACE.execute_runtime,
        mem_mb=lambda w, threads: 1024 + threads * ORSPACE.runs[w.run]["mem_mb"],
        cpus_per_task=lambda w, threads: threads,
    params:
        workspaces=ORSPACE.workspaces,
        outdir=lambda w: f"{ORSPACE_OUT}/{w.run}/{w.cond}",
        modes=lambda w: " ".join(ORSPACE.run(w)["modes"]),
        limit=lambda w: ORSPACE.run(w)["time_limit_s"],
        mem=lambda w: ORSPACE.run(w)["mem_mb"],
        sandbox=lambda w: ORSPACE.run(w)["sandbox"],
        image=lambda w: ORSPACE.run(w)["docker_image"],
        extra=ORSPACE.execute_args,
    shell:
        "tcsexam orspace execute --workspaces {params.workspaces:q} --output-dir {params.outdir:q}"
        " --modes {params.modes} --time-limit {params.limit} --mem-mb {params.mem} --sandbox {params.sandbox}"
        " --docker-image {params.image:q} --workers {threads} --condition {wildcards.cond} {params.extra}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Once per run with `references`: the release's Build references re-solved by the project's
# reference models (what score-objectives' extra pass-rate views read).
rule orspace_audit_references:
    output:
        f"{ORSPACE_OUT}/{{run}}/reference-audit.json",
    log:
        f"{ORSPACE_OUT}/{{run}}/reference-audit.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=60),
    params:
        args=ORSPACE.audit_args,
    shell:
        "tcsexam orspace audit-references {params.args} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule orspace_score_objectives:
    input:
        unpack(ORSPACE.score_inputs),
        predictions=f"{ORSPACE_OUT}/{{run}}/{{cond}}/predictions.jsonl",
    output:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/objectives.json",
    log:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/objectives.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        release=lambda w: ORSPACE.run(w)["release"],
        workspaces=ORSPACE.workspaces,
        modes=lambda w: " ".join(ORSPACE.run(w)["modes"]),
        extra=ORSPACE.score_args,
    shell:
        "tcsexam orspace score-objectives --release {params.release:q} --predictions {input.predictions:q}"
        " --workspaces {params.workspaces:q} --modes {params.modes} {params.extra} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule orspace_explain_score:
    input:
        staged=f"{ORSPACE_OUT}/{{run}}/{{cond}}/staged",
        answers=ORSPACE.explain_answers_input,
    output:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/explain.json",
    log:
        f"{ORSPACE_OUT}/{{run}}/{{cond}}/explain.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=120),
    params:
        args=ORSPACE.explain_args,
    shell:
        "tcsexam orspace explain-score {params.args} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Per run: Pass@1 and Explain means per mode and condition with intervals, failure modes, and the
# paired differences of the conditions (also an item of `snakemake --report`).
rule orspace_effects:
    input:
        unpack(ORSPACE.effects_inputs),
    output:
        json=f"{ORSPACE_OUT}/{{run}}/effects.json",
        html=report(
            f"{ORSPACE_OUT}/{{run}}/effects.html",
            caption="../workflow/report/orspace_effects.rst",
            category="OR-Space",
            labels={"run": "{run}", "table": "conditions, failure modes, Explain"},
        ),
    log:
        f"{ORSPACE_OUT}/{{run}}/effects.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        args=ORSPACE.effects_args,
    shell:
        "tcsexam orspace effects --model {wildcards.run} {params.args} --output {output.json:q}"
        " --html {output.html:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Across runs: Pass@1 and Explain per run, the interface and legacy-code effects, the Explain vs
# Build/Revise correlation (also an item of `snakemake --report`).
rule orspace_leaderboard:
    input:
        ORSPACE.leaderboard_inputs,
    output:
        json=f"{ORSPACE_OUT}/leaderboard.json",
        html=report(
            f"{ORSPACE_OUT}/leaderboard.html",
            caption="../workflow/report/orspace_leaderboard.rst",
            category="OR-Space",
            labels={"table": "leaderboard across runs"},
        ),
    log:
        f"{ORSPACE_OUT}/leaderboard.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        args=ORSPACE.leaderboard_args,
    shell:
        "tcsexam orspace leaderboard {params.args} --output {output.json:q} --html {output.html:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
