# Compare this evaluation with another run (`snakemake compare --config baseline=DIR`): the inputs
# that differ, the deltas with paired bootstrap intervals and the verdict (docs/reproduce.md).
# The rule succeeds whatever the verdict (it is in compare.json); `tcsexam compare` itself exits
# 3 (differs) or 4 (incomparable).

BASELINE = PLAN.baseline
COMPARE_FILES = PLAN.compare_files


rule compare:
    input:
        PLAN.compare_target,


rule compare_runs:
    input:
        index=f"{OUT}/index.json",
        manifest=f"{OUT}/manifest.json",
        baseline_index=f"{BASELINE}/index.json" if BASELINE else [],
    output:
        json=f"{OUT}/compare/compare.json",
        html=report(
            f"{OUT}/compare/compare.html",
            caption="../workflow/report/compare.rst",
            category="Comparison",
            labels={"page": "deltas and verdict"},
        ),
        plot=report(
            f"{OUT}/compare/deltas.png",
            caption="../workflow/report/compare.rst",
            category="Comparison",
            labels={"page": "Index and track deltas"},
        ),
    log:
        f"{OUT}/logs/compare.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(mem_mb=2048),
    params:
        baseline=BASELINE,
        run_dir=lambda w, input: os.path.dirname(input.index),
        resamples=config["bootstrap"]["resamples"],
        seed=config["bootstrap"]["seed"],
    shell:
        "tcsexam compare {params.baseline:q} {params.run_dir:q} --output {output.json:q} --report {output.html:q}"
        " --plot {output.plot:q} --resamples {params.resamples} --seed {params.seed} --exit-zero"
        " > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
