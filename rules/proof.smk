# Theorem and open-conjecture proofs checked by the pipeline (docs/proofs.md): one job per
# (model, item, attempt) whose submission folder <solvers_dir>/<model>/<item>/<attempt>/ holds
# proof.v, checked by `tcsexam proof check` (coqc and coqchk in the candidates' sandbox under their
# limiter), then, in the same job, its row (complete -> 1, anything else -> 0, the checker's status
# in the note). Items without such a folder keep their verdict files (rules/tracks.smk) or are missing.

# The attempt's row from its verdict, run by the job that made the verdict (proof_check, or
# proof_take in a batched run, rules/batch.smk): a few milliseconds in the fork server, which as a
# job of its own cost Snakemake's handling of a job, 30 times in the bundled default.
# Braced: `CHECK && PROOF_ROW` never runs the row's `job-failed` after a failed check (which
# leaves its own failure note beside check.log, the one tcsexam.workflow.salvage reports).
PROOF_ROW = (
    "{{ tcsexam attempts verdict-row --verdict {output.verdict:q} --model {wildcards.model:q}"
    " --item {wildcards.item:q} --attempt {wildcards.attempt:q} --task-file {params.task_file:q}"
    " --output {output.row:q} > {log.row:q} 2>&1 || tcsexam job-failed {log.row:q} $?; }}"
)


# Always exits 0 for any verdict (complete, incomplete, invalid, timeout, memout, crash,
# infrastructure_error); exit 1 only for bad input (task file, no coqc of the task's version).
rule proof_check:
    input:
        PLAN.proof_check_inputs,
    output:
        verdict=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/verdict.json",
        row=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/row.json",
    log:
        check=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/check.log",
        row=f"{OUT}/proof/{{model}}/{{item}}/{{attempt}}/row.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        runtime=lambda w: PLAN.proof_runtime_min(w.item),
        mem_mb=lambda w: PLAN.proof_mem_mb(w.item),
        cpus_per_task=1,
    params:
        task_file=lambda w: PLAN.task_file(w.item),
        submission=lambda w: PLAN.candidate(w.model, w.item, w.attempt),
        sandbox=config["run"]["sandbox"],
        trusted="--allow-unsandboxed" if config["run"].get("allow_unsandboxed") else "",
        limiter=config["run"]["limiter"],
    shell:
        "{{ tcsexam proof check --task {params.task_file:q} --submission {params.submission:q}"
        " --model {wildcards.model:q} --attempt {wildcards.attempt:q} --output {output.verdict:q}"
        " --sandbox {params.sandbox} {params.trusted} --limiter {params.limiter}"
        " > {log.check:q} 2>&1 || tcsexam job-failed {log.check:q} $?; }} && "
        + PROOF_ROW
