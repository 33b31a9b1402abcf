"""`tcsexam orspace stage|execute|score-objectives|explain-score` (see docs/orspace.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from tcsexam.errors import InputError, UsageError
from tcsexam.runner.sandboxes import SANDBOX_OPTION

MODE_CHOICES = ("build", "revise", "explain")


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
    p.add_argument("--modes", nargs="+", choices=MODE_CHOICES, default=list(MODE_CHOICES))
    p.add_argument("--workspaces", nargs="+", metavar="ID", help="only these workspace ids")
    p.add_argument("--split", help="only the ids of supporting_files/splits/<SPLIT>.json")
    p.set_defaults(handler=_stage)

    p = sub.add_parser("execute", help="run Build/Revise submissions in the sandbox")
    p.add_argument("--workspaces", required=True, type=Path, help="submissions (release or staged layout)")
    p.add_argument(
        "--output-dir",
        required=True,
        type=Path,
        help="writes records/<id>.json and predictions.jsonl (records are reused on rerun)",
    )
    p.add_argument("--modes", nargs="+", choices=("build", "revise"), default=["build", "revise"])
    p.add_argument("--ids", nargs="+", metavar="ID", help="only these workspace ids")
    p.add_argument("--time-limit", type=float, default=180.0, help="wall-clock seconds per program (default 180)")
    p.add_argument("--mem-mb", type=int, default=4096, help="memory limit per program (default 4096)")
    p.add_argument("--sandbox", **SANDBOX_OPTION)
    p.add_argument("--limiter", default="auto", help="auto|light|cgroup|benchexec (default auto)")
    p.add_argument("--workers", type=int, default=1, help="programs run at once (default 1)")
    p.add_argument("--python", default=sys.executable, help="interpreter for the programs (default: this one)")
    p.set_defaults(handler=_execute)

    p = sub.add_parser("score-objectives", help="predictions + oracle -> pass@1 and failure modes")
    p.add_argument(
        "--release",
        required=True,
        type=Path,
        help="release root with evaluation/<mode>_evaluation/reference_objectives.csv",
    )
    p.add_argument("--predictions", required=True, type=Path, help="JSONL: workspace_id, status, objective")
    p.add_argument("--output", required=True, type=Path, help="summary JSON")
    p.add_argument("--modes", nargs="+", choices=("build", "revise"), default=["build", "revise"])
    p.add_argument("--workspaces", type=Path, help="workspaces (for revise types missing from the index)")
    p.set_defaults(handler=_score_objectives)

    p = sub.add_parser("explain-score", help="Explain answers + rubrics -> scores (LLM judge)")
    p.add_argument("--rubrics", required=True, type=Path, help="rubrics.jsonl")
    p.add_argument("--answers", required=True, type=Path, help="JSONL: workspace_id, answer")
    p.add_argument("--output", required=True, type=Path, help="summary JSON with one row per rubric")
    p.add_argument("--workspaces", type=Path, help="explain workspaces: enables the evidence number check")
    p.add_argument(
        "--penalty-setting",
        choices=("paper", "release"),
        default="release",
        help="hallucination penalty cap: paper=12, release=20 (default release)",
    )
    p.add_argument(
        "--no-judge", action="store_true", help="no judge: exact-match units and the evidence check only (scores null)"
    )
    p.add_argument("--judge-base-url", help="default $TCSEXAM_JUDGE_BASE_URL or $OPENAI_BASE_URL")
    p.add_argument("--judge-model", help="default $TCSEXAM_JUDGE_MODEL or $OPENAI_MODEL")
    p.add_argument("--judge-timeout", type=float, default=120.0)
    p.add_argument("--judge-attempts", type=int, default=5, help="tries per item (default 5)")
    p.add_argument("--judge-cache", type=Path, help="cache folder for judgments")
    p.set_defaults(handler=_explain_score)


def _progress(message: str) -> None:
    from tcsexam.logs import logger

    logger("orspace").info("%s", message)


def _stage(args) -> int:
    from tcsexam.orspace.stage import stage

    manifest = stage(
        args.release, args.output, modes=tuple(args.modes), workspace_ids=args.workspaces, split=args.split
    )
    excluded = sum(len(w["excluded"]) for w in manifest["workspaces"].values())
    print(
        f"staged {len(manifest['workspaces'])} workspaces to {args.output} ({excluded} evaluator-only files left out)"
    )
    return 0


def _execute(args) -> int:
    from tcsexam.orspace.execute import ExecuteSettings, execute

    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    settings = ExecuteSettings(
        time_limit_s=args.time_limit,
        mem_mb=args.mem_mb,
        sandbox=args.sandbox,
        limiter=args.limiter,
        python=args.python,
        workers=args.workers,
    )
    from tcsexam.runner.ray_job import sigterm_as_exit

    with sigterm_as_exit():  # Ray and the actors are stopped; the records written stay
        summary = execute(
            args.workspaces,
            args.output_dir,
            settings,
            modes=tuple(args.modes),
            workspace_ids=args.ids,
            progress=_progress,
        )
    aside = f"; {summary['set_aside']} damaged or outdated record(s) set aside" if summary["set_aside"] else ""
    print(
        f"executed {summary['executed']}, reused {summary['reused']} of {summary['workspaces']} workspaces{aside}; "
        f"failure modes {summary['failure_modes'] or 'none'}; predictions in {args.output_dir / 'predictions.jsonl'}"
    )
    return 0


def _score_objectives(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.orspace.objectives import load_predictions, score_objectives
    from tcsexam.orspace.release import load_release

    release = load_release(args.release, tuple(args.modes))
    predictions = load_predictions(args.predictions, set(release.oracle))
    summary = score_objectives(release, predictions, tuple(args.modes), workspaces_root=args.workspaces)
    summary["release"] = str(args.release)
    summary["predictions"] = str(args.predictions)
    atomic_write_json(args.output, summary)
    by_mode = ", ".join(f"{m} {v['passed']}/{v['n']}" for m, v in summary["by_mode"].items())
    print(
        f"pass@1 {summary['passed']}/{summary['n']} = {summary['pass_at_1']:.4f} ({by_mode})"
        if summary["n"]
        else "no oracle rows to score"
    )
    return 0


def _explain_score(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.orspace.explain import load_answers, score_explain
    from tcsexam.orspace.release import load_rubrics

    rubrics = load_rubrics(args.rubrics)
    answers = load_answers(args.answers, set(rubrics))
    judge = None
    if not args.no_judge:
        from tcsexam.orspace.judge import JudgeClient, JudgeError, JudgeSettings

        try:
            settings = JudgeSettings.from_env(
                base_url=args.judge_base_url,
                model=args.judge_model,
                timeout_s=args.judge_timeout,
                max_attempts=args.judge_attempts,
                cache_dir=args.judge_cache,
            )
        except JudgeError as exc:
            raise UsageError(f"{exc} (or pass --no-judge)") from None
        judge = JudgeClient(settings)
    if args.workspaces is not None and not args.workspaces.is_dir():
        raise InputError(f"{args.workspaces}: workspaces folder not found")
    summary = score_explain(
        rubrics, answers, judge=judge, penalty_setting=args.penalty_setting, workspaces_root=args.workspaces
    )
    atomic_write_json(args.output, summary)
    if summary["judge_errors"]:
        first = next(r for r in summary["rows"] if r["status"] == "judge_error")
        print(
            f"tcsexam orspace explain-score: {len(summary['judge_errors'])} judge error(s), first "
            f"{first['workspace_id']}: {first['error']}; rerun to retry (valid judgments are cached "
            f"with --judge-cache)",
            file=sys.stderr,
        )
        return 1
    mean = summary["mean_score"]
    print(
        f"explain: {summary['n']} items, {summary['answered']} answered, mean score "
        f"{'n/a (not judged)' if mean is None else f'{mean:.2f}'}, penalty cap {summary['penalty_cap']:g} "
        f"({summary['penalty_setting']}), {summary['possible_hallucinations']} unmatched cited numbers"
    )
    return 0
