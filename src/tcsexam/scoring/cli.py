"""CLI: `tcsexam solver-score`, `tcsexam score`, `tcsexam reference build|merge|check`.

Heavy imports (numpy, scipy, pandas, jsonschema) stay inside the handlers.
"""

from __future__ import annotations

import argparse
import sys

from tcsexam.cliutil import actions, at_least, command, key_value
from tcsexam.cliutil import write_json as _write
from tcsexam.errors import UsageError
from tcsexam.logs import logger, say_for
from tcsexam.tasks import DIRECTIONS, KINDS


def register(subparsers) -> None:
    for add in (_add_solver_commands, _add_score_command, _add_reference_commands):
        add(subparsers)


def _add_solver_commands(subparsers) -> None:
    """solver-score and solver-profile: one Solver task's records against a fixed reference."""
    p = command(subparsers, "solver-score", _solver_score)
    p.add_argument("--task", required=True, help="task id as named in the reference (e.g. maxcut-mqlib)")
    p.add_argument("--records", required=True, help="the final judge's records: a JSON list of instance records")
    p.add_argument(
        "--reference",
        required=True,
        help="lite (references/lite.json), full (references/full.json) or a path to a reference file",
    )
    p.add_argument("--output", required=True, help="where to write the result JSON")
    p.add_argument(
        "--at",
        type=float,
        metavar="SECONDS",
        help="score as if the task's limit had been SECONDS: a run still going then counts its best verified "
        "certificate stamped by SECONDS (anytime traces; none: timeout); docs/scoring.md",
    )
    p.add_argument(
        "--profile", metavar="OUT.json", help="also write the relative score against time limit (solver-profile)"
    )

    p = command(subparsers, "solver-profile", _solver_profile)
    p.add_argument("--task", required=True, help="task id as named in the reference")
    p.add_argument("--run", action="append", required=True, metavar="NAME=RECORDS", help="a run's records.json")
    p.add_argument("--reference", required=True, help="lite, full or a path to a reference file")
    p.add_argument("--output", required=True, help="where to write the profile JSON")
    p.add_argument("--plot", metavar="OUT.png", help="also draw the curves and their crossings")


def _add_score_command(subparsers) -> None:
    """score: attempt table + cohort -> index.json."""
    p = command(subparsers, "score", _score)
    p.add_argument("--suite", required=True, help="lite, full (config/suites/<suite>.yaml) or a suite YAML path")
    p.add_argument("--attempts", required=True, help="attempts.csv (the spec's nine columns)")
    p.add_argument("--cohort", required=True, help="cohort.json (suite, solver_protocol, solver_reference_id, models)")
    p.add_argument("--output", required=True, help="where to write index.json")
    p.add_argument(
        "--solver-scores",
        metavar="DIR",
        help="check every adopted valid solver row against DIR/<model>/<task>/<attempt>/relative.json "
        "(same reference_id as the cohort, same task, same relative_score); their per-instance scores "
        "also let the bootstrap resample instances",
    )
    p.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=None,
        metavar="B",
        help="resamples of the seeded bootstrap behind index_ci95 and track_ci95 (default 10000; 0: no intervals)",
    )
    p.add_argument(
        "--bootstrap-seed", type=int, default=None, metavar="SEED", help="the bootstrap's seed (default 20260925)"
    )
    p.add_argument(
        "--checksums",
        metavar="FILE",
        help="also write the sha256 of the inputs and of index.json to FILE (the workflow uses it to "
        "detect an index.json that is stale or was edited)",
    )
    p.add_argument(
        "--twins",
        metavar="DIR",
        help="twin runs DIR/s<seed>/solver/<model>/<task>/<attempt>/relative.json (maps in DIR/s<seed>/tasks/<task>/): "
        "report the paired difference original - twin per model and task, and flag memorisation (docs/twins.md)",
    )
    p.add_argument(
        "--originals",
        metavar="DIR",
        help="the solver-score outputs on the original instances (default: --solver-scores); with --twins, and "
        "the folder whose scan.json files (tcsexam scan-candidate) go into index.json",
    )
    p.add_argument(
        "--generation",
        metavar="generation.csv",
        help="the attempt table's cost companion (tcsexam attempts generation): add each model's cost section "
        "(tokens, USD, time, feedback calls, cost per solved item) and the Pareto front; no score changes",
    )
    p.add_argument(
        "--twin-threshold",
        type=float,
        default=None,
        metavar="D",
        help="flag a task whose original - twin difference exceeds D with its interval above 0 (default 0.35, docs/twins.md)",
    )


def _add_reference_commands(subparsers) -> None:
    """reference build | merge | check."""
    rsub = actions(
        subparsers, "reference", "reference_command", help="build, merge or check fixed Solver reference files"
    )
    b = command(rsub, "build", _reference_build)
    b.add_argument("--task", required=True)
    b.add_argument("--kind", choices=KINDS, help="default: the task's kind from config/tasks/<task>.yaml")
    b.add_argument("--direction", choices=DIRECTIONS, help="default: the task's direction from config/tasks")
    b.add_argument("--runs", nargs="+", required=True, metavar="RECORDS", help="K >= 2 records files (JSON lists)")
    b.add_argument(
        "--id", required=True, dest="reference_id", help="the reference_id (a changed reference is a new id)"
    )
    b.add_argument("--suite", help="the suite field to write (optional)")
    b.add_argument("--relative-floor", type=float, default=0.02, help="scale floor relative to |mu| (default 0.02)")
    b.add_argument("--absolute-floor", type=float, default=1e-9, help="absolute scale floor (default 1e-9)")
    b.add_argument("--output", required=True)

    m = command(rsub, "merge", _reference_merge)
    m.add_argument("inputs", nargs="+", metavar="FILE")
    m.add_argument("--suite", help="the suite field of the merged file (default: the first input's)")
    m.add_argument("--tasks", nargs="+", metavar="TASK", help="keep only these tasks, in this order")
    m.add_argument(
        "--carry-to",
        metavar="NEW_ID",
        help="write the inputs' values unchanged under this new reference_id (metadata carried_from "
        "names the old one): a new reference version keeps the frozen values of tasks it does not rebuild",
    )
    m.add_argument("--output", required=True)

    c = command(rsub, "check", _reference_check)
    c.add_argument("file", metavar="FILE", help="lite, full or a path")
    c.add_argument("--subset-of", metavar="FULL", help="every task and value of FILE must match this file")


def _solver_score(args: argparse.Namespace) -> int:
    """fixed-reference relative score of one Solver task's final instance records

    Score a task's final instance records (JSON list) against a fixed reference. Refuses (exit 1, no output) an
    infrastructure_error or unknown status, an ok record without a finite value, a missing eligible instance or
    a duplicate instance."""
    from tcsexam.scoring.solver_score import solver_score_files

    if args.at is not None or args.profile:
        return _solver_score_anytime(args)
    result = solver_score_files(args.task, args.records, args.reference)
    _write(args.output, result)
    print(
        f"{args.task}: relative_score {result['relative_score']:.6f} over {result['n_eligible']} eligible "
        f"instances ({result['n_ok']} ok, {len(result['unscored_instances'])} unscored) "
        f"against {result['reference_id']} -> {args.output}"
    )
    if (result.get("unsat_proof") or {}).get("note"):
        print(f"{args.task}: warning: {result['unsat_proof']['note']}")
    return 0


def _solver_score_anytime(args: argparse.Namespace) -> int:
    from tcsexam.fileio import read_json
    from tcsexam.scoring.anytime_score import profile, score_at
    from tcsexam.scoring.reference import load_reference
    from tcsexam.scoring.solver_score import solver_score

    ref = load_reference(args.reference)
    records = read_json(args.records, "records file")
    if args.at is not None:
        result = score_at(args.task, records, ref, args.at, str(args.records))
    else:
        result = solver_score(args.task, records, ref, str(args.records))
    prof = profile(args.task, {str(args.records): records}, ref) if args.profile else None
    _write(args.output, result)
    if prof is not None:
        _write(args.profile, prof)
    at = f" at {args.at:g} s" if args.at is not None else ""
    print(f"{args.task}: relative_score{at} {result['relative_score']:.6f} ({result['n_ok']} ok) -> {args.output}")
    return 0


def _solver_profile(args: argparse.Namespace) -> int:
    """relative score against time limit per run (model) of one Solver task, from anytime traces

    For every limit at which a score can change, each run's relative score as if the task's limit had been that
    (solver-score --at), and where two runs' curves cross."""
    from tcsexam.fileio import read_json
    from tcsexam.scoring.anytime_score import plot_profile, profile
    from tcsexam.scoring.reference import load_reference

    runs, sources = {}, {}
    for spec in args.run:
        name, path = key_value(spec, "--run", "NAME=RECORDS")
        runs[name], sources[name] = read_json(path, "records file"), str(path)
    result = profile(args.task, runs, load_reference(args.reference), sources)
    _write(args.output, result)
    if args.plot:
        plot_profile(result, args.plot)
    for c in result["crossings"]:
        print(
            f"{args.task}: {c['models'][0]} and {c['models'][1]} cross at {c['at_s']:g} s ({c['leader_after']} ahead)"
        )
    print(f"{args.task}: profile of {len(runs)} run(s) over {len(result['limits_s'])} limits -> {args.output}")
    return 0


def _score(args: argparse.Namespace) -> int:
    """attempt table + cohort -> TCSExam Index (index.json)

    Validate an attempt table against a cohort and a suite and compute each model's track means and Index (30P +
    30S + 30C + 10O). Incomplete models get index null."""
    from tcsexam.records.integrity import seal
    from tcsexam.scoring.index import score_files
    from tcsexam.scoring.sandbox_use import add_sandbox_use
    from tcsexam.suites import load_suite

    suite = load_suite(args.suite)
    result = score_files(suite, args.attempts, args.cohort, args.solver_scores)
    _add_intervals(result, suite, args)
    add_sandbox_use(result, args.solver_scores)
    _add_memorisation_checks(result, suite, args)
    if args.generation:
        from tcsexam.scoring.cost import add_cost

        add_cost(result, suite, args.attempts, args.generation)
    _write(args.output, result)
    if args.checksums:
        inputs = {"output": args.output, "attempts": args.attempts, "cohort": args.cohort}
        if args.generation:
            inputs["generation"] = args.generation
        _write(args.checksums, seal({"index": args.output}, inputs, at=args.checksums))
    say = say_for("score", "scoring")  # log lines (time stamp, level): the rule's index.log
    for warning in result["warnings"]:
        say(f"WARNING: {warning}")
    for name, model in result["models"].items():
        index = "null" if model["index"] is None else f"{model['index']:.4f}"
        extra = f", {len(model['issues'])} issue(s)" if model["issues"] else ""
        say(f"{name}: {model['status']}, index {index}{extra}")
    if not result["solver_reference_verified"]:
        logger("scoring").warning(
            "warning: solver_reference_id %r not verified (no --solver-scores); index.json says so",
            result["solver_reference_id"],
        )
    say(f"status {result['status']} -> {args.output}")
    return 0


def _add_memorisation_checks(result, suite, args: argparse.Namespace) -> None:
    """The twins' paired differences and the candidate scans' findings (docs/twins.md)."""
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
    from tcsexam.scoring.twins import THRESHOLD, add_scan_findings, add_twin_differences

    originals = args.originals or args.solver_scores
    if args.twins and not originals:
        raise UsageError("--twins needs the original instances' scores: --solver-scores DIR or --originals DIR")
    if originals:
        add_scan_findings(result, originals)
    if args.twins:
        resamples = at_least(args.bootstrap_resamples, 0, "--bootstrap-resamples", default=DEFAULT_RESAMPLES)
        seed = at_least(args.bootstrap_seed, 0, "--bootstrap-seed", default=DEFAULT_SEED)
        threshold = THRESHOLD if args.twin_threshold is None else float(args.twin_threshold)
        add_twin_differences(result, suite, originals, args.twins, seed=seed, resamples=resamples, threshold=threshold)


def _add_intervals(result, suite, args: argparse.Namespace) -> None:
    """index_ci95 / track_ci95 beside the spec's fields (scoring/bootstrap.py)."""
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, add_confidence_intervals

    resamples = at_least(args.bootstrap_resamples, 0, "--bootstrap-resamples", default=DEFAULT_RESAMPLES)
    seed = at_least(args.bootstrap_seed, 0, "--bootstrap-seed", default=DEFAULT_SEED)
    add_confidence_intervals(result, suite, args.attempts, args.solver_scores, seed=seed, resamples=resamples)


def _reference_build(args: argparse.Namespace) -> int:
    """build a one-task reference from K repeated runs' record files

    Instances with at least two usable outcomes become eligible; the others are kept with their observed
    outcomes under unscored_reference_instances."""
    from tcsexam.fileio import read_json
    from tcsexam.scoring.reference import build_reference

    kind, direction = args.kind, args.direction
    if kind is None or direction is None:
        from tcsexam.tasks import load_task

        task = load_task(args.task)
        kind = kind or task.kind
        direction = direction or task.direction
    runs = [(path, read_json(path, "records file")) for path in args.runs]
    data = build_reference(
        args.task,
        kind,
        direction,
        runs,
        args.reference_id,
        suite=args.suite,
        floors={"relative": args.relative_floor, "absolute": args.absolute_floor},
    )
    _write(args.output, data)
    n_el = len(data["tasks"][args.task]["instances"])
    n_un = len(data["unscored_reference_instances"].get(args.task, {}))
    print(f"{args.task}: {n_el} eligible, {n_un} unscored reference instances from {len(runs)} runs -> {args.output}")
    return 0


def _reference_merge(args: argparse.Namespace) -> int:
    """combine reference files that share a reference_id (e.g. per-task files into lite.json)"""
    from tcsexam.scoring.reference import load_reference, merge_references

    refs = [load_reference(path) for path in args.inputs]
    data = merge_references(refs, suite=args.suite, tasks=args.tasks, carry_to=args.carry_to)
    _write(args.output, data)
    print(f"{data['reference_id']}: {len(data['tasks'])} task(s) -> {args.output}")
    return 0


def _reference_check(args: argparse.Namespace) -> int:
    """validate a reference file; with --subset-of, check Lite against Full"""
    from tcsexam.scoring.reference import check_subset, load_reference

    ref = load_reference(args.file)
    line = (
        f"{ref.source}: reference {ref.reference_id!r}, {len(ref.tasks)} task(s), "
        f"{ref.n_eligible} eligible and {ref.n_unscored} unscored instances: valid"
    )
    if args.subset_of:
        full = load_reference(args.subset_of)
        check_subset(ref, full)
        line += f"; every task and value matches {full.source}"
    print(line, file=sys.stdout)
    return 0
