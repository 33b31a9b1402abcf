"""CLI: `tcsexam attempts ...`, the glue commands the Snakemake workflow calls.

solver-row    score one Solver attempt's records (fixed reference) -> relative.json + its row
verdict-row   a theorem / construction / open-conjecture checker verdict -> its row
verdict-rows  every such planned attempt of one model (absent verdicts -> missing rows)
missing-row   a planned attempt without any result -> a row with score_status missing (or another)
table         row files -> attempts.csv (the spec's nine columns + note; an adoption file applied)
ingest-online the final judge's records of one online attempt -> its records.json in the results tree
cohort        cohort.json for a run (the reference id is read from the reference file)
plots         report plots (PNG) from index.json, attempts.csv and the solver results
ray-head      alias of `tcsexam runner ray-head` (the shared Ray head of a local run)
"""

from __future__ import annotations

import argparse

from tcsexam.errors import InputError, UsageError
from tcsexam.runner.head_cli import add_ray_head_parser
from tcsexam.scoring.vocabulary import ADOPTION_STATUSES, PROTOCOLS


def register(subparsers) -> None:
    top = subparsers.add_parser(
        "attempts",
        help="attempt rows, the attempt table, cohort and report plots (the workflow's glue)",
        description="Turn solver-score outputs and checker verdicts into rows of attempts.csv; "
        "every planned attempt gets a row (failed or missing results too).",
    )
    sub = top.add_subparsers(dest="attempts_command", metavar="ACTION", required=True)

    p = sub.add_parser(
        "solver-row",
        help="score a Solver attempt's final records and write its attempt row",
        description="Calls the fixed-reference scorer. Missing records -> not_finished; records "
        "the scorer refuses (infrastructure_error, missing instance, ...) -> judge_failed with the "
        "scorer's message. Exit 0 in those cases; exit 1 only for a broken reference or bad options.",
    )
    p.add_argument("--records", required=True, help="records.json of `tcsexam run`")
    p.add_argument("--task", required=True)
    p.add_argument("--reference", required=True, help="lite, full or a reference file")
    p.add_argument("--model", required=True)
    p.add_argument("--attempt", required=True)
    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--adoption-status", default="selected", choices=ADOPTION_STATUSES)
    p.add_argument(
        "--relative-output",
        required=True,
        metavar="FILE",
        help="where the solver-score output goes (removed when scoring fails)",
    )
    p.add_argument("--output", required=True, metavar="ROW.json")
    p.set_defaults(handler=_solver_row)

    p = sub.add_parser("verdict-row", help="convert a checker verdict JSON into an attempt row")
    p.add_argument("--verdict", required=True, metavar="FILE")
    p.add_argument("--model", help="expected model (checked against the verdict)")
    p.add_argument("--track", help="expected track")
    p.add_argument("--item", help="expected item")
    p.add_argument("--attempt", help="expected attempt")
    p.add_argument("--output", required=True, metavar="ROW.json")
    p.set_defaults(handler=_verdict_row)

    p = sub.add_parser(
        "verdict-rows",
        help="all theorem/construction/open-conjecture rows of one model (missing verdicts -> missing rows)",
    )
    p.add_argument("--model", required=True)
    p.add_argument("--suite", required=True, help="lite, full or a suite YAML")
    p.add_argument("--verdicts-dir", required=True, help="holds <model>/<item>/<attempt>.json")
    p.add_argument("--attempts", nargs="+", required=True, metavar="ID", help="the planned attempt ids")
    p.add_argument(
        "--item-attempt",
        nargs="+",
        default=[],
        metavar="ITEM=ID",
        help="a further attempt of one item only (e.g. an adoption file's replacement)",
    )
    p.add_argument("--output", required=True, metavar="ROWS.json", help="a JSON list of rows")
    p.add_argument(
        "--judged",
        nargs="*",
        default=[],
        metavar="ITEM/ATTEMPT",
        help="constructions the pipeline judges (their rows come from `tcsexam construction row`): left out here",
    )
    p.set_defaults(handler=_verdict_rows)

    p = sub.add_parser("missing-row", help="the row of a planned attempt that has no result")
    p.add_argument("--model", required=True)
    p.add_argument("--track", required=True)
    p.add_argument("--item", required=True)
    p.add_argument("--attempt", required=True)
    p.add_argument("--status", default="missing", choices=("missing", "not_finished", "judge_failed"))
    p.add_argument("--protocol", default="", help="solver rows: online or offline")
    p.add_argument("--reason", required=True, help="why there is no result (goes into the note)")
    p.add_argument("--output", required=True, metavar="ROW.json")
    p.set_defaults(handler=_missing_row)

    p = sub.add_parser("table", help="row files -> attempts.csv")
    p.add_argument("--rows", nargs="+", required=True, metavar="ROW.json")
    p.add_argument(
        "--adoption",
        metavar="FILE",
        help="adoption CSV (model,track,item,attempt,adoption_status,reason,replaces): its adoption "
        "statuses replace the rows' and the table gains the columns reason and replaces",
    )
    p.add_argument("--suite", help="with --adoption: the suite its items are checked against")
    p.add_argument(
        "--planned",
        nargs="+",
        default=[],
        metavar="MODEL=ID[,ID...]",
        help="with --adoption: each model and its planned attempt ids",
    )
    p.add_argument("--output", required=True, metavar="attempts.csv")
    p.set_defaults(handler=_table)

    p = sub.add_parser(
        "ingest-online",
        help="check one online attempt's judged records and store them as its records.json",
        description="The online Solver protocol: the final judge's instance records (a JSON list: "
        "instance, status, A or solved, any other field kept) become the attempt's records.json, "
        "each record with the task, the attempt, the input file's sha256 and its digest, plus "
        "online-input.json beside it (input path, sha256, provenance). Malformed input (bad JSON, an "
        "unknown status or instance, a duplicate, ok without a value): one line, exit 1, nothing "
        "written. A missing instance or an infrastructure_error is stored as is (exit 0): the "
        "scorer refuses it, so the attempt is incomplete.",
    )
    p.add_argument("--input", required=True, metavar="records.json", help="the judged records of the attempt")
    p.add_argument("--provenance", metavar="provenance.json", help="free-form JSON: who judged, judge version, date")
    p.add_argument("--task-file", required=True, help="the task's file (its instances and kind)")
    p.add_argument("--model", required=True)
    p.add_argument("--attempt", required=True)
    p.add_argument("--output", required=True, metavar="records.json")
    p.set_defaults(handler=_ingest_online)

    p = sub.add_parser("cohort", help="write cohort.json (reference id read from the reference file)")
    p.add_argument("--suite", required=True)
    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--reference", required=True, help="lite, full or a reference file")
    p.add_argument(
        "--model", nargs="+", required=True, metavar="NAME=N", help="model and its planned adopted repetitions per task"
    )
    p.add_argument("--adoption-policy", default=None)
    p.add_argument("--output", required=True, metavar="cohort.json")
    p.set_defaults(handler=_cohort)

    p = sub.add_parser("plots", help="report plots (PNG) of one suite/protocol evaluation")
    p.add_argument("--index", required=True)
    p.add_argument("--attempts", required=True)
    p.add_argument("--solver-dir", required=True, help="results/<suite>/<protocol>/solver")
    p.add_argument("--output-dir", required=True)
    p.set_defaults(handler=_plots)

    add_ray_head_parser(sub, help="alias of `tcsexam runner ray-head`")


def _solver_row(args: argparse.Namespace) -> int:
    from tcsexam.attempts.rows import solver_row, write_row

    row, _ = solver_row(
        model=args.model,
        task=args.task,
        attempt=args.attempt,
        protocol=args.protocol,
        records=args.records,
        reference=args.reference,
        relative_output=args.relative_output,
        adoption_status=args.adoption_status,
    )
    inputs = {"records": args.records}
    if row.score_status == "valid":
        inputs["relative"] = args.relative_output
    write_row(args.output, row, inputs)
    shown = "" if row.score is None else f" {row.score:.6f}"
    print(f"{args.model},solver,{args.task},{args.attempt}: {row.score_status}{shown} ({row.note}) -> {args.output}")
    return 0


def _verdict_row(args: argparse.Namespace) -> int:
    from tcsexam.attempts.rows import write_row
    from tcsexam.attempts.verdicts import verdict_row_file

    expect = {k: getattr(args, k) for k in ("model", "track", "item", "attempt") if getattr(args, k)}
    row = verdict_row_file(args.verdict, expect)
    write_row(args.output, row)
    shown = "" if row.score is None else f" {row.score:g}"
    print(f"{','.join(row.identity)}: {row.score_status}{shown} -> {args.output}")
    return 0


def _verdict_rows(args: argparse.Namespace) -> int:
    from collections import Counter

    from tcsexam.attempts.rows import write_rows
    from tcsexam.attempts.verdicts import model_verdict_rows
    from tcsexam.suites import load_suite

    suite = load_suite(args.suite)
    item_attempts: dict[str, list[str]] = {}
    for spec in args.item_attempt:
        item, sep, attempt = spec.partition("=")
        if not sep or not item or not attempt:
            raise UsageError(f"--item-attempt {spec!r}: expected ITEM=ID")
        if item not in suite.track_of or suite.track_of[item] == "solver":
            raise UsageError(f"--item-attempt {spec!r}: {item!r} is no theorem, construction or conjecture item")
        item_attempts.setdefault(item, []).append(attempt)
    rows = model_verdict_rows(
        args.model, suite, args.verdicts_dir, args.attempts, item_attempts, frozenset(args.judged)
    )
    write_rows(args.output, rows)
    counts = Counter(r.score_status for r in rows)
    print(
        f"{args.model}: {len(rows)} rows ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}) -> {args.output}"
    )
    return 0


def _missing_row(args: argparse.Namespace) -> int:
    from tcsexam.attempts.rows import failed_row, write_row
    from tcsexam.suites import normalize_track

    track = normalize_track(args.track)
    if track is None:
        raise InputError(f"missing-row: unknown track {args.track!r}")
    row = failed_row(args.model, track, args.item, args.attempt, args.status, args.reason, args.protocol)
    write_row(args.output, row)
    print(f"{','.join(row.identity)}: {row.score_status} ({row.note}) -> {args.output}")
    return 0


def _table(args: argparse.Namespace) -> int:
    from collections import Counter

    from tcsexam.attempts.rows import write_table

    adoption = None
    if args.adoption:
        from tcsexam.attempts.adoption import load_adoption
        from tcsexam.suites import load_suite

        if not args.suite or not args.planned:
            raise UsageError("table --adoption needs --suite and --planned MODEL=ID[,ID...]")
        planned = {}
        for spec in args.planned:
            name, sep, ids = spec.partition("=")
            if not sep or not name or not ids:
                raise UsageError(f"--planned {spec!r}: expected MODEL=ID[,ID...]")
            planned[name] = ids.split(",")
        adoption = load_adoption(args.adoption, load_suite(args.suite), planned)
    rows = write_table(args.rows, args.output, adoption)
    counts = Counter(r.score_status for r in rows)
    print(f"{len(rows)} attempt rows ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}) -> {args.output}")
    return 0


def _ingest_online(args: argparse.Namespace) -> int:
    from tcsexam.attempts.online import ingest_online
    from tcsexam.tasks import load_task

    task = load_task(args.task_file)
    side = ingest_online(args.input, task, args.model, args.attempt, args.output, args.provenance)
    who = f"{args.model},solver,{task.id},{args.attempt}"
    print(f"{who}: {side['records']} judged record(s) from {args.input} ({side['input_sha256']}) -> {args.output}")
    for name in side["infrastructure_errors"]:
        print(f"warning: {who}: instance {name!r} has status infrastructure_error: the attempt stays incomplete")
    if side["not_judged"]:
        print(
            f"warning: {who}: {len(side['not_judged'])} instance(s) of the task have no judged record "
            f"(first {side['not_judged'][0]!r}): the attempt stays incomplete if the reference scores them"
        )
    return 0


def _cohort(args: argparse.Namespace) -> int:
    from tcsexam.attempts.cohort import build_cohort, parse_model_plans
    from tcsexam.fileio import atomic_write_json

    data = build_cohort(args.suite, args.protocol, args.reference, parse_model_plans(args.model), args.adoption_policy)
    atomic_write_json(args.output, data)
    print(
        f"cohort {data['suite']}/{data['solver_protocol']} against {data['solver_reference_id']}: "
        f"{len(data['models'])} model(s) -> {args.output}"
    )
    return 0


def _plots(args: argparse.Namespace) -> int:
    from tcsexam.attempts.plots import make_plots

    for path in make_plots(args.index, args.attempts, args.solver_dir, args.output_dir):
        print(path)
    return 0
