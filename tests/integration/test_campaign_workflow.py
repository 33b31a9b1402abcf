"""Campaigns through the real workflow (the tiny config): the online protocol from judged records,
and an offline campaign whose attempt is replaced after an infrastructure failure while another
is adopted provisionally. Each test works in a copy of the session's finished tiny run."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from test_workflow import CONFIG, OUT, copy_of_finished_run, index_of, snakemake, stop_ray_head

from tcsexam.records.digest import record_digest
from tcsexam.records.key import find_key

pytestmark = pytest.mark.slow
ONLINE_OUT = "results/test/lite/online"


def judged_records_of(ws: Path, dest: Path) -> Path:
    """The final judge's records of every attempt of the finished run, as an online campaign would
    deliver them (instance, status, A or solved, reward, and a field of the judge's own)."""
    for path in sorted((ws / OUT / "solver").glob("*/*/*/records.json")):
        model, task, attempt = path.parts[-4:-1]
        out = dest / model / task / attempt
        out.mkdir(parents=True)
        judged = []
        for r in json.loads(path.read_text()):
            rec = {"instance": r["instance"], "status": r["status"], "judge_wall_s": r.get("wall_s")}
            rec.update({k: r[k] for k in ("A", "solved", "reward") if r.get(k) is not None})
            judged.append(rec)
        (out / "records.json").write_text(json.dumps(judged))
        (out / "provenance.json").write_text(json.dumps({"judge": "session judge", "version": "1.0"}))
    return dest


def test_online_campaign_from_judged_records(finished_tiny_run, tmp_path):
    ws = copy_of_finished_run(finished_tiny_run, tmp_path / "ws")
    judged_records_of(ws, ws / "judged")
    proc = snakemake(
        ws, "--cores", "2", "--configfile", CONFIG, "--config", "protocol=online", "online_records_dir=judged"
    )
    assert "rule run:" not in proc.stderr and "localrule run:" not in proc.stderr  # no candidate ran
    online = json.loads((ws / ONLINE_OUT / "index.json").read_text())
    offline = index_of(ws)
    assert online["solver_protocol"] == "online" and online["status"] == "complete"
    for model, entry in offline["models"].items():  # the same outcomes give the same Index
        assert online["models"][model]["index"] == pytest.approx(entry["index"], rel=1e-12)
    table = list(csv.DictReader(open(ws / ONLINE_OUT / "attempts.csv")))
    assert {r["solver_protocol"] for r in table if r["track"] == "solver"} == {"online"}
    manifest = json.loads((ws / ONLINE_OUT / "manifest.json").read_text())
    source = manifest["candidates"]["demo-fast"]["sat-satlib"]["1"]["source"]
    assert source["origin"] == "online_input" and source["provenance"] == {"judge": "session judge", "version": "1.0"}
    assert source["input"] == "judged/demo-fast/sat-satlib/1/records.json"
    offline_manifest = json.loads((ws / OUT / "manifest.json").read_text())
    assert offline_manifest["candidates"]["demo-fast"]["sat-satlib"]["1"]["source"]["origin"] == "harness"

    # a missing instance and an infrastructure_error: incomplete, the issues name the instances
    weak = ws / "judged" / "demo-weak" / "tsp-tsplib" / "1" / "records.json"
    recs = json.loads(weak.read_text())
    missing = recs[-1]["instance"]
    weak.write_text(json.dumps(recs[:-1]))
    fast = ws / "judged" / "demo-fast" / "maxsat-wcnf" / "1" / "records.json"
    recs = json.loads(fast.read_text())
    recs[0] = {"instance": recs[0]["instance"], "status": "infrastructure_error", "message": "judge node lost"}
    fast.write_text(json.dumps(recs))
    snakemake(ws, "--cores", "2", "--configfile", CONFIG, "--config", "protocol=online", "online_records_dir=judged")
    index = json.loads((ws / ONLINE_OUT / "index.json").read_text())
    assert index["status"] == "incomplete"
    got = {(i["model"], i["item"], i["attempt"], i["instance"]) for m in index["models"].values() for i in m["issues"]}
    assert got == {("demo-weak", "tsp-tsplib", "1", missing), ("demo-fast", "maxsat-wcnf", "1", recs[0]["instance"])}

    # malformed input: one line before any job, naming the file and the entry
    fast.write_text(json.dumps([*recs, recs[1]]))
    proc = snakemake(
        ws, "-n", "--configfile", CONFIG, "--config", "protocol=online", "online_records_dir=judged", check=False
    )
    lines = [line for line in proc.stderr.splitlines() if line.startswith("tcsexam: error:")]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(lines) == 1 and "judged/demo-fast/maxsat-wcnf/1/records.json: entry 3" in lines[0], proc.stderr
    assert "duplicate" in lines[0]


def test_offline_campaign_replacement_and_provisional_adoption(finished_tiny_run, tmp_path):
    ws = copy_of_finished_run(finished_tiny_run, tmp_path / "ws")
    # attempt 1 of demo-weak coloring-dimacs loses an instance to a node failure
    base = ws / OUT / "solver/demo-weak/coloring-dimacs/1"
    victim = base / "records" / "queen5_5.json"
    rec = json.loads(victim.read_text())
    rec.update(status="infrastructure_error", A=None, reward=None, message="ray worker lost: node failure")
    rec["digest"] = record_digest(rec, find_key(victim))
    victim.write_text(json.dumps(rec))
    records = [rec if r["instance"] == "queen5_5" else r for r in json.loads((base / "records.json").read_text())]
    (base / "records.json").write_text(json.dumps(records))
    # ... and is rerun as attempt 2 (the same program); a theorem attempt is adopted provisionally
    shutil.copytree(ws / "solvers/demo-weak/coloring-dimacs/1", ws / "solvers/demo-weak/coloring-dimacs/2")
    (ws / "adoption.csv").write_text(
        "model,track,item,attempt,adoption_status,reason,replaces\n"
        "demo-weak,solver,coloring-dimacs,2,selected,node failure on attempt 1,1\n"
        "demo-fast,theorem,theorem-sum-odds-square,1,selected_provisional,checker release candidate,\n"
    )
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG, "--config", "adoption=adoption.csv")
    finally:
        stop_ray_head(ws)
    index = index_of(ws)
    baseline = index_of(finished_tiny_run)
    weak, fast = index["models"]["demo-weak"], index["models"]["demo-fast"]
    assert index["status"] == "provisional" and fast["status"] == "provisional" and weak["status"] == "complete"
    assert weak["index"] == baseline["models"]["demo-weak"]["index"]  # attempt 2 reproduces attempt 1's program
    assert fast["index"] == baseline["models"]["demo-fast"]["index"]
    assert weak["replacements"] == ["2 replaces 1: node failure on attempt 1"]
    assert [(e["item"], e["attempt"], e["reason"]) for e in weak["excluded"]] == [
        ("coloring-dimacs", "1", "replaced by 2: node failure on attempt 1")
    ]
    assert fast["provisional"] == [
        {"track": "theorem", "item": "theorem-sum-odds-square", "attempt": "1", "reason": "checker release candidate"}
    ]
    table = {(r["model"], r["item"], r["attempt"]): r for r in csv.DictReader(open(ws / OUT / "attempts.csv"))}
    old = table[("demo-weak", "coloring-dimacs", "1")]
    assert old["adoption_status"] == "excluded" and old["score_status"] == "judge_failed"
    assert table[("demo-weak", "coloring-dimacs", "2")]["replaces"] == "1"
    assert (ws / OUT / "solver/demo-weak/coloring-dimacs/2/records.json").is_file()  # its own job

    # a relative.json written before relative.json named its records' source is rebuilt
    rel = ws / OUT / "solver/demo-fast/sat-satlib/1/relative.json"
    data = json.loads(rel.read_text())
    del data["records_source"], data["digest"]
    rel.write_text(json.dumps({**data, "digest": record_digest(data, find_key(rel))}))
    proc = snakemake(ws, "-n", "--configfile", CONFIG, "--config", "adoption=adoption.csv")
    assert f"{OUT}/solver/demo-fast/sat-satlib/1/relative.json: made before relative.json said where" in proc.stderr

    # adopting both attempts is one line before any job
    (ws / "adoption.csv").write_text(
        "model,track,item,attempt,adoption_status,reason,replaces\n"
        "demo-weak,solver,coloring-dimacs,2,selected,second try,\n"
    )
    proc = snakemake(ws, "-n", "--configfile", CONFIG, "--config", "adoption=adoption.csv", check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "adoption.csv: row 1: model 'demo-weak' task 'coloring-dimacs' would have 2 adopted attempts" in proc.stderr
