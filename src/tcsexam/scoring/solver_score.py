"""The fixed-reference relative score of one Solver task (the spec's "Fixed-reference Solver
calculation").

For each eligible reference instance: mu = mean of its usable reference values, s = their sample
standard deviation (n - 1), scale = max(s, relative_floor * |mu|, absolute_floor);
z = (A - mu) / scale when maximising, (mu - A) / scale when minimising; score = Phi(z).
Completed solver failures score 0. The task score is the mean over all eligible instances.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.fileio import Json, JsonObject, read_json
from tcsexam.records import Status
from tcsexam.scoring.outcomes import Outcomes, parse_outcomes
from tcsexam.scoring.reference import Reference, load_reference
from tcsexam.tasks import Direction

OUTPUT_SCHEMA_VERSION = 1
_ZMAX = float(np.finfo(np.float64).max)


def score_outcomes(task: str, outcomes: Outcomes, reference: Reference, source: str = "records") -> JsonObject:
    """The solver-score result for validated outcomes (see `solver_score` for the output keys)."""
    ref = reference.task(task)
    n_ref = len(ref.names)
    index = ref.index
    idx = np.fromiter((index.get(name, -1) for name in outcomes.names), dtype=np.int64, count=len(outcomes))
    eligible = idx >= 0
    rows = np.flatnonzero(eligible)
    if rows.size != n_ref:
        present = np.zeros(n_ref, dtype=bool)
        present[idx[rows]] = True
        missing = [ref.names[i] for i in np.flatnonzero(~present)]
        more = f" (and {len(missing) - 1} more eligible instances)" if len(missing) > 1 else ""
        raise InputError(
            f"{source}: instance {missing[0]!r}: eligible in reference {reference.reference_id!r} "
            f"task {task!r} but has no record{more}; repair the judging input before scoring"
        )
    pos = np.empty(n_ref, dtype=np.int64)
    pos[idx[rows]] = rows  # reference order -> record row
    value = outcomes.values[pos]
    ok = outcomes.ok[pos]
    mu, scale = ref.mu, ref.scale
    diff = value - mu if ref.direction == Direction.MAXIMIZE else mu - value
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.clip(diff / scale, -_ZMAX, _ZMAX)  # JSON has no infinity; Phi is 0/1 there anyway
    # Phi: the function scipy.stats.norm.cdf evaluates, without scipy.stats (~1 s); scipy itself is
    # imported here, not at module level: a row job that never scores a Solver attempt skips it (0.3-0.7 s)
    from scipy.special import ndtr

    score = np.where(ok, ndtr(z), 0.0)
    relative = float(score.mean())

    statuses = outcomes.statuses
    ok_list = ok.tolist()
    instances = [
        {
            "instance": name,
            "status": statuses[p],
            "value": v if good else None,
            "mu": m,
            "scale": sc,
            "z": zz if good else None,
            "score": s,
        }
        for name, p, good, v, m, sc, zz, s in zip(
            ref.names, pos.tolist(), ok_list, value.tolist(), mu.tolist(), scale.tolist(), z.tolist(), score.tolist()
        )
    ]
    unscored = [outcomes.names[i] for i in np.flatnonzero(~eligible)]
    has_reward = ~np.isnan(outcomes.rewards)
    n_reward = int(has_reward.sum())
    return {
        "schema_version": OUTPUT_SCHEMA_VERSION,
        "task": task,
        "reference_id": reference.reference_id,
        "kind": ref.kind,
        "direction": ref.direction,
        "relative_score": relative,
        "n_eligible": n_ref,
        "n_ok": int(ok.sum()),
        "instances": instances,
        "unscored_instances": unscored,
        "checker_reward": float(outcomes.rewards[has_reward].mean()) if n_reward else None,
        "checker_reward_n": n_reward,
    }


def solver_score(
    task: str, records: Json, reference: Reference, source: str = "records", *, require_digest: bool = False
) -> JsonObject:
    """Score a decoded records list against a loaded reference.

    Output keys: task, reference_id, relative_score, n_eligible, instances (a list of
    {instance, status, value, mu, scale, z, score} in reference order), unscored_instances (record
    names outside the eligible set, in record order), checker_reward (mean of the finite `reward`
    fields, null when no record carries one) and checker_reward_n (how many carried one); plus
    schema_version, kind, direction and n_ok; on a SAT task whose records say how their UNSAT
    answers were judged, `unsat_proof` (`unsat_evidence`: verified, trusted, failed, note).
    """
    kind = reference.task(task).kind
    outcomes = parse_outcomes(records, kind, source, require_digest=require_digest)
    result = score_outcomes(task, outcomes, reference, source)
    evidence = unsat_evidence(records)
    if evidence is not None:
        result["unsat_proof"] = evidence
    return result


def unsat_evidence(records: Json) -> JsonObject | None:
    """What backs the ok UNSAT answers of a SAT task's records (their `extra.unsat_proof`,
    `tcsexam.runner.solver.drat`): `verified` and `trusted` (taken without a proof, `unsat_proof: trusted`)
    instance names, `failed` those refused for want of a verified proof, and a `note` when any was
    trusted; None when no record says anything of a proof (other problems, older records)."""
    found: JsonObject = {"verified": [], "trusted": [], "failed": []}
    seen = False
    for rec in records if isinstance(records, list) else []:
        extra = rec.get("extra") if isinstance(rec, dict) else None
        proof = extra.get("unsat_proof") if isinstance(extra, dict) else None
        if not isinstance(proof, dict):
            continue
        seen = True
        name = str(rec.get("instance"))
        if proof.get("mode") == "trusted":
            if rec.get("status") == Status.OK and rec.get("solved"):
                found["trusted"].append(name)
        elif proof.get("verified") is True and rec.get("status") == Status.OK:
            found["verified"].append(name)
        else:
            found["failed"].append(name)
    if not seen:
        return None
    if found["trusted"]:
        found["note"] = (
            f"{len(found['trusted'])} UNSAT answer(s) counted as solved on trust (unsat_proof: trusted): no DRAT "
            "proof was checked"
        )
    return found


def solver_score_files(task: str, records_path: str | Path, reference: str | Path) -> JsonObject:
    ref = load_reference(reference)
    records = read_json(records_path, "records file")
    return solver_score(task, records, ref, str(records_path))
