"""CLI: `tcsexam export RUN --output DIR [--format csv parquet eee]`."""

from __future__ import annotations

import argparse

from tcsexam.cliutil import command, key_value

#: what `--format` may ask for
EXPORT_FORMATS = ("csv", "parquet", "eee")
#: the instance table's file name (csv / parquet)
TABLE_NAME = "instances"


def register(subparsers) -> None:
    p = command(subparsers, "export", _export)
    p.add_argument("run", metavar="RUN", help="a scored run: results/<suite>/<protocol> (index.json, attempts.csv)")
    p.add_argument("--output", required=True, metavar="DIR", help="where the exported files go")
    p.add_argument(
        "--format",
        nargs="+",
        choices=EXPORT_FORMATS,
        default=["csv", "eee"],
        help="csv: the per-instance table DIR/instances.csv; parquet: the same as DIR/instances.parquet (needs "
        "pyarrow); eee: the Every Eval Ever datastore files DIR/data/... (default: csv eee)",
    )
    p.add_argument(
        "--model-id",
        nargs="+",
        default=[],
        metavar="NAME=DEVELOPER/MODEL",
        help="eee: a model's id (default: the Inspect model of its generation records, else unknown/NAME)",
    )
    p.add_argument("--organization", default="tcsexam", help="eee: source_organization_name (default tcsexam)")
    p.add_argument(
        "--relationship",
        default="third_party",
        choices=("first_party", "third_party", "collaborative", "other"),
        help="eee: evaluator_relationship (default third_party)",
    )
    p.add_argument(
        "--timestamp", metavar="EPOCH", help="eee: retrieved_timestamp (default: index.json's modification time)"
    )


def _export(args: argparse.Namespace) -> int:
    """write a run's results as a per-instance table (CSV, Parquet) and in the Every Eval Ever schema

    The table has one row per judged instance of a Solver attempt and one per attempt of the other tracks, with
    the attempt's row and its generation (tokens, cost, transcript). The Every Eval Ever files are, per model,
    an aggregate (Index, track and task means with their bootstrap intervals, judge and generation settings)
    and its per-instance records, checked against the schema before they are written (docs/export.md)."""
    from pathlib import Path

    from tcsexam.errors import InputError
    from tcsexam.export.table import load_run
    from tcsexam.fileio import atomic_write_bytes, atomic_write_text
    from tcsexam.logs import say_for

    say = say_for("export", "export")
    formats = list(dict.fromkeys(args.format))
    if "parquet" in formats:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(
                "--format parquet needs pyarrow, which is not installed here: pip install pyarrow (or use --format csv)"
            ) from None
    if args.timestamp is not None and not args.timestamp.isdigit():
        raise InputError(f"--timestamp {args.timestamp!r}: a Unix time in whole seconds, e.g. 1765000000")
    model_ids = dict(key_value(spec, "--model-id", "NAME=DEVELOPER/MODEL") for spec in args.model_id)
    run = load_run(args.run)
    out = Path(args.output)
    written: dict[Path, bytes] = {}  # everything is built (and checked) before anything is written
    if "csv" in formats or "parquet" in formats:
        import io

        from tcsexam.export.table import instance_frame

        df = instance_frame(run)
        if "csv" in formats:
            written[out / f"{TABLE_NAME}.csv"] = df.to_csv(index=False, lineterminator="\n").encode()
        if "parquet" in formats:
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            written[out / f"{TABLE_NAME}.parquet"] = buf.getvalue()
        say(f"{len(df)} instance rows of {len(run.rows)} attempts")
    if "eee" in formats:
        from tcsexam.export.eee import EEE_SCHEMA_RELEASE, export_eee

        files = export_eee(
            run,
            organization=args.organization,
            relationship=args.relationship,
            model_ids=model_ids,
            timestamp=args.timestamp,
        )
        for rel, text in files.items():
            written[out / rel] = text.encode()
        say(f"Every Eval Ever {EEE_SCHEMA_RELEASE}: {len(files)} files for {len(run.models())} models")
    for path, data in written.items():
        if path.suffix == ".parquet":
            atomic_write_bytes(path, data)
        else:
            atomic_write_text(path, data.decode())
    say(f"{len(written)} files -> {out}")
    return 0
