"""The results tree of one evaluation, known in one place.

One tree per suite and Solver protocol, so Lite/Full and online/offline never mix:

    <results>/<suite>/<protocol>/                    ResultsLayout.root
        solver/<model>/<task>/<attempt>/             one Solver attempt
            records/  records.json  run.log  relative.json  row.json  score.log
            scan.json  scan.log                      the candidate scan (tcsexam scan-candidate)
            heartbeat.json                           the running job's state (tcsexam status)
        construction/<model>/<item>/<attempt>/       a construction judged by the pipeline
            records/  records.json  run.log  checker.json  row.json  row.log
        proof/<model>/<item>/<attempt>/              a theorem / open-conjecture proof checked by the pipeline
            verdict.json  check.log  row.json  row.log
        tracks/<model>/rows.json  rows.log           theorem, open_conjecture (and verdict-file construction) rows
        missing/<track>/<model>/<item>/<attempt>/row.json   a planned attempt without a result
        twins/s<seed>/tasks/<task>/  twins/s<seed>/solver/...   twin sets and the runs on them
                                                     (config `twins:`, tcsexam.workflow.twins)
        cohort.json  attempts.csv  index.json  manifest.json  plots/*.png  logs/  compare/
        .checksums/index.json  .set-aside/<stamp>/      index.json's inputs; derived files set aside
        .status/plan.json                            the planned Solver attempts (tcsexam status)
    <results>/reference/<reference id>/<task>/seed<k>/{records/, records.json, run.log}

The workflow's planner, the scorer, the plots, the manifest, `compare` and the self-healing check
all take their paths from here. Every method returns a `Path`; given Snakemake wildcards such as
"{model}" it returns the rule's path pattern.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class _Under:
    """A fixed path under the layout's root, read as an attribute: `layout.index`."""

    def __init__(self, *parts: str) -> None:
        self.parts = parts

    def __get__(self, layout: ResultsLayout | None, owner: type | None = None) -> Path:
        if layout is None:
            raise AttributeError("a path of a ResultsLayout instance")
        return layout.root.joinpath(*self.parts)


@dataclass(frozen=True)
class ResultsLayout:
    root: Path

    @classmethod
    def of(cls, results: str | os.PathLike, suite: str, protocol: str) -> ResultsLayout:
        return cls(Path(results) / suite / protocol)

    # ---- Solver attempts -----------------------------------------------------------------

    solver_dir = _Under("solver")

    def attempt_dir(self, model: str, task: str, attempt: str) -> Path:
        return self.solver_dir / model / task / str(attempt)

    def records_dir(self, model: str, task: str, attempt: str) -> Path:
        return self.attempt_dir(model, task, attempt) / "records"

    def records_json(self, model: str, task: str, attempt: str) -> Path:
        return self.attempt_dir(model, task, attempt) / "records.json"

    def relative_json(self, model: str, task: str, attempt: str) -> Path:
        return self.attempt_dir(model, task, attempt) / "relative.json"

    def solver_row(self, model: str, task: str, attempt: str) -> Path:
        return self.attempt_dir(model, task, attempt) / "row.json"

    def solver_files(self, name: str) -> list[tuple[str, str, str, Path]]:
        """(model, task, attempt, path) of every existing solver/<model>/<task>/<attempt>/<name>,
        sorted."""
        return attempt_files(self.solver_dir, name)

    # ---- constructions judged by the pipeline (tcsexam construction run / row) ---------------

    construction_dir = _Under("construction")

    def construction_attempt_dir(self, model: str, item: str, attempt: str) -> Path:
        return self.construction_dir / model / item / str(attempt)

    def construction_row(self, model: str, item: str, attempt: str) -> Path:
        return self.construction_attempt_dir(model, item, attempt) / "row.json"

    # ---- proofs checked by the pipeline (tcsexam proof check; attempts verdict-row) -----------

    proof_dir = _Under("proof")

    def proof_attempt_dir(self, model: str, item: str, attempt: str) -> Path:
        return self.proof_dir / model / item / str(attempt)

    def proof_verdict(self, model: str, item: str, attempt: str) -> Path:
        return self.proof_attempt_dir(model, item, attempt) / "verdict.json"

    def proof_row(self, model: str, item: str, attempt: str) -> Path:
        return self.proof_attempt_dir(model, item, attempt) / "row.json"

    # ---- the other tracks and missing results ---------------------------------------------

    def track_rows(self, model: str) -> Path:
        return self.root / "tracks" / model / "rows.json"

    def track_row(self, model: str, item: str, attempt: str) -> Path:
        """The row of one planned verdict inside the model's rows.json (its identity, not a file)."""
        return self.root / "tracks" / model / item / str(attempt) / "row.json"

    def missing_row(self, track: str, model: str, item: str, attempt: str) -> Path:
        return self.root / "missing" / track / model / item / str(attempt) / "row.json"

    # ---- the evaluation's own files -------------------------------------------------------

    cohort = _Under("cohort.json")
    attempts_csv = _Under("attempts.csv")
    index = _Under("index.json")
    manifest = _Under("manifest.json")
    plots_dir = _Under("plots")
    logs_dir = _Under("logs")
    compare_dir = _Under("compare")
    #: the sha256 of index.json's inputs (`tcsexam score --checksums`), kept beside it
    index_checksums = _Under(".checksums", "index.json")
    #: where the self-healing check moves derived files it cannot trust
    set_aside_dir = _Under(".set-aside")
    #: the planned Solver attempts and their instance counts, written at the workflow's start
    status_plan = _Under(".status", "plan.json")


def reference_dir(results: str | os.PathLike, reference_id: str) -> Path:
    """Where the reference target builds reference `reference_id`: <results>/reference/<id>."""
    return Path(results) / "reference" / reference_id


def attempt_files(solver_dir: str | os.PathLike, name: str) -> list[tuple[str, str, str, Path]]:
    """(model, task, attempt, path) of every existing <solver_dir>/<model>/<task>/<attempt>/<name>."""
    solver_dir = Path(solver_dir)
    if not solver_dir.is_dir():
        return []
    out = []
    for path in sorted(solver_dir.glob(f"*/*/*/{name}")):
        attempt = path.parent
        out.append((attempt.parent.parent.name, attempt.parent.name, attempt.name, path))
    return out
