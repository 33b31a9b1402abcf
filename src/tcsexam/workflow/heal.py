"""Before a workflow run: set aside every derived file that cannot be trusted, so it is rebuilt.

Snakemake reruns a job when its output is missing or older than its inputs; it cannot see a file
that was truncated, edited, swapped for another attempt's, or left over from other inputs with a
newer time stamp. `heal(plan)` runs when the Snakefile is read (rules/common.smk) and checks each
file the workflow reads back against its own digest and its inputs:

- records.json: every record passes its digest, belongs to this task and attempt, covers exactly
  the planned instances, and is the very record stored in records/ (same digest);
- relative.json and the Solver row.json: their digest, and the sha256 of the records.json (and
  relative.json) they were computed from;
- the other tracks' rows.json, a missing row: their digest and identities;
- cohort.json: equal to the cohort the config asks for (reference id read from the reference);
- attempts.csv: byte-equal to the table of the current row files; index.json: its sha256 and those
  of attempts.csv and cohort.json equal the ones `tcsexam score --checksums` recorded in
  `.checksums/index.json` (kept beside it, so index.json itself holds only the Index); the ones
  the last run wrote after its failed jobs (`salvage`) are always made again.

A file that fails is moved (never deleted) into `<out>/.set-aside/<timestamp>/<its path>`, with
the reason in `reasons.txt` there, together with everything computed from it up to index.json and
the plots. The files are then missing, so the same `snakemake` run rebuilds them: `tcsexam run`
reuses every sound instance record and reruns the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tcsexam.attempts.cohort import build_cohort, parse_model_plans
from tcsexam.attempts.online import ONLINE_MARK, SIDECAR
from tcsexam.attempts.rows import read_rows, table_of
from tcsexam.attempts.verdicts import verdict_row_file
from tcsexam.errors import InputError
from tcsexam.fileio import aside_dir, move_aside, read_json
from tcsexam.records.digest import digest_problem, hash_candidate
from tcsexam.records.integrity import file_sha256, seal_problem
from tcsexam.records.key import find_key
from tcsexam.records.store import records_file_problem
from tcsexam.scoring.reference import load_reference
from tcsexam.scoring.vocabulary import ScoreStatus
from tcsexam.suites import Track
from tcsexam.workflow.salvage import SALVAGED, salvaged


@dataclass
class HealReport:
    set_aside: list[tuple[str, str]] = field(default_factory=list)  #: (path, reason)
    destination: Path | None = None

    def lines(self) -> list[str]:
        if not self.set_aside:
            return []
        where = f" into {self.destination}" if self.destination else ""
        out = [f"tcsexam: {len(self.set_aside)} derived file(s) failed their checks and are set aside{where}:"]
        out += [f"  {path}: {reason}" for path, reason in self.set_aside]
        return out


def check_records_file(
    path: Path, task: str, attempt: str, instances: list[str], records_dir: Path, candidate: Path | None = None
) -> str | None:
    """Why a records.json cannot be trusted (None when it can). With `candidate`, every record
    must have been made by that candidate folder (its files' hash), so a records folder copied
    from another model is not taken for this one's."""
    problem = records_file_problem(path, records_dir)
    if problem is not None:
        return problem
    data = read_json(path, "records file")
    cand_hash = None
    for i, rec in enumerate(data):
        if rec.get("task") != task or str(rec.get("attempt")) != attempt:
            return f"record {i + 1} belongs to task {rec.get('task')!r} attempt {rec.get('attempt')!r}"
        if candidate is not None and rec.get("candidate_hash") is not None:
            if cand_hash is None:
                try:
                    cand_hash = hash_candidate(candidate)
                except InputError:
                    return None  # an unreadable candidate is the run's error to report
            if rec["candidate_hash"] != cand_hash:
                return f"record {i + 1} ({rec.get('instance')!r}) was made by another candidate than {candidate}"
    names = [rec.get("instance") for rec in data]
    if sorted(names) != sorted(instances):
        return f"covers instances {sorted(names)}, the plan asks for {sorted(instances)}"
    return None


def check_online_records(path: Path, task: str, attempt: str, online_input: Path) -> str | None:
    """Why an ingested records.json (online protocol) cannot be trusted (None when it can): a record
    fails its digest or belongs to another task or attempt, or it was not made from the current
    judged records file (its online-input.json says which)."""
    try:
        data = read_json(path, "records file")
        if not isinstance(data, list):
            raise InputError(f"{path}: not a JSON list of records")
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    want = file_sha256(online_input)
    key = find_key(path)
    for i, rec in enumerate(data):
        problem = digest_problem(rec, key)
        if problem is not None:
            return f"record {i + 1}: {problem}"
        if rec.get("task") != task or str(rec.get("attempt")) != attempt:
            return f"record {i + 1} belongs to task {rec.get('task')!r} attempt {rec.get('attempt')!r}"
        if (rec.get("extra") or {}).get(ONLINE_MARK) != want:
            return f"record {i + 1} was not ingested from the current {online_input}"
    sidecar = path.parent / SIDECAR
    if not sidecar.is_file():
        return f"no {SIDECAR} beside it"
    return _check_json(sidecar, "online input file", {"records": path}, {"input_sha256": want})


def _check_json(path: Path, what: str, inputs: dict[str, Path] | None, expect: dict | None = None) -> str | None:
    try:
        data = read_json(path, what)
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    if not isinstance(data, dict):
        return f"not a {what}"
    problem = seal_problem(data, inputs, at=path)
    if problem is not None:
        return problem
    for key, want in (expect or {}).items():
        if str(data.get(key)) != str(want):
            return f"{key} is {data.get(key)!r}, expected {want!r}"
    return None


def _check_rows(path: Path, identities: set[tuple[str, str, str, str]]) -> str | None:
    try:
        rows = read_rows(path)
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    data = read_json(path, "attempt row file")
    items = data if isinstance(data, list) else [data]
    if any("digest" not in item for item in items):
        return "a row without a digest"
    got = [r.identity for r in rows]
    if set(got) != identities or len(got) != len(identities):
        return "its rows are not the planned attempts of this file"
    return None


class _Marks(dict):
    """The files found bad, each with its first reason (path -> reason), in the order found."""

    def mark(self, path: Path, reason: str | None) -> None:
        if reason and path.exists() and path not in self:
            self[path] = reason


def heal(plan, *, dry_run: bool = False) -> HealReport:
    """Check the derived files of `plan`'s evaluation tree; set aside those that fail."""
    layout = plan.layout
    report = HealReport()
    if not layout.root.is_dir():
        return report
    bad = _Marks()
    downstream = [layout.attempts_csv, layout.index, layout.manifest, *sorted(layout.plots_dir.glob("*.png"))]
    ref_id = _reference_id(plan)
    row_files: list[Path] = []
    for p in plan.planned:
        if p.track == Track.SOLVER:
            row_files.append(Path(p.row))
            _check_solver_attempt(plan, p, ref_id, bad)
    judged = plan.construction_runs()  # their rows are their own files, not in tracks/<model>/rows.json
    proofs = plan.proof_runs()  # the same for the proofs the pipeline checks
    row_files += _check_construction_rows(layout, judged, bad)
    row_files += _check_proof_rows(layout, proofs, bad)
    row_files += _check_track_rows(plan, [*judged, *proofs], bad)
    _check_summaries(plan, row_files, bad)
    if bad:
        for path in downstream:
            bad.mark(path, "computed from files that are set aside")
        if not dry_run:
            report.destination = _set_aside(layout, bad)
        report.set_aside = [(str(p), r) for p, r in bad.items()]
    return report


def _check_solver_attempt(plan, p, ref_id: str | None, bad: _Marks) -> None:
    """One planned Solver attempt: its records.json, relative.json and row (or its missing row)."""
    layout = plan.layout
    row = Path(p.row)
    identity = {(p.model, p.track, p.item, p.attempt)}
    if "/missing/" in p.row:
        if row.exists():
            bad.mark(row, _check_rows(row, identity))
        return
    records = layout.records_json(p.model, p.item, p.attempt)
    relative = layout.relative_json(p.model, p.item, p.attempt)
    if records.exists():
        if plan.online:
            online_input = plan.root / plan.online_input(p.model, p.item, p.attempt)
            reason = check_online_records(records, p.item, p.attempt, online_input)
        else:
            candidate = plan.root / plan.candidate(p.model, p.item, p.attempt)
            records_dir = layout.records_dir(p.model, p.item, p.attempt)
            reason = check_records_file(records, p.item, p.attempt, plan.instances(p.item), records_dir, candidate)
        if reason:
            bad.mark(records, reason)
            bad.mark(relative, "computed from a records.json that is set aside")
            bad.mark(row, "computed from a records.json that is set aside")
            return
    if relative.exists():
        expect = {"task": p.item} if ref_id is None else {"task": p.item, "reference_id": ref_id}
        reason = _check_json(relative, "solver-score output", {"records": records}, expect)
        if reason is None:
            scored = read_json(relative, "solver-score output")
            if scored.get("relative_score") is not None and "records_source" not in scored:
                reason = "made before relative.json said where its records came from (records_source)"
        if reason:
            bad.mark(relative, reason)
            bad.mark(row, "computed with a relative.json that is set aside")
            return
    if row.exists():
        reason = _check_rows(row, identity)
        if reason is None:
            data = read_json(row, "attempt row file")
            inputs = {"records": records}
            if data.get("score_status") == ScoreStatus.VALID:
                inputs["relative"] = relative
            reason = seal_problem(data, inputs, at=row)
        bad.mark(row, reason)


def _check_construction_rows(layout, judged, bad: _Marks) -> list[Path]:
    """The rows of the constructions the pipeline judged (sealed with their records.json); their paths."""
    rows = []
    for p in judged:
        row = Path(p.row)
        rows.append(row)
        if row.exists():
            reason = _check_rows(row, {(p.model, p.track, p.item, p.attempt)})
            if reason is None:
                records = layout.construction_attempt_dir(p.model, p.item, p.attempt) / "records.json"
                inputs = {"records": records} if records.exists() else None  # as `construction row` sealed it
                reason = seal_problem(read_json(row, "attempt row file"), inputs, at=row)
            bad.mark(row, reason)
    return rows


def _check_proof_rows(layout, proofs, bad: _Marks) -> list[Path]:
    """The verdicts and rows of the proofs the pipeline checked (a row is sealed with its
    verdict.json; a verdict that is not one of this attempt is set aside with its row)."""
    rows = []
    for p in proofs:
        row, verdict = Path(p.row), layout.proof_verdict(p.model, p.item, p.attempt)
        rows.append(row)
        if verdict.exists():
            try:
                verdict_row_file(verdict, {"model": p.model, "track": p.track, "item": p.item, "attempt": p.attempt})
            except InputError as exc:
                bad.mark(verdict, str(exc))
                bad.mark(row, "computed from a verdict.json that is set aside")
                continue
        if row.exists():
            reason = _check_rows(row, {(p.model, p.track, p.item, p.attempt)})
            if reason is None:
                inputs = {"verdict": verdict} if verdict.exists() else None
                reason = seal_problem(read_json(row, "attempt row file"), inputs, at=row)
            bad.mark(row, reason)
    return rows


def _check_track_rows(plan, judged, bad: _Marks) -> list[Path]:
    """Each model's tracks/<model>/rows.json (the verdict tracks' rows but the judged constructions)."""
    files = []
    for model in plan.models:
        rows = plan.layout.track_rows(model)
        files.append(rows)
        if rows.exists():
            want = {
                (p.model, p.track, p.item, p.attempt)
                for p in plan.planned
                if p.model == model and p.track != Track.SOLVER and p not in judged
            }
            bad.mark(rows, _check_rows(rows, want))
    return files


def _check_summaries(plan, row_files: list[Path], bad: _Marks) -> None:
    """cohort.json, attempts.csv (against its row files) and index.json (against its checksums)."""
    layout = plan.layout
    cohort, table, index = layout.cohort, layout.attempts_csv, layout.index
    if cohort.exists():
        bad.mark(cohort, _check_cohort(plan, cohort))
    if table.exists():
        if salvaged(layout, table):
            bad.mark(table, SALVAGED)
        elif any(f in bad or not f.exists() for f in row_files):
            bad.mark(table, "computed from row files that are missing or set aside")
        else:
            bad.mark(table, _check_table(table, row_files, plan.adoption))
    if index.exists():
        if salvaged(layout, index):
            bad.mark(index, SALVAGED)
        elif table in bad or cohort in bad:
            bad.mark(index, "computed from an attempts.csv or cohort.json that is set aside")
        else:
            sums = layout.index_checksums
            reason: str | None
            if not sums.exists():
                reason = f"no {sums} to check it against its inputs"
            else:
                reason = _check_json(sums, "checksum file", {"output": index, "attempts": table, "cohort": cohort})
            bad.mark(index, reason)


def _set_aside(layout, bad: _Marks) -> Path:
    """Move the bad files into a new <out>/.set-aside/<timestamp>/ (their paths kept below it)."""
    dest = aside_dir(layout.set_aside_dir)
    for path, reason in bad.items():
        move_aside(path, dest / path.parent.relative_to(layout.root), reason)
    return dest


def _check_cohort(plan, path: Path) -> str | None:
    try:
        data = read_json(path, "cohort file")
    except InputError as exc:
        return str(exc).removeprefix(f"{path}: ")
    try:
        want = build_cohort(
            plan.config["suite"],
            plan.protocol,
            plan.reference,
            parse_model_plans([f"{m}={len(a)}" for m, a in plan.models.items()]),
            plan.config.get("adoption_policy"),
        )
    except Exception:  # a broken reference is reported by the config check, not here
        return None
    if data != want:
        return "not the cohort this config asks for (suite, protocol, reference id or models differ)"
    return None


def _check_table(path: Path, row_files: list[Path], adoption=None) -> str | None:
    try:
        _, want = table_of(row_files, adoption)
        have = path.read_text(encoding="utf-8")
    except (InputError, OSError, UnicodeDecodeError, ValueError) as exc:
        return f"cannot be compared with its row files: {exc}"
    if have != want:
        return "differs from the table of its row files"
    return None


def _reference_id(plan) -> str | None:
    """The configured reference's id (None when it cannot be read: the config check reports it)."""
    try:
        return load_reference(plan.reference).reference_id
    except (InputError, OSError):
        return None
