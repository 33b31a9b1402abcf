# Memorisation caught (docs/twins.md): the candidate scan of every offline Solver attempt, and with
# `twins: {seed: S}` in the config the twin sets of every Solver task, the runs on them (same
# limits, same attempts) and their fixed-reference scores. `tcsexam score --twins` (rules/index.smk)
# reports the paired differences original - twin.


# Reads the candidate's files (never runs them); findings are evidence, never a failure.
rule scan_candidate:
    input:
        PLAN.run_inputs,
    output:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/scan.json",
    log:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/scan.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        task_file=lambda w: PLAN.task_file(w.task),
        candidate=lambda w: PLAN.candidate(w.model, w.task, w.attempt),
        reference=PLAN.reference,
    shell:
        "tcsexam scan-candidate {params.candidate:q} --task {params.task_file:q} --reference {params.reference:q}"
        " --output {output:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule twins_make:
    input:
        PLAN.twins_make_inputs,
    output:
        task=f"{OUT}/twins/s{{seed}}/tasks/{{task}}/task.yaml",
        reference=f"{OUT}/twins/s{{seed}}/tasks/{{task}}/reference.json",
        map=f"{OUT}/twins/s{{seed}}/tasks/{{task}}/map.json",
    log:
        f"{OUT}/twins/s{{seed}}/logs/twins-make-{{task}}.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        task_file=lambda w: PLAN.task_file(w.task),
        folder=lambda w: PLAN.twin_task_dir(w.seed, w.task),
        reference=lambda w: PLAN.reference_path(),
    shell:
        "tcsexam twins make --task {params.task_file:q} --seed {wildcards.seed} --output {params.folder:q}"
        " --reference {params.reference:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# The twin references of every Solver task of a twin set in one file (the cohort's reference under
# `twins: {score_on: twins}`): they share the id <reference id>-twin-s<seed>.
rule twins_reference:
    input:
        PLAN.twin_references,
    output:
        f"{OUT}/twins/s{{seed}}/reference.json",
    log:
        f"{OUT}/twins/s{{seed}}/logs/twins-reference.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    shell:
        "tcsexam reference merge {input:q} --output {output:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule twins_run:
    input:
        PLAN.twin_run_inputs,
    output:
        f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
    log:
        f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/run.log",
    priority: lambda w: PLAN.priority(w.task)
    conda:
        "../envs/tcsexam.yaml"
    threads: config["run"]["threads"]
    resources:
        runtime=lambda w, threads, attempt: PLAN.runtime_min(
            w.task, threads, attempt=attempt
        ),
        mem_mb=lambda w, threads: PLAN.mem_mb(w.task, threads),
        cpus_per_task=lambda w, threads: threads,
    params:
        task_file=lambda w: f"{PLAN.twin_task_dir(w.seed, w.task)}/task.yaml",
        candidate=lambda w: PLAN.candidate(w.model, w.task, w.attempt),
        records_dir=lambda w: f"{PLAN.twin_attempt_dir(w.seed, w.model, w.task, w.attempt)}/records",
        instances=PLAN.twin_instances_arg,
        sandbox=config["run"]["sandbox"],
        trusted="--allow-unsandboxed" if config["run"].get("allow_unsandboxed") else "",
        limiter=config["run"]["limiter"],
        seed=config["run"]["seed"],
        retries=config["run"]["max_retries"],
        ray_state=RAY_STATE,
    shell:
        "tcsexam run --task {params.task_file:q} --candidate {params.candidate:q} --attempt {wildcards.attempt:q}"
        " --output {output:q} --records-dir {params.records_dir:q} --workers {threads}"
        " --sandbox {params.sandbox} {params.trusted} --limiter {params.limiter} --seed {params.seed}"
        " --max-retries {params.retries} --no-progress {params.instances}"
        " --ray-head {params.ray_state:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Always exits 0 for a refused or missing result (as attempts_solver_row).
rule twins_solver_row:
    input:
        records=f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
        reference=f"{OUT}/twins/s{{seed}}/tasks/{{task}}/reference.json",
    output:
        row=f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/row.json",
        relative=f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/relative.json",
    log:
        f"{OUT}/twins/s{{seed}}/solver/{{model}}/{{task}}/{{attempt}}/score.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        protocol=PLAN.protocol,
    shell:
        "tcsexam attempts solver-row --records {input.records:q} --task {wildcards.task:q}"
        " --reference {input.reference:q} --model {wildcards.model:q} --attempt {wildcards.attempt:q}"
        " --protocol {params.protocol} --relative-output {output.relative:q} --output {output.row:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
