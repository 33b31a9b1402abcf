# The attempt table of every track, the cohort, the Index and the report plots.


rule attempts_cohort:
    input:
        PLAN.cohort_inputs,
    output:
        f"{OUT}/cohort.json",
    log:
        f"{OUT}/logs/cohort.log",
    priority: 1000
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(runtime=5, mem_mb=512),
    params:
        suite=PLAN.config["suite"],
        protocol=PLAN.protocol,
        reference=PLAN.cohort_reference(),
        models=PLAN.cohort_models(),
        policy=config["adoption_policy"],
    shell:
        "tcsexam attempts cohort --suite {params.suite:q} --protocol {params.protocol} --reference {params.reference:q}"
        " --model {params.models} --adoption-policy {params.policy:q} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule attempts_table:
    input:
        rows=PLAN.row_files,
        adoption=PLAN.table_inputs,
    output:
        f"{OUT}/attempts.csv",
    log:
        f"{OUT}/logs/attempt_table.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        adoption=PLAN.table_args,
    shell:
        "tcsexam attempts table --rows {input.rows:q} {params.adoption} --output {output:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# The attempt table's cost companion: each attempt's tokens, cost, time and feedback calls from the
# agent's generation.json beside its submission (docs/scoring.md, "Cost beside the Index").
rule attempts_generation:
    input:
        attempts=f"{OUT}/attempts.csv",
        records=PLAN.generation_files,
    output:
        f"{OUT}/generation.csv",
    log:
        f"{OUT}/logs/generation.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        solvers_dir=PLAN.solvers_dir,
    shell:
        "tcsexam attempts generation --attempts {input.attempts:q} --solvers-dir {params.solvers_dir:q}"
        " --output {output:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule score:
    input:
        attempts=f"{OUT}/attempts.csv",
        cohort=f"{OUT}/cohort.json",
        generation=f"{OUT}/generation.csv",
        relative=PLAN.score_inputs,
    output:
        report(
            f"{OUT}/index.json",
            caption="../workflow/report/index.rst",
            category="Index",
            labels={"file": "index.json"},
        ),
    log:
        f"{OUT}/logs/index.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        suite=PLAN.config["suite"],
        solver_dir=PLAN.score_solver_dir,
        twins=PLAN.score_twin_args,
        checksums=f"{OUT}/.checksums/index.json",
        resamples=config["bootstrap"]["resamples"],
        seed=config["bootstrap"]["seed"],
    shell:
        "tcsexam score --suite {params.suite:q} --attempts {input.attempts:q} --cohort {input.cohort:q}"
        " --output {output:q} --solver-scores {params.solver_dir:q} {params.twins} --checksums {params.checksums:q}"
        " --generation {input.generation:q}"
        " --bootstrap-resamples {params.resamples} --bootstrap-seed {params.seed}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


rule attempts_plots:
    input:
        index=f"{OUT}/index.json",
        attempts=f"{OUT}/attempts.csv",
        records=PLAN.records_files,
        relative=PLAN.score_inputs,
    output:
        report(
            f"{OUT}/plots/track_means.png",
            caption="../workflow/report/track_means.rst",
            category="Index",
            labels={"plot": "track means per model"},
        ),
        report(
            f"{OUT}/plots/solver_relative.png",
            caption="../workflow/report/solver_relative.rst",
            category="Solver track",
            labels={"plot": "relative score per task"},
        ),
        report(
            f"{OUT}/plots/instance_scores.png",
            caption="../workflow/report/instance_scores.rst",
            category="Solver track",
            labels={"plot": "per-instance score distribution"},
        ),
        report(
            f"{OUT}/plots/status_counts.png",
            caption="../workflow/report/status_counts.rst",
            category="Solver track",
            labels={"plot": "status counts per task"},
        ),
        report(
            f"{OUT}/plots/anytime_profiles.png",
            caption="../workflow/report/anytime_profiles.rst",
            category="Solver track",
            labels={"plot": "score against time limit (anytime tasks)"},
        ),
    log:
        f"{OUT}/logs/plots.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(mem_mb=2048),
    params:
        solver_dir=PLAN.score_solver_dir,
        plots_dir=lambda w, output: os.path.dirname(output[0]),
    shell:
        "tcsexam attempts plots --index {input.index:q} --attempts {input.attempts:q}"
        " --solver-dir {params.solver_dir:q} --output-dir {params.plots_dir:q}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"


# The provenance manifest of the evaluation (versions, machine, limiter, sandbox, and the sha256 of
# the reference, task files, instances, candidates and verdict files): what `tcsexam compare` reads.
rule manifest:
    input:
        index=f"{OUT}/index.json",
        cohort=f"{OUT}/cohort.json",
        attempts=f"{OUT}/attempts.csv",
        records=PLAN.records_files,
        relative=PLAN.relative_files,
        scans=PLAN.scan_files,
    output:
        f"{OUT}/manifest.json",
    log:
        f"{OUT}/logs/manifest.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(),
    params:
        run_dir=lambda w, input: os.path.dirname(input.index),
        reference=PLAN.reference,
        solvers_dir=PLAN.solvers_dir,
        verdicts_dir=PLAN.verdicts_dir,
        task_files=PLAN.task_files_arg,
        suite=PLAN.config["suite"],
    shell:
        "tcsexam manifest {params.run_dir:q} --output {output:q} --reference {params.reference:q} --suite {params.suite:q}"
        " --solvers-dir {params.solvers_dir:q} --verdicts-dir {params.verdicts_dir:q} {params.task_files}"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
