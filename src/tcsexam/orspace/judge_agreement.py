"""`tcsexam orspace judge-agreement`: the Explain judge measured (docs/orspace.md "The judge
measured").

Input: several explain-score summaries of the same answers, each a *judgment set* labelled on the
command line: repeats of one judge (`explain-score --judge-repeat K`) and/or other judge models
(`--judge-model`). Optionally reference judgments the project wrote (JSONL rows `workspace_id,
criterion_id, verdict`) and the answers (for their lengths). Output:

- for every two judgment sets (`kind`: `repeat` when both have the same judge model, else
  `cross_judge`): per criterion id (and pooled) the number of judged items both have, the rate of
  disagreement and Cohen's kappa of the boolean verdicts; for the scores, the mean absolute
  difference and Pearson's r; the (workspace, criterion) pairs they disagree on, for review;
- for every judgment set against the reference judgments: the same agreement figures;
- for every judgment set: the least-squares slope of the score against the answer's length (points
  per 100 words) with a percentile-bootstrap 95% interval (answers resampled).

Cohen's kappa is None when it is undefined (both sets give one and the same verdict to every item:
expected agreement 1).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.orspace.release import read_jsonl_numbered
from tcsexam.scoring.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, interval, task_rng

SCHEMA_VERSION = 1
POOLED = "all"
_WORD = re.compile(r"\S+")


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa of two raters' boolean verdicts on the same items (None when undefined)."""
    if not a:
        return None
    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    observed = float(np.mean(x == y))
    expected = float(x.mean() * y.mean() + (1 - x.mean()) * (1 - y.mean()))
    return None if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def verdicts(summary: JsonObject) -> dict[tuple[str, str], bool]:
    """{(workspace_id, criterion_id): verdict} of a summary's judged rows."""
    out = {}
    for row in summary.get("rows", []):
        for cid, judged in (row.get("criteria") or {}).items():
            if isinstance(judged, dict) and "verdict" in judged:
                out[row["workspace_id"], cid] = bool(judged["verdict"])
    return out


def scores(summary: JsonObject) -> dict[str, float]:
    return {r["workspace_id"]: float(r["score"]) for r in summary.get("rows", []) if r.get("score") is not None}


def agreement(a: dict[tuple[str, str], bool], b: dict[tuple[str, str], bool]) -> JsonObject:
    """Per criterion id and pooled: n, disagreement rate, Cohen's kappa; and the disagreements."""
    common = sorted(set(a) & set(b))
    by_criterion: dict[str, JsonObject] = {}
    for cid in sorted({c for _, c in common}) + [POOLED]:
        keys = [k for k in common if cid in (POOLED, k[1])]
        va, vb = [a[k] for k in keys], [b[k] for k in keys]
        by_criterion[cid] = {
            "n": len(keys),
            "disagreement_rate": float(np.mean([x != y for x, y in zip(va, vb, strict=True)])) if keys else None,
            "kappa": cohen_kappa(va, vb),
        }
    disagreements = [
        {"workspace_id": w, "criterion_id": c, "a": a[w, c], "b": b[w, c]} for w, c in common if a[w, c] != b[w, c]
    ]
    return {"criteria": by_criterion, "disagreements": disagreements}


def _score_agreement(a: dict[str, float], b: dict[str, float]) -> JsonObject:
    common = sorted(set(a) & set(b))
    if not common:
        return {"n": 0, "mean_abs_difference": None, "pearson_r": None}
    x, y = np.array([a[w] for w in common]), np.array([b[w] for w in common])
    r = float(np.corrcoef(x, y)[0, 1]) if len(common) > 2 and x.std() > 0 and y.std() > 0 else None
    return {"n": len(common), "mean_abs_difference": float(np.mean(np.abs(x - y))), "pearson_r": r}


def load_reference(path: Path) -> dict[tuple[str, str], bool]:
    """Reference judgments: JSONL rows `workspace_id, criterion_id, verdict` (bool)."""
    out = {}
    for line, row in read_jsonl_numbered(path, "reference judgments"):
        ok = (
            isinstance(row, dict)
            and isinstance(row.get("workspace_id"), str)
            and isinstance(row.get("criterion_id"), str)
        )
        if not ok or not isinstance(row.get("verdict"), bool):
            raise InputError(
                f"{path}: line {line}: a reference judgment needs workspace_id, criterion_id and a boolean verdict"
            )
        key = (row["workspace_id"], row["criterion_id"])
        if key in out:
            raise InputError(f"{path}: line {line}: duplicate judgment of {key[0]} {key[1]}")
        out[key] = row["verdict"]
    return out


def length_slope(score: dict[str, float], words: dict[str, int], item: str, seed: int, resamples: int) -> JsonObject:
    """Least-squares slope of score on answer length (points per 100 words), with its interval."""
    common = sorted(set(score) & set(words))
    out: JsonObject = {"n": len(common), "points_per_100_words": None, "ci95": None}
    if len(common) < 3:
        out["note"] = "needs at least 3 scored answers"
        return out
    x = np.array([words[w] / 100 for w in common], dtype=float)
    y = np.array([score[w] for w in common], dtype=float)
    if x.std() == 0:
        out["note"] = "every answer has the same length"
        return out
    out["points_per_100_words"] = float(np.polyfit(x, y, 1)[0])
    idx = task_rng(seed, item).integers(0, len(common), size=(resamples, len(common)))
    xs, ys = x[idx], y[idx]
    xm, ym = xs.mean(axis=1, keepdims=True), ys.mean(axis=1, keepdims=True)
    var = ((xs - xm) ** 2).sum(axis=1)
    ok = var > 0
    slopes = ((xs - xm) * (ys - ym)).sum(axis=1)[ok] / var[ok]
    out["ci95"] = interval(slopes)
    return out


def word_counts(answers: dict[str, str]) -> dict[str, int]:
    """{workspace_id: words of its answer}."""
    return {wid: len(_WORD.findall(answer or "")) for wid, answer in answers.items()}


def answer_words(path: Path) -> dict[str, int]:
    answers = {}
    for line, row in read_jsonl_numbered(path, "answers file"):
        if not isinstance(row, dict) or not isinstance(row.get("workspace_id"), str):
            raise InputError(f"{path}: line {line}: an answer needs a workspace_id")
        answers[row["workspace_id"]] = str(row.get("answer") or "")
    return word_counts(answers)


def judge_agreement(
    sets: dict[str, JsonObject],
    *,
    reference: dict[tuple[str, str], bool] | None = None,
    words: dict[str, int] | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> JsonObject:
    """The agreement document of labelled explain-score summaries."""
    if not sets:
        raise InputError("judge-agreement needs at least one judgment set")
    judged = {label: verdicts(s) for label, s in sets.items()}
    for label, v in judged.items():
        if not v:
            raise InputError(f"judgment set {label} has no judged criteria (scored with --no-judge?)")
    pairs = []
    for a, b in itertools.combinations(sorted(sets), 2):
        same = sets[a].get("judge_model") == sets[b].get("judge_model")
        pairs.append(
            {
                "a": a,
                "b": b,
                "kind": "repeat" if same else "cross_judge",
                **agreement(judged[a], judged[b]),
                "scores": _score_agreement(scores(sets[a]), scores(sets[b])),
            }
        )
    out: JsonObject = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": "or-space-explain",
        "sets": {
            label: {
                "judge_model": s.get("judge_model"),
                "judge_repeat": s.get("judge_repeat"),
                "penalty_cap": s.get("penalty_cap"),
                "judged_criteria": len(judged[label]),
            }
            for label, s in sorted(sets.items())
        },
        "pairs": pairs,
        "reference": None,
        "length_slope": None,
        "bootstrap": {"seed": seed, "resamples": resamples},
    }
    if reference is not None:
        out["reference"] = {label: agreement(judged[label], reference) for label in sorted(sets)}
    if words is not None:
        out["length_slope"] = {
            label: length_slope(scores(s), words, f"orspace-judge|length|{label}", seed, resamples)
            for label, s in sorted(sets.items())
        }
    review = {(d["workspace_id"], d["criterion_id"]) for p in pairs for d in p["disagreements"]}
    out["review"] = [{"workspace_id": w, "criterion_id": c} for w, c in sorted(review)]
    return out


def load_set(path: Path) -> JsonObject:
    data = read_json(path, "explain summary")
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise InputError(f"{path}: not an explain-score summary (no rows)")
    return data
