# Theorem, construction and open-conjecture tracks: each attempt's checker verdict becomes its
# attempt row (complete proof/resolution -> 1 else 0; construction rewards unchanged), one job per
# model; a planned attempt without a verdict gets a `missing` row. A planned Solver attempt without
# a submission gets a `missing` row too (attempts_missing_row). A theorem / open-conjecture verdict
# whose statement_sha256 is not its task statement's digest scores 0 (docs/proofs.md).


rule attempts_verdict_rows:
    input:
        verdicts=PLAN.verdict_files,
        statements=PLAN.verdict_statement_inputs,
    output:
        f"{OUT}/tracks/{{model}}/rows.json",
    log:
        f"{OUT}/tracks/{{model}}/rows.log",
    priority: 1000
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=5, mem_mb=512),
    params:
        suite=PLAN.config["suite"],
        verdicts_dir=PLAN.verdicts_dir,
        attempts=PLAN.attempts_arg,
        judged=PLAN.judged_constructions_arg,
        task_files=PLAN.verdict_task_files_arg,
    shell:
        "tcsexam attempts verdict-rows --model {wildcards.model:q} --suite {params.suite:q}"
        " --verdicts-dir {params.verdicts_dir:q} --attempts {params.attempts} {params.judged}"
        " {params.task_files} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule attempts_missing_row:
    output:
        row=f"{OUT}/missing/{{track}}/{{model}}/{{item}}/{{attempt}}/row.json",
    log:
        f"{OUT}/missing/{{track}}/{{model}}/{{item}}/{{attempt}}/row.log",
    priority: 1000
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=5, mem_mb=512),
    params:
        reason=PLAN.missing_reason,
        protocol=lambda w: PLAN.protocol if w.track == "solver" else "",
    shell:
        "tcsexam attempts missing-row --model {wildcards.model:q} --track {wildcards.track}"
        " --item {wildcards.item:q} --attempt {wildcards.attempt:q} --protocol '{params.protocol}'"
        " --reason {params.reason:q} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
