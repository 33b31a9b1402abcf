# Construction track judged by the pipeline: one job per (model, item, attempt) whose submission
# folder <solvers_dir>/<model>/<item>/<attempt>/ holds solver.yaml (a program writing the object,
# run through `tcsexam run`'s runner under the task's limits in the sandbox) or construction.txt
# (the object, checked in-process); then its row (original_task_score = the checker's reward).
# Constructions without such a folder keep their verdict files (rules/tracks.smk) or are missing.


rule construction_run:
    input:
        PLAN.construction_run_inputs,
    output:
        f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/records.json",
    log:
        f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/run.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        runtime=lambda w, attempt: PLAN.construction_runtime_min(
            w.item, attempt=attempt
        ),
        mem_mb=lambda w: PLAN.mem_mb(w.item, 1),
        cpus_per_task=1,
    params:
        task_file=lambda w: PLAN.task_file(w.item),
        submission=lambda w: PLAN.candidate(w.model, w.item, w.attempt),
        records_dir=lambda w: f"{OUT}/construction/{w.model}/{w.item}/{w.attempt}/records",
        sandbox=config["run"]["sandbox"],
        limiter=config["run"]["limiter"],
        seed=config["run"]["seed"],
        retries=config["run"]["max_retries"],
    shell:
        "tcsexam construction run --task {params.task_file:q} --submission {params.submission:q}"
        " --attempt {wildcards.attempt:q} --output {output:q} --records-dir {params.records_dir:q}"
        " --no-ray --sandbox {params.sandbox} --limiter {params.limiter} --seed {params.seed}"
        " --max-retries {params.retries} --no-progress"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Always exits 0 for a failed or missing result: it becomes a 0 (the status kept), judge_failed or
# not_finished row.
rule construction_row:
    input:
        records=f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/records.json",
    output:
        row=f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/row.json",
        checker=f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/checker.json",
    log:
        f"{OUT}/construction/{{model}}/{{item}}/{{attempt}}/row.log",
    priority: 1000
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=5, mem_mb=512),
    params:
        task_file=lambda w: PLAN.task_file(w.item),
    shell:
        "tcsexam construction row --records {input.records:q} --task {params.task_file:q}"
        " --model {wildcards.model:q} --attempt {wildcards.attempt:q}"
        " --checker-output {output.checker:q} --output {output.row:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
