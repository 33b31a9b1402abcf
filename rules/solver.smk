# Solver track: one job per (model, task, attempt) running every instance with `tcsexam run`
# (Ray inside the job, or the workflow's shared Ray head), then the fixed-reference score.
# The per-instance records (records/) are the resume point and deliberately not a declared output:
# Snakemake deletes the outputs of an incomplete job, and they must survive a kill.


rule run:
    input:
        PLAN.run_inputs,
    output:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
    log:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/run.log",
    # longest possible jobs first (instances x wall limit), so no long job starts last
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
        task_file=lambda w: PLAN.task_file(w.task),
        candidate=lambda w: PLAN.candidate(w.model, w.task, w.attempt),
        records_dir=lambda w: f"{OUT}/solver/{w.model}/{w.task}/{w.attempt}/records",
        instances=lambda w: PLAN.instances_arg(w.task),
        sandbox=config["run"]["sandbox"],
        trusted="--allow-unsandboxed" if config["run"].get("allow_unsandboxed") else "",
        limiter=config["run"]["limiter"],
        seed=config["run"]["seed"],
        keep=config["run"]["keep"],
        keep_max_mb=config["run"]["keep_max_mb"],
        retries=config["run"]["max_retries"],
        ray_state=RAY_STATE,
    shell:
        "tcsexam run --task {params.task_file:q} --candidate {params.candidate:q} --attempt {wildcards.attempt:q}"
        " --output {output:q} --records-dir {params.records_dir:q} --workers {threads}"
        " --sandbox {params.sandbox} {params.trusted} --limiter {params.limiter} --seed {params.seed}"
        " --keep {params.keep} --keep-max-mb {params.keep_max_mb}"
        " --max-retries {params.retries} --no-progress {params.instances}"
        " --ray-head {params.ray_state:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# The online protocol: the final judge's records of one (model, task, attempt), checked and stored
# as its records.json (no candidate runs). Offline, its input is a path no rule makes, so `run`
# makes every records.json; online, the plan never asks `run` for one (no job runs a candidate).
ruleorder: ingest_online > run


rule ingest_online:
    input:
        PLAN.online_inputs,
    output:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
    log:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/ingest.log",
    localrule: True
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        records=lambda w: PLAN.online_input(w.model, w.task, w.attempt),
        provenance=PLAN.online_provenance_arg,
        task_file=lambda w: PLAN.task_file(w.task),
    shell:
        "tcsexam attempts ingest-online --input {params.records:q} {params.provenance} --task-file {params.task_file:q}"
        " --model {wildcards.model:q} --attempt {wildcards.attempt:q} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# The generated instances of a task (Full's random families): written by `tcsexam generate`, each
# checked against the sha256 its task file records; the stamp is an input of the task's runs.
for _task in PLAN.generated_tasks:

    rule:
        name:
            f"generate_{_task.replace('-', '_')}"
        input:
            PLAN.task_file(_task),
        output:
            PLAN.generated_stamp(_task),
        log:
            f"{PLAN.results}/logs/generate-{_task}.log",
        localrule: True
        conda:
            "../envs/tcsexam.yaml"
        threads: 1
        resources:
            **one_cpu_job(),
        shell:
            "tcsexam generate --task {input:q} --stamp {output:q}"
            " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# Always exits 0 for a refused or missing result: it becomes a judge_failed / not_finished row
# (and relative.json a refusal the scorer never averages).
rule attempts_solver_row:
    input:
        records=f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/records.json",
    output:
        row=f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/row.json",
        relative=f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/relative.json",
    log:
        f"{OUT}/solver/{{model}}/{{task}}/{{attempt}}/score.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        reference=PLAN.reference,
        protocol=PLAN.protocol,
    shell:
        "tcsexam attempts solver-row --records {input.records:q} --task {wildcards.task:q}"
        " --reference {params.reference:q} --model {wildcards.model:q} --attempt {wildcards.attempt:q}"
        " --protocol {params.protocol} --relative-output {output.relative:q} --output {output.row:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
