# tcsexam: the bundled evaluation workflow. Wiring only: every rule calls the `tcsexam` CLI.
#   snakemake --cores all                                  bundled default -> results/lite/offline/index.json
#   snakemake --profile workflow/profiles/slurm            the same on a SLURM cluster
#   snakemake --cores all --rerun-incomplete               resume after an interruption
#   snakemake --cores all reference                        (explicit) rebuild the bundled references
#   snakemake --report results/report.html                 HTML report with the plots (and the explorer)
#   snakemake compare --config baseline=DIR                compare with another run (docs/reproduce.md)
# See docs/workflow.md.

from snakemake.utils import min_version, validate

from tcsexam.workflow.batching import ENV as BATCHED_ENV
from tcsexam.workflow.configfix import coerce_config

# the rules need 9.17: `priority:` given a callable (longest jobs first) is new in it
min_version("9.17")


configfile: "config/config.yaml"


# `--config run={threads: 2}`: the nested override's strings become the schema's numbers
coerce_config(config, workflow.source_path("workflow/schemas/config.schema.yaml"))
validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "rules/common.smk"
include: "rules/solver.smk"
include: "rules/tracks.smk"
include: "rules/construction.smk"
include: "rules/proof.smk"


# config batch.enabled (auto: on when the jobs go to a cluster, off for a local run): few, long
# cluster jobs. The main process's decision reaches the Snakemake inside each job in the
# environment (tcsexam.workflow.batching.decide; declared for executors that pass only these).
envvars:
    BATCHED_ENV,


if BATCHES.enabled:

    include: "rules/batch.smk"


include: "rules/index.smk"
include: "rules/reference.smk"
include: "rules/agents.smk"  # before orspace.smk: it adds the agents' OR-Space runs
include: "rules/orspace.smk"
include: "rules/compare.smk"
include: "rules/view.smk"
include: "rules/twins.smk"


# Sub-second bookkeeping jobs run on the submitting host instead of waiting in a cluster queue, and
# so do the jobs that need the network (the OR-Space LLM judge: compute nodes often cannot reach an
# API); only the Solver, construction, reference and OR-Space execute runs go to the executor (SLURM). The
# reference merges and the instance generation are local too (`localrule: True` in their rules).
localrules:
    all,
    reference,
    attempts_cohort,
    attempts_verdict_rows,
    attempts_missing_row,
    attempts_solver_row,
    construction_row,
    attempts_table,
    attempts_generation,
    score,
    attempts_plots,
    reference_build,
    manifest,
    compare,
    compare_runs,
    view,
    reference_carry,
    scan_candidate,
    twins_make,
    twins_reference,
    twins_solver_row,
    orspace_all,
    orspace_score_objectives,
    orspace_explain_score,


rule all:
    default_target: True
    input:
        index=f"{OUT}/index.json",
        plots=PLOT_FILES,
        manifest=f"{OUT}/manifest.json",
        compare=COMPARE_FILES if BASELINE else [],
        view=f"{OUT}/view",
        leaderboard=f"{OUT}/plots/leaderboard.html",
