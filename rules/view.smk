# The results explorer of the evaluation (`tcsexam view`): a static site under {OUT}/view (opens
# from file://), with the comparison when a baseline is given, and the report's leaderboard table
# and construction / proof figures, all drawn from the same files (docs/view.md).


rule view:
    input:
        index=f"{OUT}/index.json",
        attempts=f"{OUT}/attempts.csv",
        generation=f"{OUT}/generation.csv",
        manifest=f"{OUT}/manifest.json",
        records=PLAN.records_files,
        relative=PLAN.relative_files,
        compare=f"{OUT}/compare/compare.json" if BASELINE else [],
    output:
        # not a report item: a folder would force `--report x.zip`; the report's leaderboard links it
        site=directory(f"{OUT}/view"),
        leaderboard=report(
            f"{OUT}/plots/leaderboard.html",
            caption="../workflow/report/leaderboard.rst",
            category="Index",
            labels={"table": "leaderboard"},
        ),
        constructions=report(
            f"{OUT}/plots/constructions.png",
            caption="../workflow/report/constructions.rst",
            category="Construction track",
            labels={"plot": "score per construction item"},
        ),
        proofs=report(
            f"{OUT}/plots/proofs.png",
            caption="../workflow/report/proofs.rst",
            category="Theorem and open-conjecture tracks",
            labels={"plot": "proof verdicts"},
        ),
        cost=report(
            f"{OUT}/plots/cost.png",
            caption="../workflow/report/cost.rst",
            category="Index",
            labels={"plot": "Index against cost"},
        ),
    log:
        f"{OUT}/logs/view.log",
    conda:
        "../envs/tcsexam.yaml"
    threads: 1
    resources:
        **one_cpu_job(mem_mb=2048),
    params:
        run_dir=lambda w, input: os.path.dirname(input.index),
        compare=lambda w, input: f"--compare {input.compare}" if BASELINE else "",
        plots_dir=lambda w, output: os.path.dirname(output.leaderboard),
        # with an OR-Space config, whatever OR-Space results exist so far (target orspace_all)
        orspace=f"--orspace {ORSPACE_OUT}" if config.get("orspace") is not None else "",
    shell:
        "tcsexam view {params.run_dir:q} {params.compare} {params.orspace} --output {output.site:q}"
        " --report {params.plots_dir:q} > {log:q} 2>&1 || tcsexam job-failed {log:q} $?"
