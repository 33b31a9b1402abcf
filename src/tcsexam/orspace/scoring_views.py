"""Build/Revise pass rates three ways (docs/orspace.md "Pass rates three ways"): as released, with the
disputed items left out, and accepting any evidenced answer.

- *as released*: the release's rule against its one reference per item (`objectives.RULE`).
- *disputed left out*: the same rule over the items the disputes file does not list (a Revise item
  is never left out: the disputes file lists Build items).
- *any evidenced answer*: a result also passes when its status is Optimal and its objective is within
  the item's tolerance of some reading's proven optimum that `audit-references` recorded (the
  reference itself is always accepted). Items without a model accept only the reference, so this
  rate is never below the released one, and it rises only where the project's models give evidence.

The disputes file and the audit are inputs whose versions (sha256) are written into the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import JsonObject, read_json
from tcsexam.orspace.audit import SCHEMA_VERSION as AUDIT_SCHEMA_VERSION
from tcsexam.orspace.audit import agrees, load_disputes
from tcsexam.orspace.objectives import FailureMode
from tcsexam.orspace.release import Release
from tcsexam.records.digest import hash_file


class PassRateView(StrEnum):
    """The three ways a Build/Revise pass rate is reported (`pass_rates` keys)."""

    AS_RELEASED = "as_released"
    DISPUTED_LEFT_OUT = "disputed_left_out"
    ANY_EVIDENCED = "any_evidenced"


def input_version(path: str | Path) -> dict[str, str]:
    """An input file's path and sha256 (its version in a summary or manifest)."""
    return {"path": str(path), "sha256": hash_file(path)}


@dataclass
class ReferenceEvidence:
    """What the disputes file and the audit say about the references of a release."""

    disputed: set[str] | None = None  #: the disputed items (None: no disputes file nor audit)
    answers: dict[str, list[tuple[float, str]]] | None = None  #: per item: (value, "reference" or model file)
    inputs: JsonObject = field(default_factory=dict)

    @classmethod
    def load(cls, disputes_path: Path | None, audit_path: Path | None, release: Release) -> ReferenceEvidence:
        out = cls()
        if disputes_path is not None:
            disputes = load_disputes(disputes_path)
            for wid, row in disputes.items():
                oracle = release.oracle.get(wid)
                if oracle is not None and not agrees(row.reference, oracle.reference_objective, 1e-9):
                    raise InputError(
                        f"{disputes_path}: {wid}: orspace_reference {row.reference} is not the oracle's "
                        f"{oracle.reference_objective} (a disputes file of another release?)"
                    )
            out.disputed = set(disputes)
            out.inputs["disputes"] = input_version(disputes_path)
        if audit_path is not None:
            doc = read_json(audit_path, "reference audit")
            if not isinstance(doc, dict) or doc.get("schema_version") != AUDIT_SCHEMA_VERSION:
                raise InputError(f"{audit_path}: not a reference audit of schema version {AUDIT_SCHEMA_VERSION}")
            items = doc.get("items")
            if not isinstance(items, list):
                raise InputError(f"{audit_path}: reference audit has no items list")
            out.answers = {}
            audited_disputes = set()
            for n, item in enumerate(items):
                item_wid = item.get("workspace_id") if isinstance(item, dict) else None
                oracle = release.oracle.get(item_wid) if isinstance(item_wid, str) else None
                if oracle is None or not isinstance(item_wid, str):
                    continue  # an item of a mode not scored in this run
                if not agrees(item.get("reference"), oracle.reference_objective, 1e-9):
                    raise InputError(
                        f"{audit_path}: item {n} ({item_wid}): reference {item.get('reference')} is not the oracle's "
                        f"{oracle.reference_objective} (an audit of another release?)"
                    )
                found = [(oracle.reference_objective, "reference")]
                for model in item.get("models") or []:
                    solved = model.get("status") == "Optimal" and isinstance(model.get("objective"), (int, float))
                    if solved and model.get("evidence") is True:
                        found.append((float(model["objective"]), str(model.get("file"))))
                out.answers[item_wid] = found
                if item.get("disputed"):
                    audited_disputes.add(item_wid)
            if out.disputed is None:
                out.disputed = audited_disputes
            out.inputs["audit"] = {**input_version(audit_path), "schema_version": doc["schema_version"]}
            if isinstance(doc.get("inputs"), dict) and doc["inputs"].get("disputes"):
                out.inputs["audit_disputes"] = doc["inputs"]["disputes"]
        return out

    def evidenced_match(self, wid: str, objective: float | None, tolerance: float) -> str | None:
        """What an Optimal objective agrees with ("reference" or a model file), or None."""
        if objective is None or self.answers is None:
            return None
        for value, source in self.answers.get(wid, ()):
            if agrees(objective, value, tolerance):
                return source
        return None


def _rate(rows: list[JsonObject], key: str) -> JsonObject:
    passed = sum(bool(r[key]) for r in rows)
    by_mode: dict[str, JsonObject] = {}
    for mode in sorted({r["mode"] for r in rows}):
        members = [r for r in rows if r["mode"] == mode]
        ok = sum(bool(r[key]) for r in members)
        by_mode[mode] = {"n": len(members), "passed": ok, "pass_at_1": ok / len(members)}
    return {"n": len(rows), "passed": passed, "pass_at_1": passed / len(rows) if rows else None, "by_mode": by_mode}


def add_pass_rate_views(summary: JsonObject, evidence: ReferenceEvidence | None) -> JsonObject:
    """Add `pass_rates` (the three views; a view without its input is None with the reason), the
    rows' `disputed`, `passed_any_evidenced` and `evidenced_match`, the scalar
    `pass_at_1_disputed_left_out` / `pass_at_1_any_evidenced`, and `inputs` to a
    `score_objectives` summary, in place."""
    rows = summary["rows"]
    evidence = evidence or ReferenceEvidence()
    for row in rows:
        row["disputed"] = None if evidence.disputed is None else row["workspace_id"] in evidence.disputed
        if evidence.answers is None:
            row["passed_any_evidenced"], row["evidenced_match"] = None, None
        elif row["passed"]:
            row["passed_any_evidenced"], row["evidenced_match"] = True, "reference"
        else:
            optimal = row["failure_mode"] == FailureMode.WRONG_OBJECTIVE
            match = (
                evidence.evidenced_match(row["workspace_id"], row["objective"], row["relative_tolerance"])
                if optimal
                else None
            )
            row["passed_any_evidenced"], row["evidenced_match"] = match is not None, match
    views: JsonObject = {PassRateView.AS_RELEASED: _rate(rows, "passed")}
    if evidence.disputed is None:
        views[PassRateView.DISPUTED_LEFT_OUT] = None
    else:
        kept = [r for r in rows if not r["disputed"]]
        views[PassRateView.DISPUTED_LEFT_OUT] = {
            **_rate(kept, "passed"),
            "left_out": sorted(r["workspace_id"] for r in rows if r["disputed"]),
        }
    if evidence.answers is None:
        views[PassRateView.ANY_EVIDENCED] = None
    else:
        views[PassRateView.ANY_EVIDENCED] = {
            **_rate(rows, "passed_any_evidenced"),
            "rescued": sorted(r["workspace_id"] for r in rows if r["passed_any_evidenced"] and not r["passed"]),
            "items_with_evidence": sum(1 for r in rows if len(evidence.answers.get(r["workspace_id"], ())) > 1),
        }
    summary["pass_rates"] = views
    summary["pass_at_1_disputed_left_out"] = (views[PassRateView.DISPUTED_LEFT_OUT] or {}).get("pass_at_1")
    summary["pass_at_1_any_evidenced"] = (views[PassRateView.ANY_EVIDENCED] or {}).get("pass_at_1")
    summary["inputs"] = evidence.inputs
    return summary
