# Theorem, construction and open-conjecture tracks: each attempt's checker verdict becomes its
# attempt row (complete proof/resolution -> 1 else 0; construction rewards unchanged). Planned
# attempts without a result (no verdict, no submission) get a `missing` row.


rule verdict_row:
    input:
        verdict=lambda w: PLAN.verdict(w.model, w.item, w.attempt),
    output:
        row=f"{OUT}/tracks/{{model}}/{{item}}/{{attempt}}/row.json",
    threads: 1
    resources:
        runtime=5,
        mem_mb=512,
        cpus_per_task=1,
    log:
        f"{OUT}/tracks/{{model}}/{{item}}/{{attempt}}/row.log",
    shell:
        "tcsexam attempts verdict-row --verdict {input.verdict:q} --model {wildcards.model:q}"
        " --item {wildcards.item:q} --attempt {wildcards.attempt:q} --output {output.row:q} > {log:q} 2>&1"


rule missing_row:
    output:
        row=f"{OUT}/missing/{{track}}/{{model}}/{{item}}/{{attempt}}/row.json",
    params:
        reason=PLAN.missing_reason,
        protocol=lambda w: PLAN.protocol if w.track == "solver" else "",
    threads: 1
    resources:
        runtime=5,
        mem_mb=512,
        cpus_per_task=1,
    log:
        f"{OUT}/missing/{{track}}/{{model}}/{{item}}/{{attempt}}/row.log",
    shell:
        "tcsexam attempts missing-row --model {wildcards.model:q} --track {wildcards.track}"
        " --item {wildcards.item:q} --attempt {wildcards.attempt:q} --protocol '{params.protocol}'"
        " --reason {params.reason:q} --output {output.row:q} > {log:q} 2>&1"
