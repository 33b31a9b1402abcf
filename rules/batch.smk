# Few, long cluster jobs (config `batch`; docs/workflow.md, SLURM): included when the run is batched
# (batch.enabled: auto, on when the jobs go to a cluster executor; true; tcsexam.workflow.batching.decide):
# the Solver runs, construction runs and proof checks packed into batches of about
# batch.target_min minutes each (tcsexam.workflow.batching). One batch is one cluster job running
# each member with its own rule's command under one Ray (`tcsexam batch run`), its output and log
# staged beside their paths (<path>.staged); a local job per member renames them into place or fails with the member's reason
# (`tcsexam batch take`). A job in no batch (batching off, an online run, a kind not batched)
# finds no summary as its take rule's input and runs under its own rule.


rule run_batch:
    input:
        BATCHES.inputs,
    output:
        f"{OUT}/batches/{{batch}}.json",
    log:
        f"{OUT}/batches/{{batch}}.log",
    benchmark:
        f"{OUT}/batches/{{batch}}.benchmark.tsv"
    priority: lambda w: BATCHES.priority(w.batch)
    conda:
        "../envs/tcsexam.yaml"
    threads: config["run"]["threads"]
    resources:
        runtime=lambda w, attempt: BATCHES.batch(w.batch).runtime_min * min(attempt, 2),
        mem_mb=lambda w: BATCHES.batch(w.batch).mem_mb,
        cpus_per_task=lambda w, threads: threads,
    params:
        members=BATCHES.members_arg,
        ray_state=RAY_STATE,
    shell:
        "tcsexam batch run --threads {threads} --output {output:q} --ray-head {params.ray_state:q}"
        " {params.members} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


ruleorder: ingest_online > run_take > run


rule run_take:
    input:
        lambda w: BATCHES.summary_of("solver", w),
    output:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
    log:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/run.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    shell:
        "tcsexam batch take --summary {input:q} --key solver/{wildcards.model}/{wildcards.task}/{wildcards.attempt}"
        " --output {output:q} --log {log:q} || tcsexam job-failed {log:q} $?"


ruleorder: construction_take > construction_run


rule construction_take:
    input:
        lambda w: BATCHES.summary_of("construction", w),
    output:
        f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/records.json",
    log:
        f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/run.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    shell:
        "tcsexam batch take --summary {input:q} --key construction/{wildcards.model}/{wildcards.item}/{wildcards.attempt}"
        " --output {output:q} --log {log:q} || tcsexam job-failed {log:q} $?"


ruleorder: proof_take > proof_check


# the verdict moved into place, then its row (rules/proof.smk's PROOF_ROW, as proof_check does)
rule proof_take:
    input:
        lambda w: BATCHES.summary_of("proof", w),
    output:
        verdict=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/verdict.json",
        row=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/row.json",
    log:
        check=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/check.log",
        row=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/row.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        task_file=lambda w: PLAN.task_file(w.item),
    shell:
        "{{ tcsexam batch take --summary {input:q} --key proof/{wildcards.model}/{wildcards.item}/{wildcards.attempt}"
        " --output {output.verdict:q} --log {log.check:q} || tcsexam job-failed {log.check:q} $?; }} && "
        + PROOF_ROW
