"""Cost as an axis: generation.csv (tcsexam attempts generation) and index.json's cost sections
(tcsexam score --generation). Missing data is said, never read as free; no score changes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tcsexam.agents.accounting import GenerationRecord, StopReason, write_generation
from tcsexam.cli import main
from tcsexam.scoring.cost import SOLVED_AT, pareto_front
from tcsexam.scoring.generation import CostMissing, read_generation_table
from tcsexam.suites import TRACKS


def _record(item: str, *, cost: float | None, tokens=(1000, 200), checks=2, run_dir: Path | None = None):
    return GenerationRecord(
        workspace_id=item,
        mode=None,
        model={"name": "m"},
        stop_reason=StopReason.SUBMITTED,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        total_tokens=sum(tokens),
        cost_usd=cost,
        prices_per_mtok=None if cost is None else [1.0, 2.0],
        wall_time_s=10.0,
        working_time_s=8.0,
        turns=3,
        tool_calls=checks + 1,
        tool_calls_by_name={"bash": 1, "check_proof": checks},
        model_calls=3,
        log_file="logs/run.eval",
        sample_uuid=f"uuid-{item}",
        run_dir=str(run_dir) if run_dir else None,
    )


def _tables(h, tmp_path, lite, models, records):
    """attempts.csv (the spec's example per model), cohort.json and solvers/<model>/<item>/1/generation.json
    for `records` ((model, item) -> GenerationRecord)."""
    rows = [r for m in models for r in h.example_rows(lite, model=m)]
    attempts = h.write_csv(tmp_path / "attempts.csv", rows)
    cohort = h.write_json(tmp_path / "cohort.json", h.cohort_dict(models={m: {"attempts_per_task": 1} for m in models}))
    for (model, item), record in records.items():
        folder = tmp_path / "solvers" / model / item / "1"
        folder.mkdir(parents=True)
        write_generation(folder / "generation.json", record)
    return attempts, cohort


def _generation(tmp_path, attempts) -> Path:
    out = tmp_path / "generation.csv"
    argv = ["attempts", "generation", "--attempts", str(attempts), "--solvers-dir", str(tmp_path / "solvers")]
    assert main([*argv, "--output", str(out)]) == 0
    return out


def _score(tmp_path, attempts, cohort, name, generation=None):
    out = tmp_path / name
    argv = ["score", "--suite", "lite", "--attempts", str(attempts), "--cohort", str(cohort), "--output", str(out)]
    argv += ["--bootstrap-resamples", "50"]
    if generation is not None:
        argv += ["--generation", str(generation)]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_generation_table_says_what_is_missing(h, tmp_path, lite):
    items = [item for track in lite.tracks.values() for item in track]
    records = {
        ("a", items[0]): _record(items[0], cost=0.5, run_dir=tmp_path / "run"),
        ("a", items[1]): _record(items[1], cost=None),
    }
    attempts, _ = _tables(h, tmp_path, lite, ["a"], records)
    out = _generation(tmp_path, attempts)
    entries = {e.item: e for e in read_generation_table(out)}
    assert len(entries) == len(items)
    first, second, third = entries[items[0]], entries[items[1]], entries[items[2]]
    assert first.recorded and first.cost_usd == 0.5 and first.cost_missing is None
    assert (first.input_tokens, first.output_tokens, first.feedback_calls, first.tool_calls) == (1000, 200, 2, 3)
    assert first.transcript == str(tmp_path / "run" / "logs" / "run.eval") and first.sample_uuid == f"uuid-{items[0]}"
    assert second.recorded and second.cost_usd is None and second.cost_missing == CostMissing.UNPRICED
    assert second.transcript == ""  # the record does not say where its run was
    assert not third.recorded and third.cost_missing == CostMissing.NO_GENERATION
    assert third.input_tokens is None and third.cost_usd is None  # unknown, not 0
    with open(out, newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["item"] == items[2])
    assert row["cost_usd"] == "" and row["input_tokens"] == "" and row["generation"] == "none"


def test_index_cost_section_totals_per_track_and_pareto(h, tmp_path, lite):
    items = [item for track in lite.tracks.values() for item in track]
    records = {}
    for k, item in enumerate(items):
        records[("cheap", item)] = _record(item, cost=0.01, checks=k % 2)
        records[("dear", item)] = _record(item, cost=0.10)
        if k:  # the first attempt of `partial` has no record; the others are unpriced
            records[("partial", item)] = _record(item, cost=None)
    attempts, cohort = _tables(h, tmp_path, lite, ["cheap", "dear", "partial"], records)
    plain = _score(tmp_path, attempts, cohort, "plain.json")
    data = _score(tmp_path, attempts, cohort, "index.json", _generation(tmp_path, attempts))

    # cost is added, nothing else changes
    stripped = {k: v for k, v in data.items() if k != "cost"}
    stripped["models"] = {m: {k: v for k, v in d.items() if k != "cost"} for m, d in data["models"].items()}
    assert json.dumps(stripped, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert "cost" not in plain and all("cost" not in m for m in plain["models"].values())

    cheap = data["models"]["cheap"]["cost"]
    n = len(items)
    assert (cheap["attempts"], cheap["recorded"], cheap["priced"]) == (n, n, n)
    assert cheap["cost_usd"] == pytest.approx(0.01 * n) and cheap["cost_missing"] is None
    assert (cheap["input_tokens"], cheap["output_tokens"], cheap["total_tokens"]) == (1000 * n, 200 * n, 1200 * n)
    assert cheap["feedback_calls"] == sum(k % 2 for k in range(n)) and cheap["wall_time_s"] == pytest.approx(10.0 * n)
    # the spec's example: theorem 1,1,0,0,0; solver 0.25 (below the reference's mean); construction 1.2; open 0
    solved = {"theorem": 2, "solver": 0, "construction": len(lite.tracks["construction"]), "open_conjecture": 0}
    assert cheap["solved_items"] == sum(solved.values()) and cheap["items"] == n
    assert cheap["cost_per_solved_item"] == pytest.approx(0.01 * n / sum(solved.values()))
    for track, count in solved.items():
        section = cheap["tracks"][track]
        assert section["solved_items"] == count and section["attempts"] == len(lite.tracks[track])
        assert section["cost_usd"] == pytest.approx(0.01 * len(lite.tracks[track]))
    assert cheap["tracks"]["solver"]["cost_per_solved_item"] is None  # nothing solved: no quotient

    partial = data["models"]["partial"]["cost"]
    assert partial["cost_usd"] is None and partial["cost_per_solved_item"] is None  # never free
    assert partial["cost_missing"] == {"no_generation": 1, "unpriced": n - 1}
    assert partial["cost_usd_known"] == 0 and partial["input_tokens"] is None
    assert (partial["recorded"], partial["priced"]) == (n - 1, 0)
    assert partial["tracks"]["solver"]["input_tokens"] == 1000 * len(lite.tracks["solver"])  # that track is recorded

    assert data["cost"]["pareto_front"] == ["cheap"]  # same Index, lower cost; partial has no cost
    assert data["cost"]["solved_at"] == {"theorem": 1.0, "solver": 0.5, "construction": 1.0, "open_conjecture": 1.0}


def test_every_track_has_a_solved_bar():
    assert set(SOLVED_AT) == set(TRACKS)


def test_pareto_front():
    points = {
        "a": (50.0, 1.0),
        "b": (60.0, 2.0),
        "c": (55.0, 3.0),
        "d": (None, 0.1),
        "e": (70.0, None),
        "f": (60.0, 2.0),
    }
    assert pareto_front(points) == ["a", "b", "f"]  # c is beaten by b; ties stay; d and e lack a coordinate
    assert pareto_front({}) == []


def test_bad_record_and_stale_table_are_refused(h, tmp_path, lite, capsys):
    items = [item for track in lite.tracks.values() for item in track]
    attempts, cohort = _tables(h, tmp_path, lite, ["a"], {("a", items[0]): _record(items[0], cost=1.0)})
    bad = tmp_path / "solvers" / "a" / items[0] / "1" / "generation.json"
    data = json.loads(bad.read_text())
    bad.write_text(json.dumps({**data, "cost_usd": -1}))
    out = tmp_path / "generation.csv"
    argv = ["attempts", "generation", "--attempts", str(attempts), "--solvers-dir", str(tmp_path / "solvers")]
    assert main([*argv, "--output", str(out)]) != 0
    assert "cost_usd must be a non-negative number" in capsys.readouterr().err and not out.exists()

    bad.write_text(json.dumps(data))
    generation = _generation(tmp_path, attempts)
    lines = generation.read_text().splitlines()
    generation.write_text("\n".join(lines[:-1]) + "\n")  # an adopted attempt left out: stale
    index = tmp_path / "index.json"
    argv = ["score", "--suite", "lite", "--attempts", str(attempts), "--cohort", str(cohort), "--output", str(index)]
    assert main([*argv, "--generation", str(generation), "--bootstrap-resamples", "0"]) != 0
    assert "generation table is stale" in capsys.readouterr().err and not index.exists()


def test_a_record_names_its_run_folder_so_the_transcript_can_be_found(tmp_path):
    from inspect_ai.log import EvalSample

    from tcsexam.agents.providers import ModelConfig

    run_dir = tmp_path / "run"
    sample = EvalSample(
        id="theorem-x",
        epoch=1,
        input="x",
        target="",
        metadata={"incoming_dir": str(run_dir / ".incoming" / "theorem-x")},
    )
    record = GenerationRecord.from_sample(sample, ModelConfig(model="openai/gpt-x"), log_file="logs/a.eval")
    assert record.run_dir == str(run_dir) and record.log_file == "logs/a.eval"
    bare = GenerationRecord.from_sample(
        EvalSample(id="y", epoch=1, input="x", target=""), ModelConfig(model="openai/m")
    )
    assert bare.run_dir is None  # no metadata: not guessed
