"""CLI: `tcsexam attempts ...`, the glue commands the Snakemake workflow calls.

solver-row    score one Solver attempt's records (fixed reference) -> relative.json + its row
verdict-row   a theorem / construction / open-conjecture checker verdict -> its row
verdict-rows  every such planned attempt of one model (absent verdicts -> missing rows)
missing-row   a planned attempt without any result -> a row with score_status missing (or another)
table         row files -> attempts.csv (the spec's nine columns + note; an adoption file applied)
generation    attempts.csv + the agents' generation.json records -> generation.csv (tokens, cost, time)
ingest-online the final judge's records of one online attempt -> its records.json in the results tree
cohort        cohort.json for a run (the reference id is read from the reference file)
plots         report plots (PNG) from index.json, attempts.csv and the solver results
"""

from __future__ import annotations

import argparse

from tcsexam.cliutil import actions, command, count_text, key_value, required
from tcsexam.errors import InputError, UsageError
from tcsexam.logs import say_for
from tcsexam.scoring.vocabulary import ADOPTION_STATUSES, PROTOCOLS, UNSCORED, ScoreStatus

#: the fields naming one attempt (an attempt row's identity)
IDENTITY = ("model", "track", "item", "attempt")


def register(subparsers) -> None:
    sub = actions(
        subparsers,
        "attempts",
        "attempts_command",
        help="attempt rows, the attempt table, cohort and report plots (the workflow's glue)",
        description="Turn solver-score outputs and checker verdicts into rows of attempts.csv; "
        "every planned attempt gets a row (failed or missing results too).",
    )
    for add in (_add_row_commands, _add_table_commands, _add_report_commands):
        add(sub)


def _add_row_commands(sub) -> None:
    """solver-row, verdict-row, verdict-rows, missing-row: one attempt's (or one model's) rows."""
    p = command(sub, "solver-row", _solver_row)
    p.add_argument("--records", required=True, help="records.json of `tcsexam run`")
    required(p, "--task")
    p.add_argument("--reference", required=True, help="lite, full or a reference file")
    required(p, "--model", "--attempt")
    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--adoption-status", default="selected", choices=ADOPTION_STATUSES)
    p.add_argument(
        "--relative-output",
        required=True,
        metavar="FILE",
        help="where the solver-score output goes (removed when scoring fails)",
    )
    required(p, "--output", output="ROW.json")

    p = command(sub, "verdict-row", _verdict_row)
    required(p, "--verdict", verdict="FILE")
    for name in IDENTITY:
        p.add_argument(
            f"--{name}", help=f"expected {name}" + (" (checked against the verdict)" if name == "model" else "")
        )
    task_help = (
        "the item's proof task file (default config/tasks/<item>.yaml where it exists): a verdict whose "
        "statement_sha256 is not its statement's scores 0"
    )
    p.add_argument("--task-file", metavar="FILE", help=task_help)
    required(p, "--output", output="ROW.json")

    p = command(sub, "verdict-rows", _verdict_rows)
    required(p, "--model")
    p.add_argument("--suite", required=True, help="lite, full or a suite YAML")
    p.add_argument("--verdicts-dir", required=True, help="holds <model>/<item>/<attempt>.json")
    p.add_argument("--attempts", nargs="+", required=True, metavar="ID", help="the planned attempt ids")
    item_attempt_help = "a further attempt of one item only (e.g. an adoption file's replacement)"
    p.add_argument("--item-attempt", nargs="+", default=[], metavar="ITEM=ID", help=item_attempt_help)
    p.add_argument("--output", required=True, metavar="ROWS.json", help="a JSON list of rows")
    judged_help = "constructions the pipeline judges (their rows come from `tcsexam construction row`): left out here"
    p.add_argument("--judged", nargs="*", default=[], metavar="ITEM/ATTEMPT", help=judged_help)
    task_files_help = "an item's proof task file where it is not config/tasks/<item>.yaml (statement digest check)"
    p.add_argument("--task-file", nargs="+", default=[], metavar="ITEM=FILE", help=task_files_help)

    p = command(sub, "missing-row", _missing_row)
    required(p, *(f"--{name}" for name in IDENTITY))
    p.add_argument("--status", default="missing", choices=UNSCORED)
    p.add_argument("--protocol", default="", help="solver rows: online or offline")
    p.add_argument("--reason", required=True, help="why there is no result (goes into the note)")
    required(p, "--output", output="ROW.json")


def _add_table_commands(sub) -> None:
    """table (rows -> attempts.csv), generation (its companion generation.csv) and ingest-online
    (an online attempt's judged records)."""
    p = command(sub, "generation", _generation)
    p.add_argument("--attempts", required=True, metavar="attempts.csv", help="the attempt table")
    p.add_argument(
        "--solvers-dir",
        required=True,
        metavar="DIR",
        help="the submissions: DIR/<model>/<item>/<attempt>/generation.json is the agent's record of each attempt",
    )
    required(p, "--output", output="generation.csv")

    p = command(sub, "table", _table)
    p.add_argument("--rows", nargs="+", required=True, metavar="ROW.json")
    p.add_argument(
        "--adoption",
        metavar="FILE",
        help="adoption CSV (model,track,item,attempt,adoption_status,reason,replaces): its adoption "
        "statuses replace the rows' and the table gains the columns reason and replaces",
    )
    p.add_argument("--suite", help="with --adoption: the suite its items are checked against")
    planned_help = "with --adoption: each model and its planned attempt ids"
    p.add_argument("--planned", nargs="+", default=[], metavar="MODEL=ID[,ID...]", help=planned_help)
    required(p, "--output", output="attempts.csv")

    p = command(sub, "ingest-online", _ingest_online)
    p.add_argument("--input", required=True, metavar="records.json", help="the judged records of the attempt")
    p.add_argument("--provenance", metavar="provenance.json", help="free-form JSON: who judged, judge version, date")
    p.add_argument("--task-file", required=True, help="the task's file (its instances and kind)")
    required(p, "--model", "--attempt", "--output", output="records.json")


def _add_report_commands(sub) -> None:
    """cohort and plots: one suite/protocol evaluation's cohort.json and report figures."""
    p = command(sub, "cohort", _cohort)
    required(p, "--suite")
    p.add_argument("--protocol", required=True, choices=PROTOCOLS)
    p.add_argument("--reference", required=True, help="lite, full or a reference file")
    plans_help = "model and its planned adopted repetitions per task"
    p.add_argument("--model", nargs="+", required=True, metavar="NAME=N", help=plans_help)
    p.add_argument("--adoption-policy", default=None)
    required(p, "--output", output="cohort.json")

    p = command(sub, "plots", _plots)
    required(p, "--index", "--attempts")
    p.add_argument("--solver-dir", required=True, help="results/<suite>/<protocol>/solver")
    required(p, "--output-dir")


def _solver_row(args: argparse.Namespace) -> int:
    """score a Solver attempt's final records and write its attempt row

    Calls the fixed-reference scorer. Missing records -> not_finished; records the scorer refuses
    (infrastructure_error, missing instance, ...) -> judge_failed with the scorer's message. Exit 0 in those
    cases; exit 1 only for a broken reference or bad options."""
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
    if row.score_status == ScoreStatus.VALID:
        inputs["relative"] = args.relative_output
    write_row(args.output, row, inputs)
    shown = "" if row.score is None else f" {row.score:.6f}"
    say_for("attempts solver-row", "attempts")(
        f"{args.model},solver,{args.task},{args.attempt}: {row.score_status}{shown} ({row.note}) -> {args.output}"
    )
    return 0


def _verdict_row(args: argparse.Namespace) -> int:
    """convert a checker verdict JSON into an attempt row"""
    from tcsexam.attempts.rows import write_row
    from tcsexam.attempts.verdicts import verdict_row_file

    expect = {k: getattr(args, k) for k in IDENTITY if getattr(args, k)}
    row = verdict_row_file(args.verdict, expect, args.task_file)
    write_row(args.output, row, {"verdict": args.verdict})  # sealed with its verdict (workflow.heal checks it)
    shown = "" if row.score is None else f" {row.score:g}"
    say_for("attempts verdict-row", "attempts")(f"{','.join(row.identity)}: {row.score_status}{shown} -> {args.output}")
    return 0


def _verdict_rows(args: argparse.Namespace) -> int:
    """all theorem/construction/open-conjecture rows of one model (missing verdicts -> missing rows)"""
    from tcsexam.attempts.rows import write_rows
    from tcsexam.attempts.verdicts import model_verdict_rows
    from tcsexam.suites import load_suite

    suite = load_suite(args.suite)
    item_attempts: dict[str, list[str]] = {}
    for spec in args.item_attempt:
        item, attempt = key_value(spec, "--item-attempt", "ITEM=ID")
        if item not in suite.track_of or suite.track_of[item] == "solver":
            raise UsageError(f"--item-attempt {spec!r}: {item!r} is no theorem, construction or conjecture item")
        item_attempts.setdefault(item, []).append(attempt)
    task_files: dict[str, str] = {}
    for spec in args.task_file:
        item, path = key_value(spec, "--task-file", "ITEM=FILE")
        task_files[item] = path
    rows = model_verdict_rows(
        args.model, suite, args.verdicts_dir, args.attempts, item_attempts, frozenset(args.judged), task_files
    )
    write_rows(args.output, rows)
    say_for("attempts verdict-rows", "attempts")(
        f"{args.model}: {len(rows)} rows ({count_text(r.score_status for r in rows)}) -> {args.output}"
    )
    return 0


def _missing_row(args: argparse.Namespace) -> int:
    """the row of a planned attempt that has no result"""
    from tcsexam.attempts.rows import failed_row, write_row
    from tcsexam.suites import normalize_track

    track = normalize_track(args.track)
    if track is None:
        raise InputError(f"missing-row: unknown track {args.track!r}")
    row = failed_row(args.model, track, args.item, args.attempt, args.status, args.reason, args.protocol)
    write_row(args.output, row)
    say_for("attempts missing-row", "attempts")(
        f"{','.join(row.identity)}: {row.score_status} ({row.note}) -> {args.output}"
    )
    return 0


def _table(args: argparse.Namespace) -> int:
    """row files -> attempts.csv"""
    from tcsexam.attempts.rows import write_table

    adoption = None
    if args.adoption:
        from tcsexam.attempts.adoption import load_adoption
        from tcsexam.suites import load_suite

        if not args.suite or not args.planned:
            raise UsageError("table --adoption needs --suite and --planned MODEL=ID[,ID...]")
        planned = {}
        for spec in args.planned:
            name, ids = key_value(spec, "--planned", "MODEL=ID[,ID...]")
            planned[name] = ids.split(",")
        adoption = load_adoption(args.adoption, load_suite(args.suite), planned)
    rows = write_table(args.rows, args.output, adoption)
    say_for("attempts table", "attempts")(
        f"{len(rows)} attempt rows ({count_text(r.score_status for r in rows)}) -> {args.output}"
    )
    return 0


def _generation(args: argparse.Namespace) -> int:
    """attempts.csv + the agents' records -> generation.csv, the attempt table's cost companion

    One line per attempt row: tokens, cost (USD, when priced), wall time, feedback calls and the transcript,
    read from <solvers-dir>/<model>/<item>/<attempt>/generation.json; an attempt without one is `none` (its
    cost is missing, never 0)."""
    from tcsexam.scoring.generation import write_generation_table

    entries = write_generation_table(args.attempts, args.solvers_dir, args.output)
    say_for("attempts generation", "attempts")(
        f"{len(entries)} attempts: {sum(e.recorded for e in entries)} with a generation record, "
        f"{sum(e.cost_usd is not None for e in entries)} priced -> {args.output}"
    )
    return 0


def _ingest_online(args: argparse.Namespace) -> int:
    """check one online attempt's judged records and store them as its records.json

    The online Solver protocol: the final judge's instance records (a JSON list: instance, status, A or solved,
    any other field kept) become the attempt's records.json, each record with the task, the attempt, the input
    file's sha256 and its digest, plus online-input.json beside it (input path, sha256, provenance). Malformed
    input (bad JSON, an unknown status or instance, a duplicate, ok without a value): one line, exit 1, nothing
    written. A missing instance or an infrastructure_error is stored as is (exit 0): the scorer refuses it, so
    the attempt is incomplete."""
    from tcsexam.attempts.online import ingest_online
    from tcsexam.tasks import load_task

    task = load_task(args.task_file)
    side = ingest_online(args.input, task, args.model, args.attempt, args.output, args.provenance)
    who = f"{args.model},solver,{task.id},{args.attempt}"
    say_for("attempts ingest-online", "attempts")(
        f"{who}: {side['records']} judged record(s) from {args.input} ({side['input_sha256']}) -> {args.output}"
    )
    for name in side["infrastructure_errors"]:
        say_for("attempts ingest-online", "attempts")(
            f"WARNING: {who}: instance {name!r} has status infrastructure_error: the attempt stays incomplete"
        )
    if side["not_judged"]:
        say_for("attempts ingest-online", "attempts")(
            f"WARNING: {who}: {len(side['not_judged'])} instance(s) of the task have no judged record "
            f"(first {side['not_judged'][0]!r}): the attempt stays incomplete if the reference scores them"
        )
    return 0


def _cohort(args: argparse.Namespace) -> int:
    """write cohort.json (reference id read from the reference file)"""
    from tcsexam.attempts.cohort import build_cohort, parse_model_plans
    from tcsexam.fileio import atomic_write_json

    data = build_cohort(args.suite, args.protocol, args.reference, parse_model_plans(args.model), args.adoption_policy)
    atomic_write_json(args.output, data)
    say_for("attempts cohort", "attempts")(
        f"cohort {data['suite']}/{data['solver_protocol']} against {data['solver_reference_id']}: "
        f"{len(data['models'])} model(s) -> {args.output}"
    )
    return 0


def _plots(args: argparse.Namespace) -> int:
    """report plots (PNG) of one suite/protocol evaluation"""
    from tcsexam.attempts.plots import make_plots

    for path in make_plots(args.index, args.attempts, args.solver_dir, args.output_dir):
        say_for("attempts plots", "attempts")(str(path))
    return 0
