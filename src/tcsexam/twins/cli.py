"""CLI: `tcsexam twins make|translate` and `tcsexam scan-candidate` (docs/twins.md)."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import actions, command
from tcsexam.cliutil import write_json as _write


def register(subparsers) -> None:
    sub = actions(subparsers, "twins", "twins_command", help="value-preserving twins of a Solver task's instances")
    m = command(sub, "make", _make)
    m.add_argument("--task", required=True, help="task id (config/tasks/<task>.yaml) or a task file")
    m.add_argument("--seed", required=True, type=int, help="the twin set's seed (non-negative)")
    m.add_argument("--output", required=True, help="the folder to write (replaced if it exists)")
    m.add_argument(
        "--reference",
        default="full",
        help="the reference whose outcomes carry over: lite, full (default) or a path; 'none' for no reference",
    )
    t = command(sub, "translate", _translate)
    t.add_argument("--map", required=True, help="the twin set's map.json")
    t.add_argument("--instance", required=True, help="the twin instance's name")
    t.add_argument("--certificate", required=True, help="a certificate written for the twin")
    t.add_argument("--output", required=True, help="where to write the certificate for the original")

    s = command(subparsers, "scan-candidate", _scan)
    s.add_argument("folder", metavar="DIR", help="the candidate folder (its files are read, never run)")
    s.add_argument("--task", required=True, help="task id or task file: its instances, names and best values")
    s.add_argument("--reference", default="full", help="reference whose outcomes are looked for too (default full)")
    s.add_argument("--output", help="write the report (JSON) here; else a summary on stdout")
    s.add_argument("--json", action="store_true", help="print the whole report as JSON")


def _make(args: argparse.Namespace) -> int:
    """write a twin of every instance of a Solver task (relabelled, byte-different, same value)

    Each problem module's value-preserving transformation (docs/twins.md), the task file of the twin
    set, the reference carried over exactly (id suffixed -twin-s<seed>) and the map back to the
    originals."""
    from tcsexam.twins.make import make_twins

    reference = None if args.reference.lower() == "none" else args.reference
    summary = make_twins(args.task, args.seed, args.output, reference)
    ref = f", reference {summary['reference_id']}" if "reference_id" in summary else ""
    print(f"{summary['task']}: {summary['instances']} twin(s), seed {summary['seed']}{ref} -> {args.output}")
    return 0


def _translate(args: argparse.Namespace) -> int:
    """a certificate on a twin as a certificate on its original instance (value unchanged)"""
    from tcsexam.errors import InputError
    from tcsexam.fileio import atomic_write_bytes
    from tcsexam.problems import get_problem
    from tcsexam.problems.base import Twinnable
    from tcsexam.twins.make import load_map

    doc = load_map(args.map)
    entry = doc["instances"].get(args.instance)
    if entry is None:
        raise InputError(f"{args.map}: no twin instance {args.instance!r}")
    try:
        with open(args.certificate, "rb") as fh:
            cert = fh.read()
    except OSError as exc:
        raise InputError(f"{args.certificate}: cannot read the certificate: {exc.strerror or exc}") from None
    problem = get_problem(doc["problem"])
    if not isinstance(problem, Twinnable):
        raise InputError(f"{args.map}: problem {doc['problem']!r} has no twins (only the Solver problems do)")
    out = problem.translate_certificate(entry["map"], cert)
    atomic_write_bytes(args.output, out)
    print(f"{args.instance} -> {entry['original']}: {args.output}")
    return 0


def _scan(args: argparse.Namespace) -> int:
    """look for memorised answers in a candidate's files (never runs it; findings are evidence)

    Instance names and content hashes in the code, published best values and reference outcomes
    as literals, tables keyed by instance size, certificate-shaped literals, encoded blobs; each
    finding with its file and line. Exit 0 whatever is found."""
    import json

    from tcsexam.twins.scan import scan_candidate

    report = scan_candidate(args.folder, args.task, args.reference)
    if args.output:
        _write(args.output, report)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for f in report["findings"][:20]:
        print(f"{f['file']}:{f['line'] or '-'}: {f['kind']}: {f['detail']}")
    more = len(report["findings"]) - 20
    if more > 0:
        print(f"... {more} more")
    counts = ", ".join(f"{k} {v}" for k, v in report["summary"].items()) or "nothing found"
    print(f"{report['task']}: {report['files_scanned']} file(s) of {args.folder} scanned: {counts}")
    return 0
