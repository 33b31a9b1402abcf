"""`tcsexam orspace audit-references|judge-agreement|leaderboard` (docs/orspace.md): the OR-Space
results examined, registered under `tcsexam orspace` by `tcsexam.orspace.cli`."""

from __future__ import annotations

from pathlib import Path

from tcsexam.errors import UsageError
from tcsexam.orspace.conditions import Condition
from tcsexam.orspace.release import Mode


def register_analysis(sub) -> None:
    """audit-references, judge-agreement, leaderboard: the OR-Space results examined."""
    p = sub.add_parser("audit-references", help="re-solve Build references with the project's reference models")
    p.add_argument("--release", required=True, type=Path, help="release root (oracle and Workspace_OR/)")
    p.add_argument(
        "--models",
        required=True,
        type=Path,
        help="reference models: <DIR>/<workspace_id>/<reading>.py (references/orspace-models)",
    )
    p.add_argument("--disputes", type=Path, help="build_reference_disputes.csv (its items are always audited)")
    p.add_argument("--workspaces", type=Path, help="where the Build workspaces are (default the release)")
    p.add_argument("--output", required=True, type=Path, help="audit JSON")
    p.add_argument("--ids", nargs="+", metavar="ID", help="only these Build workspace ids")
    p.add_argument("--all", action="store_true", help="every Build item of the oracle (no_model where none)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds per model (default 300)")
    p.add_argument("--jobs", type=int, default=1, help="models run at once (default 1)")
    p.set_defaults(handler=_audit_references)

    p = sub.add_parser("judge-agreement", help="the Explain judge measured: repeats, second judge, references")
    p.add_argument(
        "--judgments",
        nargs="+",
        required=True,
        metavar="LABEL=PATH",
        help="explain-score summaries of the same answers",
    )
    p.add_argument("--reference", type=Path, help="reference judgments JSONL: workspace_id, criterion_id, verdict")
    p.add_argument("--answers", type=Path, help="the answers JSONL (for the score-length slope)")
    p.add_argument("--output", required=True, type=Path, help="agreement JSON")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default the project's)")
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")
    p.set_defaults(handler=_judge_agreement)

    p = sub.add_parser("leaderboard", help="models compared: Pass@1, Explain, interface and legacy-code effects")
    p.add_argument("--results", required=True, type=Path, help="OR-Space results: <DIR>/<run>/<condition>/*.json")
    p.add_argument("--output", required=True, type=Path, help="leaderboard JSON")
    p.add_argument("--html", type=Path, help="also an HTML page (the report's item)")
    p.add_argument("--condition", help=f"headline condition of every run (default {Condition().slug}, else its first)")
    p.add_argument("--seed", type=int, default=None, help="bootstrap seed (default the project's)")
    p.add_argument("--resamples", type=int, default=None, help="bootstrap resamples (default 10000)")
    p.set_defaults(handler=_leaderboard)


def _audit_references(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.logs import logger
    from tcsexam.orspace.audit import DEFAULT_TIME_LIMIT_S, audit_references, load_disputes
    from tcsexam.orspace.release import load_release
    from tcsexam.orspace.scoring_views import input_version

    limit = DEFAULT_TIME_LIMIT_S if args.time_limit is None else args.time_limit
    if limit <= 0 or args.jobs < 1:
        raise UsageError("--time-limit must be positive and --jobs at least 1")
    release = load_release(args.release, (Mode.BUILD,))
    disputes = load_disputes(args.disputes) if args.disputes else {}
    doc = audit_references(
        release,
        args.models,
        disputes,
        ids=args.ids,
        every_build_item=args.all,
        time_limit_s=limit,
        jobs=args.jobs,
        progress=logger("orspace").info,
        workspaces_root=args.workspaces,
    )
    doc["inputs"] = {
        "release": str(args.release),
        "oracle": input_version(args.release / "evaluation" / "build_evaluation" / "reference_objectives.csv"),
        "disputes": input_version(args.disputes) if args.disputes else None,
        "models": str(args.models),
        "workspaces": str(args.workspaces or args.release),
    }
    atomic_write_json(args.output, doc)
    counts = ", ".join(f"{k} {v}" for k, v in doc["verdicts"].items() if v)
    print(f"audited {doc['n']} Build items with {doc['models']} reference models: {counts}; written to {args.output}")
    return 0


def _judge_agreement(args) -> int:
    from tcsexam.fileio import atomic_write_json
    from tcsexam.orspace.judge_agreement import answer_words, judge_agreement, load_reference, load_set
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

    sets = {}
    for value in args.judgments:
        label, sep, path = value.partition("=")
        if not sep or not label or not path or label in sets:
            raise UsageError(f"--judgments {value!r}: expected LABEL=PATH with a label of its own")
        sets[label] = load_set(Path(path))
    doc = judge_agreement(
        sets,
        reference=load_reference(args.reference) if args.reference else None,
        words=answer_words(args.answers) if args.answers else None,
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        resamples=DEFAULT_RESAMPLES if args.resamples is None else args.resamples,
    )
    atomic_write_json(args.output, doc)
    for p in doc["pairs"]:
        pooled = p["criteria"]["all"]
        print(
            f"{p['a']} vs {p['b']} ({p['kind']}): kappa {pooled['kappa']}, disagreement {pooled['disagreement_rate']}"
        )
    for label, ref in (doc["reference"] or {}).items():
        print(f"{label} vs reference: kappa {ref['criteria']['all']['kappa']}")
    print(f"{len(doc['review'])} (workspace, criterion) pairs where judges disagree; written to {args.output}")
    return 0


def _leaderboard(args) -> int:
    from tcsexam.fileio import atomic_write_json, atomic_write_text
    from tcsexam.orspace.leaderboard import leaderboard, load_results, render_html
    from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

    doc = leaderboard(
        load_results(args.results),
        condition=args.condition,
        seed=DEFAULT_SEED if args.seed is None else args.seed,
        resamples=DEFAULT_RESAMPLES if args.resamples is None else args.resamples,
    )
    atomic_write_json(args.output, doc)
    if args.html is not None:
        atomic_write_text(args.html, render_html(doc))
    for r in doc["runs"]:
        modes = ", ".join(f"{m} {v['passed']}/{v['n']}" for m, v in r["modes"].items())
        ex = r["explain"]
        explain = f"; explain {ex['mean_score']:.2f}" if ex and ex["mean_score"] is not None else ""
        print(f"{r['run']} {r['condition']}: {modes}{explain}")
    c = doc["explain_vs_build_revise"]
    print(f"explain vs build/revise across {c['n_runs']} runs: r = {c['r'] if c['r'] is not None else 'n/a'}")
    return 0
