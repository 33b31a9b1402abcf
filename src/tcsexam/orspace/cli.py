"""`tcsexam orspace stage|execute|score-objectives|explain-score|effects|audit-references|judge-agreement|
leaderboard` (docs/orspace.md)."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tcsexam.cliutil import pick
from tcsexam.errors import InputError, UsageError
from tcsexam.orspace.analysis_cli import register_analysis
from tcsexam.orspace.conditions import CONTEXTS, INTERFACES, VIEWS, Condition
from tcsexam.orspace.release import MODES, OBJECTIVE_MODES, Mode
from tcsexam.orspace.solvers import LICENSED
from tcsexam.runner.options import add_run_options, run_options

if TYPE_CHECKING:
    from tcsexam.fileio import JsonObject


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "orspace",
        help="OR-Space: stage, execute and score workspaces",
        description="OR-Space evaluation (Build/Revise execution, Explain judging).",
    )
    sub = parser.add_subparsers(dest="orspace_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("stage", help="participant workspaces from a release (evaluator-only files left out)")
    p.add_argument("--release", required=True, type=Path, help="release root (holds Workspace_OR/)")
    p.add_argument("--output", required=True, type=Path, help="new folder: <output>/<workspace_id>/")
    p.add_argument("--modes", nargs="+", type=Mode, choices=MODES, default=list(MODES))
    p.add_argument("--workspaces", nargs="+", metavar="ID", help="only these workspace ids")
    p.add_argument("--split", help="only the ids of supporting_files/splits/<SPLIT>.json")
    p.add_argument(
        "--oracle", type=Path, help="release root whose evaluation/ the leakage audit uses (default --release)"
    )
    p.add_argument(
        "--view",
        choices=VIEWS,
        default="revise-all",
        help="Revise workspaces: legacy code only, formulation only, or both (default revise-all)",
    )
    p.add_argument(
        "--interface",
        choices=INTERFACES,
        default="filesystem",
        help="flat: also write prompts/<id>.txt serialising every visible file (default filesystem)",
    )
    p.add_argument(
        "--context",
        choices=CONTEXTS,
        default="both",
        help="Build/Explain workspaces: model artifacts shown (default both)",
    )
    p.set_defaults(handler=_stage)
    _register_execute(sub)
    _register_scoring(sub)
    register_analysis(sub)


def _register_execute(sub) -> None:
    p = sub.add_parser("execute", help="run Build/Revise submissions in the sandbox")
    p.add_argument("--workspaces", required=True, type=Path, help="submissions (release or staged layout)")
    p.add_argument(
        "--output-dir",
        required=True,
        type=Path,
        help="writes records/<id>.json and predictions.jsonl (records are reused on rerun)",
    )
    p.add_argument("--modes", nargs="+", type=Mode, choices=OBJECTIVE_MODES, default=list(OBJECTIVE_MODES))
    p.add_argument("--ids", nargs="+", metavar="ID", help="only these workspace ids")
    p.add_argument("--time-limit", type=float, help="wall-clock seconds per program (default 180)")
    p.add_argument("--mem-mb", type=int, help="memory limit per program (default 4096)")
    workers_help = "programs run at once, on Ray actors when more than one (default 1)"
    add_run_options(p, pool=True, candidate=False, workers=workers_help)
    p.add_argument(
        "--python",
        default=None,
        help="interpreter for the programs (default: this one; under --sandbox docker the image's python3)",
    )
    p.add_argument(
        "--licence",
        nargs="+",
        default=[],
        metavar="SOLVER=PATH",
        help="full solver licence, mounted read-only: gurobi=gurobi.lic, copt=DIR (default: the size-limited ones)",
    )
    p.add_argument(
        "--condition",
        help="stage condition <view>_<interface>_<context> of these workspaces (checked against their manifest.json)",
    )
    p.set_defaults(handler=_execute)


def _register_scoring(sub) -> None:
    p = sub.add_parser("score-objectives", help="predictions + oracle -> pass@1 and failure modes")
    p.add_argument(
        "--release",
        required=True,
        type=Path,
        help="release root with evaluation/<mode>_evaluation/reference_objectives.csv",
    )
    p.add_argument("--predictions", required=True, type=Path, help="JSONL: workspace_id, status, objective")
    p.add_argument("--output", required=True, type=Path, help="summary JSON")
    p.add_argument("--modes", nargs="+", type=Mode, choices=OBJECTIVE_MODES, default=list(OBJECTIVE_MODES))
    p.add_argument("--workspaces", type=Path, help="workspaces (for revise types missing from the index)")
    p.add_argument(
        "--disputes", type=Path, help="build_reference_disputes.csv: also the pass rate with its items left out"
    )
    p.add_argument(
        "--audit", type=Path, help="audit-references JSON: also the pass rate accepting any evidenced answer"
    )
    p.add_argument(
        "--attribute",
        action="store_true",
        help="attribute every failed result (execution, grounding, modelling, invented_constraint, unknown); "
        "needs --workspaces (the submissions)",
    )
    p.add_argument("--records", type=Path, help="execute's records/ folder (default: records/ beside --predictions)")
    p.add_argument(
        "--attribution-judge",
        action="store_true",
        help="with --attribute: a judge model attributes what the evidence leaves unknown (endpoint as explain-score's)",
    )
    _add_judge_options(p)
    p.set_defaults(handler=_score_objectives, judge_repeat=0)

    p = sub.add_parser("explain-score", help="Explain answers + rubrics -> scores (LLM judge)")
    p.add_argument("--rubrics", required=True, type=Path, help="rubrics.jsonl")
    p.add_argument("--answers", required=True, type=Path, help="JSONL: workspace_id, answer")
    p.add_argument("--output", required=True, type=Path, help="summary JSON with one row per rubric")
    p.add_argument("--workspaces", type=Path, help="explain workspaces: enables the evidence number check")
    p.add_argument(
        "--penalty-setting",
        choices=("paper", "release"),
        default="paper",
        help="hallucination penalty cap: paper=12 (default), release=20",
    )
    p.add_argument(
        "--no-judge", action="store_true", help="no judge: exact-match units and the evidence check only (scores null)"
    )
    _add_judge_options(p)
    p.add_argument(
        "--judge-repeat",
        type=int,
        default=0,
        help="repeat index K: K > 0 asks every judgment afresh, cached apart (self-consistency, judge-agreement)",
    )
    p.add_argument(
        "--second-judge-model",
        help="also judge every answer with this model: both judgments kept per row, the first one scores, "
        "their agreement in the output (judge-agreement's figures)",
    )
    p.add_argument(
        "--second-judge-base-url",
        help="the second judge's endpoint (default the first's; API key $TCSEXAM_SECOND_JUDGE_API_KEY, else the first's)",
    )
    p.add_argument(
        "--condition",
        help="stage condition the answers were made under (checked against the workspaces' manifest.json)",
    )
    p.set_defaults(handler=_explain_score)

    p = sub.add_parser("effects", help="Pass@1, Explain means, failure modes and paired differences per condition")
    p.add_argument("--model", required=True, help="the model (workflow run) these scores belong to")
    p.add_argument(
        "--objectives", nargs="+", required=True, metavar="COND=PATH", help="objectives.json of each condition"
    )
    p.add_argument("--explain", nargs="*", default=[], metavar="COND=PATH", help="explain.json of conditions")
    p.add_argument("--output", required=True, type=Path, help="effects JSON")
    p.add_argument("--html", type=Path, help="also an HTML page (the workflow report's item)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default the project's)")
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")
    p.set_defaults(handler=_effects)


def _add_judge_options(p) -> None:
    """The judge endpoint's options (explain-score's judge, score-objectives' attribution judge)."""
    p.add_argument("--judge-base-url", help="default $TCSEXAM_JUDGE_BASE_URL or $OPENAI_BASE_URL")
    p.add_argument("--judge-model", help="default $TCSEXAM_JUDGE_MODEL or $OPENAI_MODEL")
    p.add_argument("--judge-timeout", type=float, default=120.0)
    p.add_argument("--judge-attempts", type=int, default=5, help="tries per item (default 5)")
    p.add_argument("--judge-cache", type=Path, help="cache folder for judgments")
    p.add_argument(
        "--judge-prices",
        type=Path,
        help="YAML {model: {input_per_mtok, output_per_mtok}} (USD per million tokens): cost per judgment",
    )
    p.add_argument(
        "--max-judge-cost",
        type=float,
        help="USD budget for this run's new judgments (needs --judge-prices and --judge-cache)",
    )


def _pairs(values: list[str], what: str) -> dict[str, JsonObject]:
    from tcsexam.fileio import read_json

    out: dict[str, JsonObject] = {}
    for value in values:
        slug, sep, path = value.partition("=")
        if not sep or not slug or not path:
            raise UsageError(f"--{what} {value!r}: expected CONDITION=PATH")
        if slug in out:
            raise UsageError(f"--{what}: condition {slug} given twice")
        Condition.parse(slug)
        out[slug] = read_json(Path(path), f"{what} summary")
    return out


def _effects(args) -> int:
    from tcsexam.fileio import atomic_write_json, atomic_write_text
    from tcsexam.orspace.effects import condition_effects, render_html
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

    doc = condition_effects(
        args.model,
        _pairs(args.objectives, "objectives"),
        _pairs(args.explain, "explain"),
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        resamples=DEFAULT_RESAMPLES if args.resamples is None else args.resamples,
    )
    atomic_write_json(args.output, doc)
    if args.html is not None:
        atomic_write_text(args.html, render_html(doc))
    for slug, c in doc["conditions"].items():
        modes = ", ".join(f"{m} {v['passed']}/{v['n']}" for m, v in c["modes"].items())
        ex = f"; explain {c['explain']['mean_score_label']}" if "explain" in c else ""
        print(f"{args.model} {slug}: {modes}{ex}")
    return 0


def _progress(message: str) -> None:
    from tcsexam.logs import logger

    logger("orspace").info("%s", message)


def _stage(args) -> int:
    from tcsexam.orspace.stage import stage

    condition = Condition(view=args.view, interface=args.interface, context=args.context)
    manifest = stage(
        args.release,
        args.output,
        modes=tuple(args.modes),
        workspace_ids=args.workspaces,
        split=args.split,
        condition=condition,
        oracle_root=args.oracle,
    )
    staged = manifest["workspaces"].values()
    excluded = sum(len(w["excluded"]) for w in staged)
    hidden = sum(len(w["hidden"]) for w in staged)
    coincident = sum(len(w["audit"]["coincident"]) for w in staged)
    print(
        f"staged {len(manifest['workspaces'])} workspaces to {args.output} under {condition.slug} "
        f"({excluded} evaluator-only files left out, {hidden} hidden by the condition); leakage audit: no leaks "
        f"({coincident} objective values coincide with input numbers, recorded)"
    )
    return 0


def _licences(values: list[str]) -> dict[str, str]:
    out = {}
    for value in values:
        solver, sep, path = value.partition("=")
        if not sep or solver not in LICENSED or not path:
            raise UsageError(f"--licence {value!r}: expected gurobi=PATH or copt=PATH")
        out[solver] = path
    return out


def _execute(args) -> int:
    from tcsexam.orspace.execute import DEFAULT_LIMITS, DEFAULT_RUN, ExecuteSettings, execute

    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    run = run_options(args, base=DEFAULT_RUN)
    asked = {"wall_s": args.time_limit, "mem_mb": args.mem_mb}  # an option not given: DEFAULT_LIMITS'
    limits = dataclasses.replace(DEFAULT_LIMITS, **{k: v for k, v in asked.items() if v is not None})
    given = {k: v for k, v in pick(args, "python").items() if v is not None}  # else the default
    settings = ExecuteSettings(limits=limits, run=run, **given, licences=_licences(args.licence))
    from tcsexam.cliutil import sigterm_as_exit

    with sigterm_as_exit():  # Ray and the actors are stopped; the records written stay
        options = dict(modes=tuple(args.modes), workspace_ids=args.ids, progress=_progress, condition=args.condition)
        summary = execute(args.workspaces, args.output_dir, settings, **options)
    aside = f"; {summary['set_aside']} damaged or outdated record(s) set aside" if summary["set_aside"] else ""
    print(
        f"executed {summary['executed']}, reused {summary['reused']} of {summary['workspaces']} workspaces{aside}; "
        f"failure modes {summary['failure_modes'] or 'none'}; condition {summary['condition'] or 'not staged'}; "
        f"predictions in {args.output_dir / 'predictions.jsonl'}"
    )
    return 0


def _score_objectives(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.orspace.objectives import load_predictions, score_objectives
    from tcsexam.orspace.release import load_release
    from tcsexam.orspace.scoring_views import ReferenceEvidence, add_pass_rate_views

    release = load_release(args.release, tuple(args.modes))
    evidence = ReferenceEvidence.load(args.disputes, args.audit, release) if args.disputes or args.audit else None
    predictions = load_predictions(args.predictions, set(release.oracle))
    summary = score_objectives(release, predictions, tuple(args.modes), workspaces_root=args.workspaces)
    add_pass_rate_views(summary, evidence)
    judge = None
    if args.attribution_judge:
        from tcsexam.orspace.attribution_judge import AttributionJudge

        if not args.attribute:
            raise UsageError("--attribution-judge needs --attribute")
        judge = AttributionJudge(_judge_client(args, "drop --attribution-judge"))
    if args.attribute:
        from tcsexam.orspace.attribution import attribute_rows

        if args.workspaces is None:
            raise UsageError("--attribute needs --workspaces (the submissions whose failures are attributed)")
        records = args.records or args.predictions.parent / "records"
        attribute_rows(summary, args.workspaces, records if records.is_dir() else None, evidence, judge=judge)
        if judge is not None:
            from tcsexam.orspace.attribution_judge import PROMPT_SHA256, PROMPT_VERSION

            summary["attribution_judge"].update(
                model=judge.client.model,
                prompt_version=PROMPT_VERSION,
                prompt_sha256=PROMPT_SHA256,
                cost=judge.client.cost_summary(),
            )
    summary["release"] = str(args.release)
    summary["predictions"] = str(args.predictions)
    atomic_write_json(args.output, summary)
    by_mode = ", ".join(f"{m} {v['passed']}/{v['n']}" for m, v in summary["by_mode"].items())
    table = ", ".join(f"{r['failure_mode']} {r['count']}" for r in summary["failure_table"] if r["count"])
    if summary.get("attributions"):
        table += "; attributed " + ", ".join(f"{k} {v}" for k, v in summary["attributions"].items() if v)
    print(
        f"pass@1 {summary['passed']}/{summary['n']} = {summary['pass_at_1']:.4f} ({by_mode}); {table}"
        if summary["n"]
        else "no oracle rows to score"
    )
    judged = summary.get("attribution_judge")
    if judged is not None:
        decided = ", ".join(f"{k} {v}" for k, v in judged["decided"].items() if v) or "none"
        print(f"attribution judge {judged['model']}: asked {len(judged['asked'])}, decided {decided}")
        if judged["errors"]:
            first = next(r for r in summary["rows"] if r["workspace_id"] == judged["errors"][0])
            print(
                f"tcsexam orspace score-objectives: {len(judged['errors'])} attribution judge error(s), first "
                f"{first['workspace_id']}: {first['attribution_judge']['error']}; those rows stay unknown; "
                f"rerun to retry (replies are cached with --judge-cache)",
                file=sys.stderr,
            )
            return 1
    return 0


def _judge_client(args, without: str = "--no-judge"):
    """The judge of the endpoint options; `without`: the option that does without it."""
    from tcsexam.orspace.judge import JudgeClient, JudgeError, JudgeSettings, load_prices

    if args.judge_repeat < 0:
        raise UsageError("--judge-repeat must be 0 or more")

    try:
        settings = JudgeSettings.from_env(
            base_url=args.judge_base_url,
            model=args.judge_model,
            timeout_s=args.judge_timeout,
            max_attempts=args.judge_attempts,
            cache_dir=args.judge_cache,
            repeat=args.judge_repeat,
        )
    except JudgeError as exc:
        raise UsageError(f"{exc} (or leave out the judge: {without})") from None
    if args.judge_prices is not None:
        settings.prices = load_prices(args.judge_prices, settings.model)
    if args.max_judge_cost is not None:
        if settings.prices is None:
            raise UsageError(f"--max-judge-cost needs a price for judge model {settings.model} (--judge-prices)")
        if args.judge_cache is None:
            raise UsageError("--max-judge-cost needs --judge-cache (so that a rerun continues)")
        settings.max_cost = args.max_judge_cost
    return JudgeClient(settings)


def _second_judge_client(args, first):
    """The second judge: `--second-judge-model` at `--second-judge-base-url` (default the first's
    endpoint), API key $TCSEXAM_SECOND_JUDGE_API_KEY else the first's; the other settings, the
    prices file and the budget (its own) as the first's."""
    from tcsexam.orspace.judge import JudgeClient, load_prices

    settings = dataclasses.replace(
        first.settings,
        model=args.second_judge_model,
        base_url=args.second_judge_base_url or first.settings.base_url,
        api_key=os.environ.get("TCSEXAM_SECOND_JUDGE_API_KEY") or first.settings.api_key,
        prices=None,
    )
    if args.judge_prices is not None:
        settings.prices = load_prices(args.judge_prices, settings.model)
    if settings.max_cost is not None and settings.prices is None:
        raise UsageError(f"--max-judge-cost needs a price for judge model {settings.model} (--judge-prices)")
    return JudgeClient(settings)


def _explain_score(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.orspace.explain import load_answers, score_explain
    from tcsexam.orspace.release import load_rubrics

    rubrics = load_rubrics(args.rubrics)
    answers = load_answers(args.answers, set(rubrics))
    judge = None if args.no_judge else _judge_client(args)
    second = None
    if args.second_judge_model:
        if judge is None:
            raise UsageError("--second-judge-model needs the judge (drop --no-judge)")
        second = _second_judge_client(args, judge)
    if args.workspaces is not None and not args.workspaces.is_dir():
        raise InputError(f"{args.workspaces}: workspaces folder not found")
    from tcsexam.orspace.conditions import staged_condition

    if args.workspaces is not None:
        condition = staged_condition(args.workspaces, args.condition)
    else:
        condition = Condition.parse(args.condition).slug if args.condition else None
    summary = score_explain(
        rubrics,
        answers,
        judge=judge,
        second_judge=second,
        penalty_setting=args.penalty_setting,
        workspaces_root=args.workspaces,
    )
    summary["condition"] = condition
    atomic_write_json(args.output, summary)
    cost = summary["judge_cost"] or {}
    spent = f"; judge cost {cost['total_cost']:.4f} USD" if cost.get("total_cost") is not None else ""
    if summary["budget_stop"]:
        done = sum(r["status"] == "scored" and r["answer_status"] == "given" for r in summary["rows"])
        print(
            f"tcsexam orspace explain-score: judging stopped at {summary['budget_stop']}; {done} judgments kept "
            f"(cached in {args.judge_cache}); rerun to continue",
            file=sys.stderr,
        )
        return 1
    if summary["judge_errors"]:
        first = next(r for r in summary["rows"] if r["status"] == "judge_error")
        print(
            f"tcsexam orspace explain-score: {len(summary['judge_errors'])} judge error(s), first "
            f"{first['workspace_id']}: {first['error']}; rerun to retry (valid judgments are cached "
            f"with --judge-cache)",
            file=sys.stderr,
        )
        return 1
    print(
        f"explain: {summary['n']} items, {summary['answered']} answered, mean score "
        f"{summary['mean_score_label']}{'' if summary['mean_score'] is not None else ' (not judged)'}, "
        f"{summary['unfaithful']} unfaithful, {summary['possible_hallucinations']} unmatched cited numbers{spent}"
    )
    return _second_judge_report(summary, args) if second is not None else 0


def _second_judge_report(summary, args) -> int:
    """The second judge's line (agreement, disagreements); 1 when some of its judgments failed."""
    agreement = summary["judge_agreement"]
    if agreement is None:
        print(f"second judge {summary['second_judge_model']}: no agreement ({summary.get('judge_agreement_note')})")
    else:
        pooled = agreement["pairs"][0]["criteria"]["all"]
        print(
            f"second judge {summary['second_judge_model']}: kappa {pooled['kappa']}, disagreement "
            f"{pooled['disagreement_rate']} over {pooled['n']} verdicts; "
            f"{len(summary['judge_disagreements'])} (workspace, criterion) pairs to review"
        )
    failed = summary["second_judge_errors"]
    if summary["second_judge_budget_stop"]:
        print(
            f"tcsexam orspace explain-score: second judge stopped at {summary['second_judge_budget_stop']}; "
            "rerun to continue",
            file=sys.stderr,
        )
        return 1
    if failed:
        first = next(r for r in summary["rows"] if r["workspace_id"] == failed[0])
        print(
            f"tcsexam orspace explain-score: {len(failed)} second judge error(s), first {failed[0]}: "
            f"{first['second_judge']['error']}; the first judge's scores stand; rerun to retry "
            f"(valid judgments are cached with --judge-cache)",
            file=sys.stderr,
        )
        return 1
    return 0
