"""`tcsexam orspace explain-score`: Explain answers scored with the release's rubrics.

Per workspace:

- atomic units: every target entity of every `exact_match` criterion is one unit, decided by the
  deterministic normaliser (`normalize.py`); every `llm_boolean_judgment` criterion is one unit,
  decided by the judge's boolean verdict. coverage = satisfied units / all units.
- the judge also gives reasoning (0-35), grounding (0-20), answer_quality (0-10) and a
  hallucination penalty, applied as min(penalty, cap).
- score = clip(35 * coverage + reasoning + grounding + answer_quality - penalty, 0, 100).

The penalty cap is a versioned setting (PENALTY_SETTINGS): `paper` = 12 (the paper's protocol, the
default), `release` = 20 (the current public release); the output records the setting and the cap,
the judge model and the prompt sha256 (also in every row), and every printed mean says its cap.

Every row carries `unfaithful: true|false`: true when the judge's hallucination penalty is positive
or a number the answer cites is in no workspace artifact (`evidence.py`), with the reasons.

A workspace of the rubrics without an answer scores 0 (`answer_status: missing`). A judge failure
(no valid judgment after retries) is never a zero: the row gets `status: judge_error`, score null,
and the summary is marked incomplete (`complete: false`, `mean_score: null`).
Independently of the judge, every number the answer cites is looked up in the workspace evidence
(`evidence.py`) when the workspaces are given.

A second judge (`second_judge`) judges every given answer too: its judgment and the score it would
give are kept on the row (`second_judge`), the first judge's score is the row's, and the summary's
`judge_agreement` is `judge_agreement.judge_agreement` of the two (labels `primary` and `second`:
per criterion Cohen's kappa and disagreement rate, score agreement, the score-length slopes, and
`review`, the (workspace, criterion) pairs the judges disagree on). A second-judge failure leaves
the first judge's score standing and is named (`second_judge_errors`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject
from tcsexam.orspace.evidence import check_numbers, evidence_numbers
from tcsexam.orspace.judge import BudgetExceeded, JudgeError
from tcsexam.orspace.judge_agreement import judge_agreement, word_counts
from tcsexam.orspace.normalize import NormalizedAnswer
from tcsexam.orspace.release import find_workspace, read_jsonl_numbered

SCHEMA_VERSION = 1
PENALTY_SETTINGS = {"paper": 12.0, "release": 20.0}
DEFAULT_PENALTY_SETTING = "paper"


def penalty_cap(setting: str) -> float:
    if setting not in PENALTY_SETTINGS:
        raise InputError(f"unknown penalty setting {setting!r} (choose {', '.join(PENALTY_SETTINGS)})")
    return PENALTY_SETTINGS[setting]


def load_answers(path: str | Path, rubric_ids: set[str]) -> dict[str, str]:
    """Answers JSONL (`workspace_id`, `answer`) keyed by id; unknown or duplicate ids are errors."""
    path = Path(path)
    out: dict[str, str] = {}
    for line, row in read_jsonl_numbered(path, "answers file"):
        if not isinstance(row, dict) or not isinstance(row.get("workspace_id"), str):
            raise InputError(f"{path}: line {line}: an answer must be an object with a string workspace_id")
        wid = row["workspace_id"]
        if wid not in rubric_ids:
            raise InputError(f"{path}: line {line}: unknown workspace id {wid} (no rubric)")
        if wid in out:
            raise InputError(f"{path}: line {line}: duplicate workspace id {wid}")
        answer = row.get("answer")
        if not isinstance(answer, str):
            raise InputError(f"{path}: line {line}: {wid}: answer must be a string")
        out[wid] = answer
    return out


def exact_match_units(rubric: JsonObject, answer: NormalizedAnswer) -> list[JsonObject]:
    units = []
    for item in rubric["checklist"]:
        if item["checklist_type"] != "exact_match":
            continue
        for entity in item.get("target_entities", []):
            units.append({"criterion_id": item["criterion_id"], "entity": entity, "satisfied": answer.contains(entity)})
    return units


def semantic_items(rubric: JsonObject) -> list[JsonObject]:
    return [item for item in rubric["checklist"] if item["checklist_type"] == "llm_boolean_judgment"]


def judge_payload(rubric: JsonObject, answer: str, cap: float) -> JsonObject:
    criteria = []
    for item in semantic_items(rubric):
        entry = {"criterion_id": item["criterion_id"], "criterion": item["criterion"]}
        if item.get("instruction_for_judge"):
            entry["instruction_for_judge"] = item["instruction_for_judge"]
        criteria.append(entry)
    return {
        "question": rubric["question"],
        "expected_short_answer": rubric.get("expected_short_answer", ""),
        "criteria": criteria,
        "answer": answer,
        "penalty_cap": cap,
    }


def combine(coverage: float, judgment: JsonObject, cap: float) -> tuple[float, float]:
    """(score, applied penalty) by the formula in the module docstring."""
    penalty = min(float(judgment["hallucination_penalty"]), cap)
    raw = (
        35.0 * coverage
        + float(judgment["reasoning"])
        + float(judgment["grounding"])
        + float(judgment["answer_quality"])
        - penalty
    )
    return float(np.clip(raw, 0.0, 100.0)), penalty


def _missing_row(rubric: JsonObject) -> JsonObject:
    units = [
        u
        for item in rubric["checklist"]
        if item["checklist_type"] == "exact_match"
        for u in item.get("target_entities", [])
    ]
    return dict(
        status="scored",
        answer_status="missing",
        score=0.0,
        coverage=0.0,
        units_total=len(units) + len(semantic_items(rubric)),
        units_satisfied=0,
        exact_match=[],
        criteria={},
        reasoning=0.0,
        grounding=0.0,
        answer_quality=0.0,
        hallucination_penalty=0.0,
        unsupported_claims=[],
        evidence=None,
    )


def _judged_fields(em: list[JsonObject], sem: list[JsonObject], judgment: JsonObject, cap: float):
    verdicts = {cid: judgment["criteria"][cid] for cid in (i["criterion_id"] for i in sem)}
    total = len(em) + len(sem)
    satisfied = sum(u["satisfied"] for u in em) + sum(bool(v["verdict"]) for v in verdicts.values())
    coverage = satisfied / total if total else 0.0
    score, penalty = combine(coverage, judgment, cap)
    return dict(
        status="scored",
        score=score,
        coverage=coverage,
        units_satisfied=satisfied,
        criteria=verdicts,
        reasoning=float(judgment["reasoning"]),
        grounding=float(judgment["grounding"]),
        answer_quality=float(judgment["answer_quality"]),
        hallucination_penalty_raw=float(judgment["hallucination_penalty"]),
        hallucination_penalty=penalty,
        unsupported_claims=list(judgment["unsupported_claims"]),
    )


def unfaithful(row: JsonObject) -> tuple[bool, list[str]]:
    """(flag, reasons): the judge's hallucination penalty is positive, or a number the answer cites
    is in no workspace artifact (the evidence check's `unmatched`)."""
    reasons = []
    if (row.get("hallucination_penalty_raw") or 0) > 0:
        reasons.append("judge_penalty")
    if (row.get("evidence") or {}).get("unmatched"):
        reasons.append("unmatched_numbers")
    return bool(reasons), reasons


def _score_row(rubric, answer, judge, cap, workspaces_root, stopped: str | None) -> JsonObject:
    """The scored fields of one rubric row (the identity fields are added by the caller)."""
    wid = rubric["workspace_id"]
    if answer is None or not answer.strip():
        return _missing_row(rubric)
    sem = semantic_items(rubric)
    em = exact_match_units(rubric, NormalizedAnswer(answer))
    row: JsonObject = {"answer_status": "given", "exact_match": em, "units_total": len(em) + len(sem)}
    evidence = None
    if workspaces_root is not None:
        folder = find_workspace(workspaces_root, wid)
        if folder is None:
            raise InputError(f"{workspaces_root}: no workspace folder for {wid}")
        evidence = check_numbers(answer, evidence_numbers(folder, (rubric["question"],)))
    row["evidence"] = evidence
    not_judged = dict(score=None, coverage=None, units_satisfied=None, criteria=None)
    exact = sum(u["satisfied"] for u in em)
    if judge is None:
        return {**row, "status": "not_judged", **not_judged, "exact_match_satisfied": exact}
    if stopped is not None:
        return {**row, "status": "budget_stopped", **not_judged, "exact_match_satisfied": exact}
    try:
        judgment = judge.judge(judge_payload(rubric, answer, cap), [i["criterion_id"] for i in sem], cap)
    except BudgetExceeded:
        raise
    except JudgeError as exc:
        return {**row, "status": "judge_error", "error": str(exc), "score": None, "coverage": None}
    return {**row, **_judged_fields(em, sem, judgment, cap), "judge_usage": judge.last_usage}


def _second_judgment(
    rubric: JsonObject, answer: str | None, judge, cap: float, stopped: str | None
) -> tuple[JsonObject | None, str | None]:
    """The second judge's entry of one row (None for a missing answer) and its budget stop."""
    if answer is None or not answer.strip():
        return None, stopped
    entry: JsonObject = {"model": judge.model}
    if stopped is not None:
        return {**entry, "status": "budget_stopped", "score": None}, stopped
    sem = semantic_items(rubric)
    em = exact_match_units(rubric, NormalizedAnswer(answer))
    try:
        judgment = judge.judge(judge_payload(rubric, answer, cap), [i["criterion_id"] for i in sem], cap)
    except BudgetExceeded as exc:
        stopped = f"{rubric['workspace_id']}: {exc}"
        return {**entry, "status": "budget_stopped", "score": None}, stopped
    except JudgeError as exc:
        return {**entry, "status": "judge_error", "error": str(exc), "score": None}, stopped
    return {**entry, **_judged_fields(em, sem, judgment, cap), "judge_usage": judge.last_usage}, stopped


def score_explain(
    rubrics: dict[str, JsonObject],
    answers: dict[str, str],
    *,
    judge=None,
    second_judge=None,
    penalty_setting: str = DEFAULT_PENALTY_SETTING,
    workspaces_root: Path | None = None,
    progress=None,
) -> JsonObject:
    """Score every rubric row. `judge` is a JudgeClient or None (no judge: exact-match units and
    the evidence check only, scores null, status `not_judged`). When the judge's cost budget would
    be exceeded, judging stops: that row and the rest get `status: budget_stopped` (score null),
    every finished judgment is kept (and cached), and the summary says so (`budget_stop`).
    `second_judge` (a JudgeClient, with `judge`) judges every given answer as well (module doc)."""
    if second_judge is not None and judge is None:
        raise InputError("a second judge needs a first one")
    cap = penalty_cap(penalty_setting)
    judge_model = judge.model if judge is not None else None
    prompt_sha = judge.prompt_sha256 if judge is not None else None
    rows, stopped, second_stopped = [], None, None
    for wid in sorted(rubrics):
        rubric = {**rubrics[wid], "workspace_id": wid}
        row: JsonObject = {
            "workspace_id": wid,
            "judge_model": judge_model,
            "prompt_sha256": prompt_sha,
            "penalty_setting": penalty_setting,
            "penalty_cap": cap,
        }
        try:
            row.update(_score_row(rubric, answers.get(wid), judge, cap, workspaces_root, stopped))
        except BudgetExceeded as exc:
            stopped = f"{wid}: {exc}"
            row.update(_score_row(rubric, answers.get(wid), judge, cap, workspaces_root, stopped))
        row["unfaithful"], row["unfaithful_reasons"] = unfaithful(row)
        if second_judge is not None:
            row["second_judge"], second_stopped = _second_judgment(
                rubric, answers.get(wid), second_judge, cap, second_stopped
            )
            _mark_disagreements(row)
        rows.append(row)
        if progress:
            progress(wid)
    summary = _summary(rows, judge, penalty_setting, cap, stopped)
    if second_judge is not None:
        summary.update(_second_summary(summary, second_judge, answers, second_stopped))
    return summary


def _mark_disagreements(row: JsonObject) -> None:
    """The second entry's `disagrees_on`: the criterion ids the two judges' verdicts differ on."""
    second = row["second_judge"]
    if second is None or second.get("status") != "scored" or not isinstance(row.get("criteria"), dict):
        return
    first = row["criteria"]
    second["disagrees_on"] = sorted(
        cid
        for cid, judged in second["criteria"].items()
        if cid in first and bool(first[cid]["verdict"]) != bool(judged["verdict"])
    )


def _second_summary(summary: JsonObject, judge, answers: dict[str, str], stopped: str | None) -> JsonObject:
    """The second judge's part of the summary: its model, errors, cost, and the agreement of the
    two judgment sets as `tcsexam orspace judge-agreement` computes it."""
    rows = summary["rows"]
    entries = [(r["workspace_id"], r["second_judge"]) for r in rows if r.get("second_judge") is not None]
    second_set = {
        "judge_model": judge.model,
        "judge_repeat": judge.settings.repeat,
        "penalty_cap": summary["penalty_cap"],
        "rows": [
            {"workspace_id": wid, "criteria": e["criteria"], "score": e["score"]}
            for wid, e in entries
            if e["status"] == "scored"
        ],
    }
    out: JsonObject = {
        "second_judge_model": judge.model,
        "second_judge_errors": [wid for wid, e in entries if e["status"] == "judge_error"],
        "second_judge_budget_stop": stopped,
        "second_judge_cost": judge.cost_summary(),
        "second_judge_mean_score": None,
        "judge_agreement": None,
        "judge_disagreements": [],
    }
    judged = [r["score"] for r in second_set["rows"]]
    if judged and len(judged) == len(entries):
        missing = [r for r in rows if r.get("second_judge") is None]  # missing answers score 0 for both
        out["second_judge_mean_score"] = float(np.mean(judged + [r["score"] for r in missing]))
    try:
        doc = judge_agreement({"primary": summary, "second": second_set}, words=word_counts(answers))
    except InputError as exc:  # a set without any judged criterion: nothing to compare
        out["judge_agreement_note"] = str(exc)
        return out
    out["judge_agreement"] = doc
    out["judge_disagreements"] = doc["review"]
    return out


def _summary(rows, judge, penalty_setting: str, cap: float, stopped: str | None) -> JsonObject:
    scores = [r["score"] for r in rows]
    complete = judge is not None and all(r["status"] == "scored" for r in rows)
    errors = [r["workspace_id"] for r in rows if r["status"] == "judge_error"]
    mean = float(np.mean(scores)) if complete and scores else None
    n_unfaithful = sum(r["unfaithful"] for r in rows)
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "or-space-explain",
        "formula": "clip(35*coverage + reasoning + grounding + answer_quality - min(penalty, cap), 0, 100)",
        "penalty_setting": penalty_setting,
        "penalty_cap": cap,
        "judge_model": judge.model if judge is not None else None,
        "judge_repeat": judge.settings.repeat if judge is not None else None,
        "prompt_version": judge.prompt_version if judge is not None else None,
        "prompt_sha256": judge.prompt_sha256 if judge is not None else None,
        "n": len(rows),
        "answered": sum(r["answer_status"] == "given" for r in rows),
        "complete": complete,
        "judge_errors": errors,
        "budget_stop": stopped,
        "mean_score": mean,
        "mean_score_label": mean_label(mean, penalty_setting, cap),
        "unfaithful": n_unfaithful,
        "unfaithful_share": n_unfaithful / len(rows) if rows else None,
        "possible_hallucinations": sum(len((r.get("evidence") or {}).get("unmatched", [])) for r in rows),
        "judge_cost": judge.cost_summary() if judge is not None else None,
        "rows": rows,
    }


def mean_label(mean: float | None, setting: str, cap: float) -> str:
    """An Explain mean as it is printed everywhere: with the penalty cap it was computed under."""
    value = "n/a" if mean is None else f"{mean:.2f}"
    return f"{value} (penalty cap {cap:g}, {setting})"
