"""compare's machine_speed section: the speed ratio and anytime tasks at speed-equivalent limits."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from tcsexam.reproduce.compare_speed import machine_speed, speed_lines
from tcsexam.runner.observers import calibrate


def _cal(speed):
    return {
        "version": calibrate.VERSION,
        "python_s": 0.04,
        "numpy_s": 0.04,
        "python_speed": speed,
        "numpy_speed": speed,
        "speed": speed,
    }


REF = {"a": [10, 12, 14], "b": [10, 12, 14], "c": [10, 12, 14], "d": [10, 12, 14]}


def _run_dir(root: Path, speed: float, records, ref_path: Path, sealed: bool = False) -> SimpleNamespace:
    d = root / "solver" / "m" / "t" / "1"
    d.mkdir(parents=True)
    if sealed:  # as `tcsexam run` writes them: each record's digest under the key in its job's folder
        from tcsexam.records import InstanceRecord
        from tcsexam.records.key import ensure_key

        key = ensure_key(d)
        records = [InstanceRecord.from_dict(r).to_dict(key) for r in records]
    (d / "records.json").write_text(json.dumps(records))
    manifest = {
        "calibration": {"summary": _cal(speed)},
        "tasks": {"t": {"limits": {"wall_s": 10}}},
        "sources": {"reference": str(ref_path)},
    }
    return SimpleNamespace(path=root, manifest=manifest, suite="lite")


def test_compare_at_speed_equivalent_limits(h, tmp_path):
    ref_path = h.write_json(tmp_path / "ref.json", h.reference_dict(tasks={"t": ("objective", "maximize", REF)}))
    # both find 12 at 4 s; the candidate (twice as fast a machine) then reaches 14 at 8 s
    base = [{"instance": n, "status": "timeout", "wall_s": 10.01, "trace": [[4.0, "ok", 12]]} for n in REF]
    cand = [dict(r, trace=[[2.0, "ok", 12], [8.0, "ok", 14]]) for r in base]
    b = _run_dir(tmp_path / "b", 1.0, base, ref_path)
    c = _run_dir(tmp_path / "c", 2.0, cand, ref_path)
    flagged = [{"model": "m", "level": "task", "name": "t"}]
    out = machine_speed(b, c, flagged, seed=1, resamples=200)
    assert out["ratio"] == 2.0 and out["parts"] == {"python": 2.0, "numpy": 2.0}
    (entry,) = out["anytime_tasks"]
    assert (entry["baseline_at_s"], entry["candidate_at_s"]) == (10.0, 5.0)
    assert entry["delta"] == 0.0 and not entry["differs"] and entry["disappears"]
    assert "disappears" in "\n".join(speed_lines(out))
    # slower candidate: the baseline is scored at L * ratio instead
    out = machine_speed(c, b, [], seed=1, resamples=200)
    (entry,) = out["anytime_tasks"]
    assert (entry["baseline_at_s"], entry["candidate_at_s"]) == (5.0, 10.0) and entry["delta"] == 0.0


def test_compare_without_calibration_says_so(tmp_path):
    run = SimpleNamespace(path=tmp_path, manifest={}, suite="lite")
    out = machine_speed(run, run, [], seed=1, resamples=10)
    assert out["ratio"] is None and "no comparable machine calibration" in speed_lines(out)[0]


def test_speed_equivalent_limits_read_sealed_records_from_any_folder(h, tmp_path, monkeypatch):
    """A real run's records carry digests checked with the key beside them: the comparison finds
    it from the records file, wherever compare runs."""
    ref_path = h.write_json(tmp_path / "ref.json", h.reference_dict(tasks={"t": ("objective", "maximize", REF)}))
    base = [{"instance": n, "status": "timeout", "wall_s": 10.01, "trace": [[4.0, "ok", 12]]} for n in REF]
    cand = [dict(r, trace=[[2.0, "ok", 12], [8.0, "ok", 14]]) for r in base]
    b = _run_dir(tmp_path / "b", 1.0, base, ref_path, sealed=True)
    c = _run_dir(tmp_path / "c", 2.0, cand, ref_path, sealed=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (entry,) = machine_speed(b, c, [], seed=1, resamples=200)["anytime_tasks"]
    assert (entry["baseline_at_s"], entry["candidate_at_s"]) == (10.0, 5.0) and entry["delta"] == 0.0
