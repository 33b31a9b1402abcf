# The bundled fixed references: every reference solver K times (one seed each) on the Solver tasks
# of the configured suites -> `tcsexam reference build` per task -> one merged file per suite.
# An explicit target (`snakemake --cores all reference`); no evaluation rule depends on it, and
# its outputs are protected: a reference is frozen once built (a changed one gets a new id).


rule reference:
    input:
        PLAN.reference_outputs(),


rule reference_run:
    input:
        solver=lambda w: f"{PLAN.reference_candidate(w.task)}/solver.yaml",
        task=lambda w: PLAN.task_file(w.task),
        generated=lambda w: PLAN.generated_inputs(w.task),
    output:
        f"{PLAN.reference_out}/{{task}}/seed{{seed}}/records.json",
    log:
        f"{PLAN.reference_out}/{{task}}/seed{{seed}}/run.log",
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
        candidate=lambda w: PLAN.reference_candidate(w.task),
        records_dir=lambda w: f"{PLAN.reference_out}/{w.task}/seed{w.seed}/records",
        instances=lambda w: PLAN.instances_arg(w.task),
        sandbox=config["run"]["sandbox"],
        trusted="--allow-unsandboxed" if config["run"].get("allow_unsandboxed") else "",
        ray_state=RAY_STATE,
    shell:
        "tcsexam run --task {input.task:q} --candidate {params.candidate:q} --attempt seed{wildcards.seed}"
        " --output {output:q} --records-dir {params.records_dir:q} --workers {threads} --sandbox {params.sandbox}"
        " {params.trusted} --seed {wildcards.seed} --no-progress {params.instances}"
        " --ray-head {params.ray_state:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule reference_build:
    input:
        runs=lambda w: PLAN.reference_runs(w.task),
        task=lambda w: PLAN.task_file(w.task),
    output:
        f"{PLAN.reference_out}/{{task}}/reference-{{task}}.json",
    log:
        f"{PLAN.reference_out}/{{task}}/reference.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        ref_id=PLAN.reference_build.get("id", "tcsexam-bundled-k3-v4"),
    shell:
        "tcsexam reference build --task {wildcards.task:q} --runs {input.runs:q} --id {params.ref_id:q}"
        " --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# A task listed in reference_build.carry keeps the values frozen in an earlier reference file
# (same reference solvers, seeds and limits), written under this build's id.
rule reference_carry:
    input:
        PLAN.reference_carry_source or [],
    output:
        f"{PLAN.reference_out}/{{task}}/carried-{{task}}.json",
    log:
        f"{PLAN.reference_out}/{{task}}/carry.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        ref_id=PLAN.reference_build.get("id", "tcsexam-bundled-k3-v4"),
    shell:
        "tcsexam reference merge {input:q} --tasks {wildcards.task:q} --carry-to {params.ref_id:q}"
        " --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


for _suite_name, _suite in PLAN.reference_suites.items():

    rule:
        name:
            f"reference_merge_{_suite_name}"
        input:
            [PLAN.reference_task_file(t) for t in _suite.tracks["solver"]],
        output:
            protected(PLAN.reference_build["outputs"][_suite_name]),
        log:
            f"{PLAN.reference_out}/merge-{_suite_name}.log",
        localrule: True
        conda:
            "../envs/tcsexam.yaml"
        threads: 1
        resources:
            **one_cpu_job(),
        params:
            suite=_suite.id,
            tasks=" ".join(_suite.tracks["solver"]),
        shell:
            "tcsexam reference merge {input:q} --suite {params.suite:q} --tasks {params.tasks}"
            " --output {output:q}"
            " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
