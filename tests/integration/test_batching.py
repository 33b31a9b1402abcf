"""Few, long cluster jobs (config `batch`, tcsexam.workflow.batching) on the tiny config, locally:
the Solver runs, construction runs and proof checks, run again in two batches of about equal
length (sized by the finished run's own timings), give the very Index of the unbatched run, each
member's files where its own rule puts them and nothing staged left behind. Local, because what is
under test is the batching, not SLURM (tests/integration/test_slurm_cluster.py runs it there)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from test_workflow import CONFIG, OUT, copy_of_finished_run, index_of, snakemake

pytestmark = pytest.mark.slow

KINDS = ("solver", "construction", "proof")


def test_batched_run_gives_the_unbatched_index(finished_tiny_run, tmp_path):
    ws = copy_of_finished_run(finished_tiny_run, tmp_path / "ws")
    shutil.copytree(ws / "results", ws / "timings", symlinks=True)  # an earlier run's timings
    before = {
        kind: sorted(p.relative_to(ws / OUT) for p in (ws / OUT / kind).rglob("*") if p.is_file()) for kind in KINDS
    }
    for kind in KINDS:
        shutil.rmtree(ws / OUT / kind)  # every cluster job's folder, records included: all run again
    proc = snakemake(
        ws,
        "--cores",
        "2",
        "--configfile",
        CONFIG,
        "--config",
        "batch={enabled: true, target_min: 30, min_batches: 2, timings: [timings]}",
        timeout=1200,
    )
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", proc.stderr, re.MULTILINE))  # Snakemake's job stats
    assert counts.get("run_batch") == "2", proc.stderr[-3000:]
    assert "run" not in counts and "proof_check" not in counts and "construction_run" not in counts
    assert index_of(ws) == index_of(finished_tiny_run)
    summaries = sorted((ws / OUT / "batches").glob("*.json"))
    members = [m for s in summaries for m in json.loads(s.read_text())["members"]]
    assert len(summaries) == 2 and len(members) == 40 and {m["status"] for m in members} == {"ok"}
    # each member's files (records, certificates, logs) where its own rule's job leaves them
    for kind in KINDS:
        after = sorted(p.relative_to(ws / OUT) for p in (ws / OUT / kind).rglob("*") if p.is_file())
        assert not [p for p in after if p.name.endswith((".staged", ".partial"))]
        missing = set(before[kind]) - set(after)
        assert not {p for p in missing if p.name != "benchmark.tsv"}, sorted(missing)[:5]
