"""The explorer links each OR-Space sample an agent generated to its generation record and its
transcript (the workflow's <run>/<condition>/generation/, docs/agents.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalSample, EvalSampleLimit

from tcsexam.agents.accounting import GenerationRecord, write_generation
from tcsexam.agents.providers import ModelConfig
from tcsexam.errors import InputError
from tcsexam.view.collect import collect_run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tinyrun import make_orspace  # noqa: E402


def add_generation(orspace: Path, wid: str, log_name: str | None) -> Path:
    gen = orspace / "tiny-orspace" / "revise-all_filesystem_both" / "generation"
    sample = EvalSample(
        id=wid,
        epoch=1,
        input="x",
        target="",
        metadata={"workspace_id": wid, "mode": "build"},
        limit=EvalSampleLimit(type="message", limit=40),
        uuid="u-123",
    )
    record = GenerationRecord.from_sample(sample, ModelConfig(model="openai/gpt-4o", name="gpt"), (1.0, 2.0))
    if log_name:
        (gen / "logs").mkdir(parents=True, exist_ok=True)
        (gen / "logs" / log_name).write_bytes(b"PK")
        record.log_file = f"logs/{log_name}"
    write_generation(gen / "samples" / wid / "generation.json", record)
    return gen


def test_a_generated_row_links_its_record_and_transcript(tmp_path, tiny_runs):
    orspace = make_orspace(tmp_path / "orspace")
    gen = add_generation(orspace, "ws-build-001", "2026-build.eval")
    site = tmp_path / "site"
    data = collect_run(tiny_runs[0], site, orspace_dir=orspace)
    rows = {r["workspace_id"]: r for r in next(d for d in data.orspace if d["kind"] == "objectives")["rows"]}
    built = rows["ws-build-001"]
    assert built["generation"]["stop_reason"] == "message_limit" and built["generation"]["final"] is True
    assert built["generation"]["model"] == "gpt" and built["generation"]["sample_uuid"] == "u-123"
    links = built["generation_links"]
    assert (site / links["transcript"]).resolve() == (gen / "logs" / "2026-build.eval").resolve()
    assert (site / links["generation.json"]).resolve() == (
        gen / "samples" / "ws-build-001" / "generation.json"
    ).resolve()
    # a row no agent generated stays as it was
    assert "generation" not in rows["ws-revise-002"]


def test_a_record_without_its_log_links_the_record_only(tmp_path, tiny_runs):
    orspace = make_orspace(tmp_path / "orspace")
    add_generation(orspace, "ws-build-001", None)
    data = collect_run(tiny_runs[0], tmp_path / "site", orspace_dir=orspace)
    row = next(d for d in data.orspace if d["kind"] == "objectives")["rows"][0]
    assert set(row["generation_links"]) == {"generation.json"}


def test_a_damaged_record_is_one_clear_error(tmp_path, tiny_runs):
    orspace = make_orspace(tmp_path / "orspace")
    gen = add_generation(orspace, "ws-build-001", None)
    (gen / "samples" / "ws-build-001" / "generation.json").write_text(json.dumps([1, 2]))
    with pytest.raises(InputError, match="generation.json: a generation record must be a JSON object"):
        collect_run(tiny_runs[0], tmp_path / "site", orspace_dir=orspace)
