"""The workflow soak's comparison (benchmarks/soak_workflows.py, issue 32.3) sees every difference
that matters and none that does not: a record's status or A, a relative score, a verdict, a row's
score, the Index and a missing or extra record differ; wall times, digests, sandbox details and
Snakemake's own folders do not. The soak itself (three workflows at once, minutes on 2 cores) is
run by hand: `python benchmarks/soak_workflows.py`."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("soak_workflows", ROOT / "benchmarks" / "soak_workflows.py")
soak = importlib.util.module_from_spec(spec)
spec.loader.exec_module(soak)

RUN = "soak/offline"
FILES = {
    f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json": {
        "instance": "G11",
        "status": "ok",
        "A": 556.0,
        "claimed": 556.0,
        "solved": None,
        "reward": 0.98,
        "wall_s": 2.07,
        "digest": "hmac:1",
        "extra": {"sandbox_info": {"executable": "/usr/bin/bwrap"}},
    },
    f"{RUN}/solver/demo-fast/maxcut-mqlib/1/relative.json": {"relative_score": 0.49, "digest": "hmac:2"},
    f"{RUN}/proof/demo-fast/theorem-sum-odds-square/1/verdict.json": {
        "status": "complete",
        "complete": True,
        "resolution": "proof",
        "wall_s": 6.0,
    },
    f"{RUN}/proof/demo-fast/theorem-sum-odds-square/1/row.json": {
        "score": 1.0,
        "score_status": "valid",
        "adoption_status": "selected",
        "digest": "hmac:3",
    },
    f"{RUN}/index.json": {
        "status": "complete",
        "generated": "now",
        "models": {"demo-fast": {"status": "complete", "index": 62.8, "track_means": {"solver": 0.5}}},
    },
    f"{RUN}/.checksums/index.json": {"x": 1},
    f"{RUN}/solver/demo-fast/maxcut-mqlib/1/heartbeat.json": {"time": 1},
}


def _tree(root: Path, files: dict) -> Path:
    for rel, data in files.items():
        path = root / "results" / "soak" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
    return root


def test_load_independent_fields_compare_equal(tmp_path):
    alone = soak.fingerprint(_tree(tmp_path / "a", FILES))
    noisy = copy.deepcopy(FILES)
    for data in noisy.values():
        for key in ("wall_s", "digest", "generated", "time", "x"):
            if key in data:
                data[key] = "other"
    noisy[f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json"]["extra"] = {}
    assert soak.differences(alone, soak.fingerprint(_tree(tmp_path / "b", noisy))) == []
    assert soak.counts(alone) == {"instance_records": 1, "verdicts": 1, "relative_scores": 1, "rows": 1, "index": 1}


def test_every_scored_difference_is_reported(tmp_path):
    alone = soak.fingerprint(_tree(tmp_path / "a", FILES))
    changes = [
        (f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json", "status", "crash"),
        (f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json", "A", 555.0),
        (f"{RUN}/solver/demo-fast/maxcut-mqlib/1/relative.json", "relative_score", 0.48),
        (f"{RUN}/proof/demo-fast/theorem-sum-odds-square/1/verdict.json", "status", "incomplete"),
        (f"{RUN}/proof/demo-fast/theorem-sum-odds-square/1/row.json", "score", 0.0),
        (f"{RUN}/index.json", "status", "incomplete"),
    ]
    for k, (rel, key, value) in enumerate(changes):
        files = copy.deepcopy(FILES)
        files[rel][key] = value
        diff = soak.differences(alone, soak.fingerprint(_tree(tmp_path / f"c{k}", files)))
        assert len(diff) == 1 and diff[0].startswith(rel), (rel, key, diff)
    files = copy.deepcopy(FILES)
    del files[f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json"]
    files[f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G14.json"] = dict(FILES[next(iter(FILES))], instance="G14")
    diff = soak.differences(alone, soak.fingerprint(_tree(tmp_path / "m", files)))
    assert sorted(d.split(": ", 1)[1] for d in diff) == ["not in the run alone", "only in the run alone"], diff
    infra = copy.deepcopy(FILES)
    infra[f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json"]["status"] = "infrastructure_error"
    assert soak.infrastructure_errors(soak.fingerprint(_tree(tmp_path / "i", infra))) == [
        f"{RUN}/solver/demo-fast/maxcut-mqlib/1/records/G11.json"
    ]


def test_soak_config_is_a_valid_smaller_suite_of_the_tiny_config(tmp_path):
    from tcsexam.suites import load_suite

    config, suite = soak.soak_config(per_track=1, solver_tasks=2)
    assert [len(items) for items in suite["tracks"].values()] == [1, 2, 1, 1]
    assert set(config["run"]["task_files"]) == set(suite["tracks"]["solver"])  # every instance: scored
    assert "instances" not in config["run"]
    path = tmp_path / "soak.yaml"
    path.write_text(yaml.safe_dump(suite))
    loaded = load_suite(path)
    assert loaded.tracks["solver"] == ("maxcut-mqlib", "sat-satlib")
