"""Attempt table + cohort -> the TCSExam Index (the spec's "Attempt table" and "Recalculate an
Index" sections).

Averaging order: the adopted attempts of a task -> task mean; the task means of a track, equally
weighted -> track mean; Index = 30 P + 30 S + 30 C + 10 O. A model whose planned tasks or
repetitions are not all present and valid is `incomplete` with `index: null`; an otherwise complete
model with adopted `selected_provisional` attempts is `provisional`.

The table is validated as a whole before anything is computed: any rejected row raises
`InputError` naming the row (its data-row number and identity) and no output is written.
Everything runs on integer codes (pandas factorize + numpy bincount), no per-row Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_csv, read_json
from tcsexam.layout import ResultsLayout
from tcsexam.records.integrity import require_sound
from tcsexam.schemas import check
from tcsexam.scoring.campaign import adoption_report, issue_detail, records_source_problem
from tcsexam.scoring.proof_issues import statement_mismatches, unverified_proofs
from tcsexam.scoring.vocabulary import ADOPTION_STATUSES, COLUMNS, PROTOCOLS, SCORE_STATUSES, SCORE_TYPES
from tcsexam.suites import BINARY_TRACKS, TRACKS, WEIGHTS, Suite, normalize_track

METRIC_ID = "tcsexam-index-original-30303010-v0.1"
OUTPUT_SCHEMA_VERSION = 1
_STATUS_RANK = {"complete": 0, "provisional": 1, "incomplete": 2}


@dataclass(frozen=True)
class Cohort:
    """What was planned before aggregation: suite, Solver protocol and reference, and per model
    the adopted repetitions per task (`attempts_per_task`, with optional per-task overrides)."""

    suite: str
    solver_protocol: str
    solver_reference_id: str
    models: dict[str, JsonObject]
    source: str = "<cohort>"
    adoption_policy: str | None = None


def _distinct_models(data: Json) -> Json:
    """The cohort with one model per distinct model entry (the first model holding it): large
    cohorts repeat the same plan, and validating each entry once keeps this fast while an error
    still names the first model whose entry is wrong."""
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or len(models) < 2:
        return data
    seen: dict[str, str] = {}
    for name, spec in models.items():
        key = json.dumps(spec, sort_keys=True)
        seen.setdefault(key, name)
    if "" in models:  # keep the empty name so propertyNames reports it
        seen.setdefault("\0", "")
    kept = set(seen.values())
    return {**data, "models": {name: spec for name, spec in models.items() if name in kept}}


def cohort_from_dict(data: Json, suite: Suite, source: str = "<cohort>") -> Cohort:
    check(_distinct_models(data), "cohort", source)
    if data["suite"] != suite.id:
        raise InputError(f"{source}: suite {data['suite']!r} does not match the suite being scored ({suite.id!r})")
    for model, spec in data["models"].items():
        for item in spec.get("tasks", {}):
            if item not in suite.track_of:
                raise InputError(f"{source}: models/{model}/tasks: task {item!r} is not in suite {suite.id!r}")
    return Cohort(
        data["suite"],
        data["solver_protocol"],
        data["solver_reference_id"],
        data["models"],
        source,
        data.get("adoption_policy"),
    )


def load_cohort(path: str | Path, suite: Suite) -> Cohort:
    return cohort_from_dict(read_json(path, "cohort file"), suite, str(path))


# ---------------------------------------------------------------------------------------------
# reading the attempt table


def read_attempts(path: str | Path):
    """The attempt table as a DataFrame of strings (empty cells stay ""); checks the column set.

    Columns: exactly the spec's nine, in any order; extra columns (e.g. a `note` on why a
    replacement was adopted) are kept and ignored. Missing trailing cells read as empty.
    """
    import pandas as pd

    path = Path(path)
    header, body = read_csv(path, "attempt table")
    if not header:
        raise InputError(f"{path}: attempt table is empty (expected the header {','.join(COLUMNS)})")
    # a row with more cells than the header would shift pandas' columns (the first cell becomes
    # an index): refuse it naming the row and its identity
    ident = [header.index(c) if c in header else None for c in ("model", "track", "item", "attempt")]
    for number, cells in enumerate(body, start=1):
        if len(cells) > len(header):
            who = ",".join(cells[k] if k is not None and k < len(cells) else "?" for k in ident)
            raise InputError(
                f"{path}: row {number} ({who}): {len(cells)} cells but the header has {len(header)} columns "
                "(a cell too many: a stray comma?)"
            )
    seen = set()
    for name in header:
        if name in seen:
            raise InputError(f"{path}: column {name!r} appears twice in the header")
        seen.add(name)
    missing = [c for c in COLUMNS if c not in seen]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (expected {','.join(COLUMNS)})")
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig", index_col=False)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: malformed CSV: {' '.join(str(exc).split())}") from None
    return df


# ---------------------------------------------------------------------------------------------
# the Index


@dataclass
class _Table:
    """The attempt table as integer codes (one entry per row)."""

    where: Callable[[int], str]  #: row index -> "FILE: row N (model,track,item,attempt)"
    col: dict[str, np.ndarray]  #: the raw cells per column
    model: np.ndarray
    item: np.ndarray
    track: np.ndarray
    adoption: np.ndarray  #: index into ADOPTION_STATUSES
    status: np.ndarray  #: index into SCORE_STATUSES
    score_type: np.ndarray  #: index into SCORE_TYPES
    protocol: np.ndarray  #: index into PROTOCOLS, -1 for an empty cell
    score: np.ndarray  #: float64, NaN for an empty cell
    attempt_code: np.ndarray
    n_attempt_ids: int


def _codes(values: np.ndarray, lookup: Callable[[str], int | None], where: Callable[[int], str], describe: str):
    """Map a string column to integer codes via `lookup` (None: not allowed); raise on the first
    row holding a value that is not allowed. Only the distinct values are looked up."""
    import pandas as pd

    codes, uniques = pd.factorize(values, sort=False)
    mapped = [lookup(u) for u in uniques]
    if None in mapped:
        bad = mapped.index(None)
        first = int(np.flatnonzero(codes == bad)[0])
        raise InputError(f"{where(first)}: {describe.format(value=uniques[bad])}")
    return np.array(mapped, dtype=np.int64)[codes] if mapped else np.zeros(0, dtype=np.int64)


def _track_code(name: str) -> int | None:
    track = normalize_track(name)
    return None if track is None else TRACKS.index(track)


def _encode(df, suite: Suite, cohort: Cohort, source: str) -> _Table:
    import pandas as pd

    col = {c: df[c].to_numpy(dtype=object) for c in COLUMNS}
    if "note" in df.columns:  # why a row failed (its instance), for the issues
        col["note"] = df["note"].to_numpy(dtype=object)
    ident_cols = [col[c] for c in ("model", "track", "item", "attempt")]

    def where(i: int) -> str:
        return f"{source}: row {i + 1} ({','.join(str(c[i]) for c in ident_cols)})"

    def allowed(values) -> Callable[[str], int | None]:
        return {v: i for i, v in enumerate(values)}.get

    track = _codes(col["track"], _track_code, where, f"unknown track {{value!r}} (tracks: {', '.join(TRACKS)})")
    model = _codes(
        col["model"], allowed(cohort.models), where, f"model {{value!r}} is not in the cohort {cohort.source}"
    )
    item = _codes(col["item"], allowed(suite.items), where, f"task {{value!r}} is not in suite {suite.id!r}")
    item_track = np.array([TRACKS.index(suite.track_of[it]) for it in suite.items], dtype=np.int64)
    wrong = np.flatnonzero(item_track[item] != track)
    if wrong.size:
        i = int(wrong[0])
        raise InputError(
            f"{where(i)}: task {col['item'][i]!r} is a {suite.track_of[col['item'][i]]} task of suite "
            f"{suite.id!r}, not {TRACKS[track[i]]}"
        )
    adoption = _codes(
        col["adoption_status"],
        allowed(ADOPTION_STATUSES),
        where,
        f"adoption_status {{value!r}} is not one of {', '.join(ADOPTION_STATUSES)}",
    )
    status = _codes(
        col["score_status"],
        allowed(SCORE_STATUSES),
        where,
        f"score_status {{value!r}} is not one of {', '.join(SCORE_STATUSES)}",
    )
    score_type = _codes(
        col["score_type"], allowed(SCORE_TYPES), where, f"score_type {{value!r}} is not one of {', '.join(SCORE_TYPES)}"
    )
    protocol = _codes(
        col["solver_protocol"],
        {"online": 0, "offline": 1, "": -1}.get,
        where,
        "solver_protocol {value!r} is not online, offline or empty",
    )
    attempt_code, attempt_uniques = pd.factorize(col["attempt"], sort=False)
    empty_attempt = [j for j, a in enumerate(attempt_uniques) if not str(a).strip()]
    if empty_attempt:
        i = int(np.flatnonzero(attempt_code == empty_attempt[0])[0])
        raise InputError(f"{where(i)}: attempt is empty; it must identify the attempt within (model, track, item)")
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=np.float64)
    nan = np.isnan(score)
    if nan.any():
        bad = np.flatnonzero(nan & (col["score"] != ""))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{where(i)}: score {col['score'][i]!r} is not a number")
    infinite = np.flatnonzero(np.isinf(score))
    if infinite.size:
        i = int(infinite[0])
        raise InputError(f"{where(i)}: score {col['score'][i]!r} is not finite")
    return _Table(
        where,
        col,
        model,
        item,
        track,
        adoption,
        status,
        score_type,
        protocol,
        score,
        attempt_code,
        len(attempt_uniques),
    )


def _validate(t: _Table, suite: Suite, cohort: Cohort, planned: np.ndarray) -> None:
    where, col = t.where, t.col
    solver = TRACKS.index("solver")
    is_solver = t.track == solver
    adopted = t.adoption < 2
    valid = t.status == 0

    def first(mask: np.ndarray) -> int | None:
        hits = np.flatnonzero(mask)
        return int(hits[0]) if hits.size else None

    if (i := first(valid & np.isnan(t.score))) is not None:
        raise InputError(f"{where(i)}: score_status is valid but the score is empty")
    if (i := first(is_solver & (t.score_type != 0))) is not None:
        raise InputError(
            f"{where(i)}: a solver row needs score_type fixed_reference_relative, not {col['score_type'][i]!r}"
        )
    if (i := first(~is_solver & (t.score_type != 1))) is not None:
        raise InputError(
            f"{where(i)}: a {TRACKS[t.track[i]]} row needs score_type original_task_score "
            f"(fixed_reference_relative is for solver rows only)"
        )
    if (i := first(is_solver & (t.protocol < 0))) is not None:
        raise InputError(f"{where(i)}: a solver row must declare solver_protocol online or offline")
    cohort_protocol = PROTOCOLS.index(cohort.solver_protocol)
    if (i := first(is_solver & adopted & (t.protocol != cohort_protocol))) is not None:
        raise InputError(
            f"{where(i)}: adopted solver row has solver_protocol {col['solver_protocol'][i]!r} but the cohort "
            f"declares {cohort.solver_protocol!r}"
        )
    s = t.score
    binary = np.isin(t.track, [TRACKS.index(name) for name in BINARY_TRACKS])
    if (i := first(valid & binary & (s != 0) & (s != 1))) is not None:
        raise InputError(
            f"{where(i)}: {TRACKS[t.track[i]]} scores must be 0 or 1 (complete accepted proof or not), "
            f"not {col['score'][i]!r}"
        )
    if (i := first(valid & (t.track == TRACKS.index("construction")) & (s < 0))) is not None:
        raise InputError(f"{where(i)}: construction scores must be non-negative, not {col['score'][i]!r}")
    if (i := first(valid & is_solver & ((s < 0) | (s > 1)))) is not None:
        raise InputError(f"{where(i)}: solver relative scores lie in [0, 1], not {col['score'][i]!r}")

    # duplicate identities (model, item, attempt); the item fixes the track
    n_items = len(suite.items)
    n_att = t.n_attempt_ids
    key = (t.model * n_items + t.item) * n_att + t.attempt_code
    if key.size:
        order = np.argsort(key, kind="stable")
        later = order[1:][key[order][1:] == key[order][:-1]]
        if later.size:
            b = int(later.min())  # the first row, in file order, that repeats an earlier identity
            a = int(np.flatnonzero(key == key[b])[0])
            raise InputError(f"{where(b)}: duplicate attempt identity (model, track, item, attempt), also row {a + 1}")

    # more adopted attempts than planned
    group = t.model * n_items + t.item
    counts = np.bincount(group[adopted], minlength=len(cohort.models) * n_items)
    over = np.flatnonzero(counts > planned.ravel())
    if over.size:
        g = int(over[0])
        m, it = divmod(g, n_items)
        rows = np.flatnonzero(adopted & (group == g))
        model_name = list(cohort.models)[m]
        raise InputError(
            f"{where(int(rows[planned.ravel()[g]]))}: model {model_name!r} task {suite.items[it]!r} has "
            f"{counts[g]} adopted attempts but {planned.ravel()[g]} are planned (rows "
            f"{', '.join(str(r + 1) for r in rows[:6])}{', ...' if rows.size > 6 else ''}); "
            "mark replaced attempts excluded"
        )


def _planned(cohort: Cohort, suite: Suite) -> np.ndarray:
    """Planned adopted repetitions, shape (models, items)."""
    out = np.empty((len(cohort.models), len(suite.items)), dtype=np.int64)
    for m, (_name, spec) in enumerate(cohort.models.items()):
        out[m, :] = spec["attempts_per_task"]
        for item, k in spec.get("tasks", {}).items():
            out[m, suite.items.index(item)] = k
    return out


def _check_solver_scores(t: _Table, cohort: Cohort, directory: Path) -> None:
    """Each adopted, valid solver row must come from DIR/<model>/<item>/<attempt>/relative.json
    with the cohort's reference_id, the row's task and exactly the row's score."""
    where, col = t.where, t.col
    rows = np.flatnonzero((t.track == TRACKS.index("solver")) & (t.adoption < 2) & (t.status == 0))
    for i in rows.tolist():
        parts = [str(col[c][i]) for c in ("model", "item", "attempt")]
        if any(p in (".", "..") or "/" in p or "\\" in p for p in parts):
            raise InputError(
                f"{where(i)}: cannot map this row to a solver-score file (a name contains a path separator or is . or ..)"
            )
        path = ResultsLayout(directory.parent).relative_json(*parts)  # directory: <run>/solver
        if not path.is_file():
            raise InputError(f"{where(i)}: no solver-score output at {path}")
        data = read_json(path, "solver-score output")
        if not isinstance(data, dict):
            raise InputError(f"{path}: a solver-score output must be a JSON object")
        require_sound(data, f"{where(i)}: {path}", at=path)
        if data.get("reference_id") != cohort.solver_reference_id:
            raise InputError(
                f"{where(i)}: {path} was scored against reference {data.get('reference_id')!r}, but the cohort "
                f"declares {cohort.solver_reference_id!r}"
            )
        if data.get("task") != parts[1]:
            raise InputError(f"{where(i)}: {path} is for task {data.get('task')!r}, not {parts[1]!r}")
        if (problem := records_source_problem(data, cohort.solver_protocol)) is not None:
            raise InputError(f"{where(i)}: {path} {problem}")
        value = data.get("relative_score")
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None  # JSON: exact types
        if number is None or not math.isfinite(number) or float(number) != float(col["score"][i]):
            raise InputError(f"{where(i)}: score {col['score'][i]} differs from relative_score {value!r} in {path}")


def compute_index(
    df, suite: Suite, cohort: Cohort, *, source: str = "attempts", solver_scores: Path | None = None
) -> JsonObject:
    """Validate the attempt table and compute the Index for every model of the cohort."""
    t = _encode(df, suite, cohort, source)
    planned = _planned(cohort, suite)
    _validate(t, suite, cohort, planned)
    adoption = adoption_report(df, t, suite, cohort, t.where)
    if solver_scores is not None:
        _check_solver_scores(t, cohort, Path(solver_scores))

    n_models, n_items = len(cohort.models), len(suite.items)
    size = n_models * n_items
    group = t.model * n_items + t.item
    adopted = t.adoption < 2
    use = adopted & (t.status == 0)
    # deterministic sums: rows of a group are summed in ascending score order, so any row order of
    # the table gives bit-identical task means
    g_use, s_use = group[use], t.score[use]
    order = np.lexsort((s_use, g_use))
    g_use, s_use = g_use[order], s_use[order]
    n_valid = np.bincount(g_use, minlength=size).reshape(n_models, n_items)
    sums = np.bincount(g_use, weights=s_use, minlength=size).reshape(n_models, n_items)
    n_adopted = np.bincount(group[adopted], minlength=size).reshape(n_models, n_items)
    n_excluded = np.bincount(t.model[~adopted], minlength=n_models)
    n_provisional = np.bincount(t.model[use & (t.adoption == 1)], minlength=n_models)
    complete = n_valid == planned
    with np.errstate(invalid="ignore", divide="ignore"):
        task_mean = np.where(complete, sums / np.maximum(n_valid, 1), np.nan)

    item_track = np.array([TRACKS.index(suite.track_of[it]) for it in suite.items], dtype=np.int64)
    # per model and track (columns in TRACKS order): mean of the task means (NaN while a task is
    # incomplete), complete tasks, valid and planned attempts
    track_mean = np.empty((n_models, len(TRACKS)))
    per_track = np.empty((n_models, len(TRACKS), 3), dtype=np.int64)
    n_tasks = []
    for k in range(len(TRACKS)):
        cols = np.flatnonzero(item_track == k)
        n_tasks.append(len(cols))
        track_mean[:, k] = task_mean[:, cols].sum(axis=1) / len(cols)
        per_track[:, k, 0] = complete[:, cols].sum(axis=1)
        per_track[:, k, 1] = n_valid[:, cols].sum(axis=1)
        per_track[:, k, 2] = planned[:, cols].sum(axis=1)
    model_complete = complete.all(axis=1).tolist()
    n_adopted_model = n_adopted.sum(axis=1).tolist()
    n_provisional = n_provisional.tolist()
    n_excluded = n_excluded.tolist()
    issues = _issues(t, suite, cohort, planned, n_adopted, complete)

    models_out: JsonObject = {}
    worst = "complete"
    w = [WEIGHTS[tr] for tr in TRACKS]
    items = suite.items
    for m, (name, tmeans, tasks, counts) in enumerate(
        zip(cohort.models, track_mean.tolist(), task_mean.tolist(), per_track.tolist())
    ):
        if model_complete[m]:
            # the weighted track means summed left to right in TRACKS order: the spec's 30P + 30S + 30C
            # + 10O, one term per track (a track added to Track and WEIGHTS joins it)
            index = w[0] * tmeans[0]
            for weight, mean in zip(w[1:], tmeans[1:], strict=True):
                index += weight * mean
            status = "provisional" if n_provisional[m] else "complete"
        else:
            index = None
            status = "incomplete"
        if _STATUS_RANK[status] > _STATUS_RANK[worst]:
            worst = status
        models_out[name] = {
            "status": status,
            "index": index,
            "track_means": {tr: (None if v != v else v) for tr, v in zip(TRACKS, tmeans)},
            "coverage": {
                tr: {
                    "tasks_complete": cnt[0],
                    "tasks_planned": nt,
                    "attempts_valid": cnt[1],
                    "attempts_planned": cnt[2],
                }
                for tr, nt, cnt in zip(TRACKS, n_tasks, counts)
            },
            "issues": issues.get(m, []),
            "task_means": {it: (None if v != v else v) for it, v in zip(items, tasks)},
            "attempts": {"adopted": n_adopted_model[m], "provisional": n_provisional[m], "excluded": n_excluded[m]},
        }
        if adoption is not None:  # excluded attempts with their reasons, replacements
            models_out[name].update(adoption[m])
    return {
        "schema_version": OUTPUT_SCHEMA_VERSION,
        "metric_id": METRIC_ID,
        "suite": suite.id,
        "solver_protocol": cohort.solver_protocol,
        "solver_reference_id": cohort.solver_reference_id,
        "weights": dict(WEIGHTS),
        "status": worst,
        "models": models_out,
    }


def _issues(t: _Table, suite: Suite, cohort: Cohort, planned, n_adopted, complete) -> dict[int, list]:
    """Per model: each adopted attempt whose score_status is not valid, and each planned
    repetition without an adopted attempt."""
    out: dict[int, list] = {}
    if complete.all():
        return out
    col = t.col
    names = list(cohort.models)
    failed = np.flatnonzero((t.adoption < 2) & (t.status != 0))
    for i in failed.tolist():
        m, it = int(t.model[i]), int(t.item[i])
        state = SCORE_STATUSES[t.status[i]]
        issue = {
            "model": names[m],
            "track": TRACKS[t.track[i]],
            "item": suite.items[it],
            "attempt": str(col["attempt"][i]),
            "reason": state,
            "message": f"adopted attempt has score_status {state} (row {i + 1}); repair or rerun it",
        }
        if "note" in col:
            issue.update(issue_detail(str(col["note"][i])))
        out.setdefault(m, []).append(issue)
    short = np.argwhere(n_adopted < planned)
    for m, it in short.tolist():
        have, want = int(n_adopted[m, it]), int(planned[m, it])
        for rep in range(have + 1, want + 1):
            out.setdefault(m, []).append(
                {
                    "model": names[m],
                    "track": suite.track_of[suite.items[it]],
                    "item": suite.items[it],
                    "attempt": None,
                    "reason": "missing",
                    "message": f"planned repetition {rep} of {want} has no adopted attempt row",
                }
            )
    for m in out:
        out[m].sort(
            key=lambda r: (
                TRACKS.index(r["track"]),
                suite.items.index(r["item"]),
                r["attempt"] is None,
                r["attempt"] or "",
            )
        )
    return out


def score_files(
    suite: Suite, attempts_path: str | Path, cohort_path: str | Path, solver_scores: str | Path | None = None
) -> JsonObject:
    """The Index of an attempt table and a cohort, plus whether the reference label was verified.

    With `solver_scores` every adopted valid Solver row is checked against its solver-score output
    (a reference or score mismatch is an error naming the row and task) and
    `solver_reference_verified` is true. Without it (the spec's command) the Index is computed all
    the same, but `solver_reference_verified` is false and the top-level `issues` says so.
    """
    cohort = load_cohort(cohort_path, suite)
    df = read_attempts(attempts_path)
    result = compute_index(
        df, suite, cohort, source=str(attempts_path), solver_scores=Path(solver_scores) if solver_scores else None
    )
    verified = solver_scores is not None
    result["solver_reference_verified"] = verified
    result["issues"] = (
        []
        if verified
        else [
            {
                "reason": "reference_unverified",
                "message": f"solver_reference_id {cohort.solver_reference_id!r} is the cohort's label: no "
                "solver-score outputs were checked (pass --solver-scores DIR to verify that every adopted "
                "Solver score came from this reference)",
            }
        ]
    )
    result["issues"] += unverified_proofs(df)
    result["issues"] += statement_mismatches(df)
    return result
