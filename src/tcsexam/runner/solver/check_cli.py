"""`tcsexam check`: one certificate against one instance, as a Solver run checks it (the
problem's checker, and for SAT the DRAT rule of UNSAT answers), or a record re-checked from what
its run kept."""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import zlib
from pathlib import Path

from tcsexam.cliutil import command
from tcsexam.errors import InputError, UsageError
from tcsexam.limits import MiB, UnsatProof
from tcsexam.tasks import Kind


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "check", check_main)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--task", help="task id (config/tasks/<id>.yaml) or path to a task file")
    which.add_argument(
        "--problem",
        help="problem name (maxcut, sat, tsp, coloring, maxsat), "
        "for an instance outside any task (no metadata, so no reward)",
    )
    p.add_argument(
        "--instance",
        help="an instance name of the task, or the path of an instance file (default with --task: "
        "the task's only instance, e.g. a construction task's parameter file)",
    )
    p.add_argument("--certificate", help="the certificate file the solver wrote (required unless --record)")
    p.add_argument(
        "--proof",
        help="SAT: the DRAT proof (text or binary, or gzip-compressed as a run keeps it) of an UNSAT answer, checked "
        "as in a run (docs/proofs.md#unsat-answers-drat-proofs); with --task its unsat_proof rule applies "
        "(required: an UNSAT answer needs it), with --problem sat it is checked when given",
    )
    p.add_argument(
        "--record",
        metavar="FILE",
        help="re-check a record from what its run kept beside it (extra.kept: <attempt>/certificates, "
        "<attempt>/proofs): a record file (<attempt>/records/<instance>.json) or records.json with --instance; "
        "needs --task; prints the record's verdict beside the new one and whether they agree",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")


def _resolve(args):
    from tcsexam.problems import get_problem

    if args.problem:
        if not args.instance:
            raise UsageError("--problem needs --instance")
        problem = get_problem(args.problem)
        return problem, Path(args.instance), {}, args.instance
    from tcsexam.tasks import load_task

    task = load_task(args.task)
    problem = task.problem_impl
    if not args.instance:
        if len(task.instances) != 1:
            raise UsageError(f"task {task.id} has {len(task.instances)} instances: name one with --instance")
        inst = task.instances[0]
        return problem, inst.path, inst.meta, inst.name
    for inst in task.instances:
        if inst.name == args.instance:
            return problem, inst.path, inst.meta, inst.name
    path = Path(args.instance)
    if not path.exists():
        raise InputError(f"{args.instance}: neither an instance of task {task.id} nor a file")
    resolved = path.resolve()
    for inst in task.instances:
        if inst.path.resolve() == resolved:
            return problem, inst.path, inst.meta, inst.name
    return problem, path, {}, str(path)


def check_main(args) -> int:
    """check one certificate against one instance

    Check a solver's certificate against an instance and print status, value, claimed value, original checker
    reward and message. Exit 0 whatever the verdict; 1 on bad input (missing file, unreadable instance)."""
    recorded = _from_record(args) if args.record else None
    if not args.certificate:
        raise UsageError("check needs --certificate FILE (or --record FILE)")
    problem, path, meta, name = _resolve(args)
    if recorded is not None:
        _same_instance(path, recorded)
    instance = problem.parse_instance(path)
    cert = Path(args.certificate)
    try:
        data = cert.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{cert}: certificate file not found") from None
    except OSError as exc:
        raise InputError(f"{cert}: cannot read certificate: {exc.strerror or exc}") from None
    result = problem.check_certificate(instance, data, meta)
    result, proof = _unsat_proof(args, problem, instance, result)
    out = {
        "instance": name,
        "problem": problem.name,
        "status": result.status,
        "value": result.value,
        "solved": result.solved,
        "claimed": result.claimed,
        "reward": result.reward,
        "message": result.message,
    }
    if proof is not None:
        out["unsat_proof"] = proof
    if recorded is not None:
        out["record_status"] = recorded.get("status")
        out["record_value"] = recorded.get("A") if problem.kind != Kind.SOLVE else recorded.get("solved")
        value = out["value"] if problem.kind != Kind.SOLVE else out["solved"]
        out["agrees"] = out["status"] == out["record_status"] and value == out["record_value"]
    from tcsexam.problems.constructions import checker_id
    from tcsexam.problems.constructions._base import ConstructionProblem

    if isinstance(problem, ConstructionProblem):  # a construction: its checker's identity
        out["checker"] = checker_id(problem)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            if key == "solved" and problem.kind != Kind.SOLVE:
                continue
            print(f"{key}: {'-' if value is None else value}")
    return 0


def _from_record(args) -> dict:
    """The record `--record` names (a record file, or records.json's entry for `--instance`), with
    `--certificate` and `--proof` set to the files its run kept (`extra.kept`), each checked
    against the sha256 the record holds. InputError naming the file and what is wrong."""
    from tcsexam.fileio import read_json

    if not args.task:
        raise UsageError("--record needs --task (the record's task: its instance and its UNSAT rule)")
    path = Path(args.record)
    data = read_json(path, "record file")
    if isinstance(data, list):
        if not args.instance:
            raise UsageError(f"{path} holds {len(data)} records: name one with --instance")
        found = [r for r in data if isinstance(r, dict) and r.get("instance") == args.instance]
        if not found:
            raise InputError(f"{path}: no record of instance {args.instance!r}")
        data = found[0]
    if not isinstance(data, dict) or not isinstance(data.get("instance"), str):
        raise InputError(f"{path}: not an instance record (no 'instance')")
    if args.instance and args.instance != data["instance"]:
        raise InputError(f"{path}: the record is of instance {data['instance']!r}, not {args.instance!r}")
    args.instance = data["instance"]
    kept = (data.get("extra") or {}).get("kept") or {}
    bases = (path.parent, path.parent.parent)  # records.json's folder, or records/<instance>.json's attempt
    for what in ("certificate", "proof"):
        info = kept.get(what)
        if not isinstance(info, dict) or "file" not in info:
            continue
        file = next((b / info["file"] for b in bases if (b / info["file"]).is_file()), None)
        if file is None:
            raise InputError(f"{path}: the kept {what} {info['file']} is not beside the record (looked in {bases[0]})")
        if _kept_digest(file) != info.get("sha256"):
            raise InputError(f"{file}: differs from the {what} the record was judged on (sha256 in extra.kept)")
        setattr(args, what, str(file))
    if not args.certificate:
        why = (kept.get("certificate") or {}).get("not_kept", "the run kept none (tcsexam run --keep)")
        raise InputError(f"{path}: instance {data['instance']!r}: no kept certificate to re-check: {why}")
    return data


def _kept_digest(file: Path) -> str:
    """sha256 of a kept file's content (a proof is kept gzip-compressed: its proof's)."""
    return hashlib.sha256(_maybe_gunzip(file.read_bytes(), file)).hexdigest()


def _maybe_gunzip(data: bytes, file: Path, cap: int | None = None) -> bytes:
    """`data` unpacked when it is gzip (magic 1f 8b; no DRAT proof starts so), at most `cap` bytes."""
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            out = fh.read(cap + 1 if cap is not None else -1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{file}: not a readable gzip file: {exc}") from None
    return out


def _same_instance(path: Path, record: dict) -> None:
    """The instance file must be the one the record was judged against (`extra.instance_sha256`)."""
    expected = (record.get("extra") or {}).get("instance_sha256")
    if expected and hashlib.sha256(Path(path).read_bytes()).hexdigest() != expected:
        raise InputError(
            f"{path}: differs from the instance file the record was judged against (extra.instance_sha256)"
        )


def _unsat_proof(args, problem, instance, result):
    """The check under the SAT rule of UNSAT answers (`tcsexam.runner.solver.drat.judge_unsat`): the
    task's `unsat_proof`, or `required` for `--problem sat --proof FILE`; (result, proof fields)."""
    if problem.name != "sat":
        if args.proof:
            raise UsageError("--proof applies to SAT certificates only")
        return result, None
    import tempfile

    from tcsexam.runner.solver import drat
    from tcsexam.tasks import load_task

    task = load_task(args.task) if args.task else None
    mode = task.unsat_proof if task is not None else (UnsatProof.REQUIRED if args.proof else None)
    limits = (task.proof_limits if task is not None else None) or drat.ProofLimits()
    proof = Path(args.proof).resolve() if args.proof else Path(tempfile.gettempdir()) / "tcsexam-no-proof" / "proof"
    with tempfile.TemporaryDirectory(prefix="tcsexam-check-") as scratch:
        if args.proof and proof.is_file():  # a kept proof is gzip-compressed: checked unpacked
            raw = proof.read_bytes()
            unpacked = _maybe_gunzip(raw, proof, limits.proof_mb * MiB)
            if unpacked is not raw:
                proof = Path(scratch) / "proof.drat"
                proof.write_bytes(unpacked)
        return drat.judge_unsat(
            result, mode, lambda: drat.check_proof(instance, proof, limits=limits, scratch=Path(scratch) / "s")
        )
