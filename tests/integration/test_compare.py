"""Reproducing a run: manifest.json, `tcsexam compare` and its verdicts on real workflow runs of the
tiny config (config/test/config.yaml: demo-fast and demo-weak, two instances per Lite Solver task).

One baseline run (module fixture) and one independent rerun in a fresh workspace; the other cases
copy the baseline workspace (results included), change one input and let the workflow rerun what
depends on it, or copy the finished run directory and edit it where that tests the same logic:

- rerun of the deterministic demo models          -> identical (exit 0), no input differs
- demo-fast's MaxCut candidate weakened          -> differs on demo-fast / maxcut-mqlib only (exit 3),
                                                    `candidates` names it
- sat-satlib's wall-clock limit changed          -> incomparable, naming the limits (exit 4)
- another reference (new id, other values)       -> incomparable, naming the reference
- an instance file replaced                      -> incomparable, naming the instance
- symmetric anytime-like noise on two instances  -> reproduced (exit 0)
- demo-strong (anytime) run twice                -> identical / reproduced, or differs on its anytime tasks
                                                    only when the machine load moved every value one way
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tcsexam.records.digest import record_digest
from tcsexam.records.key import find_key

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_workflow import (  # noqa: E402
    BIN,
    CONFIG,
    OUT,
    ROOT,
    _env,
    copy_of_finished_run,
    make_workspace,
    snakemake,
    stop_ray_head,
)

pytestmark = pytest.mark.slow
TCSEXAM = str(BIN / "tcsexam")


def run_workflow(ws: Path, *extra: str) -> None:
    """The tiny config; extra config files go after it (--configfile takes several), then options."""
    files = [e for e in extra if e.endswith(".yaml")]
    options = [e for e in extra if not e.endswith(".yaml")]
    try:
        snakemake(ws, "--cores", "2", "--configfile", CONFIG, *files, *options)
    finally:
        stop_ray_head(ws)


def tcsexam(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TCSEXAM, *args], cwd=ws, env=_env(ws), capture_output=True, text=True, timeout=300)


def compare(ws: Path, baseline: Path, candidate: Path, out: Path) -> tuple[int, dict]:
    proc = tcsexam(ws, "compare", str(baseline), str(candidate), "--output", str(out), "--resamples", "2000")
    assert proc.returncode in (0, 3, 4), proc.stderr
    return proc.returncode, json.loads(out.read_text())


def copy_workspace(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".ray-head"))
    return dest


@pytest.fixture(scope="module")
def baseline(finished_tiny_run, tmp_path_factory) -> Path:
    return copy_of_finished_run(finished_tiny_run, tmp_path_factory.mktemp("cmp-baseline") / "ws")


@pytest.fixture(scope="module")
def rerun(tmp_path_factory) -> Path:
    ws = make_workspace(tmp_path_factory.mktemp("cmp-rerun") / "ws")
    run_workflow(ws)
    return ws


def test_manifest_is_written_and_rebuilt(baseline, tmp_path):
    path = baseline / OUT / "manifest.json"
    manifest = json.loads(path.read_text())
    assert manifest["schema_version"] == 1
    assert list(manifest)[:8] == [
        "schema_version",
        "run",
        "tcsexam",
        "software",
        "machine",
        "execution",
        "reference",
        "tasks",
    ]
    assert manifest["reference"]["id"] == "tcsexam-test-k3-v2"
    assert manifest["reference"]["sha256"] == _sha256(baseline / "config/test/reference.json")
    for pkg in ("python", "numpy", "scipy", "ray", "snakemake", "python-sat"):
        assert manifest["software"][pkg]
    assert manifest["machine"]["cores"] >= 1 and manifest["machine"]["kernel"]
    used = {
        r["sandbox"] for f in (baseline / OUT / "solver").glob("*/*/*/records.json") for r in json.loads(f.read_text())
    }
    assert manifest["execution"]["sandboxes"] == sorted(used) and manifest["execution"]["limiters"]  # `auto` chose them
    maxcut = manifest["tasks"]["maxcut-mqlib"]
    assert maxcut["limits"]["wall_s"] == 60 and sorted(maxcut["instances"]) == ["G11", "G14"]
    assert maxcut["instances"]["G11"] == _sha256(baseline / "references/instances/maxcut-mqlib/G11.txt")
    entry = manifest["candidates"]["demo-weak"]["tsp-tsplib"]["1"]
    assert entry["statuses"] == {"certificate_failed": 2} and entry["hash_source"] == "records"
    records = json.loads((baseline / OUT / "solver/demo-weak/tsp-tsplib/1/records.json").read_text())
    assert entry["candidate_hash"] == records[0]["candidate_hash"]
    assert entry["solver_wall_s"] > 0
    jobs = list((baseline / OUT / "solver").glob("*/*/*/records.json"))  # every Solver job measured its machine
    assert manifest["calibration"]["summary"]["jobs"] == len(jobs) and manifest["calibration"]["summary"]["speed"] > 0
    proof = manifest["proofs"]["demo-fast"]["theorem-sum-odds-square"]["1"]  # checked by Coq in the run
    assert proof["status"] == "complete" and proof["checker"] == "coq" and proof["axioms"] == []
    assert proof["proof_sha256"] == _sha256(baseline / "solvers/demo-fast/theorem-sum-odds-square/1/proof.v")
    # rebuilt from the finished run: the same bytes
    proc = tcsexam(baseline, "manifest", OUT, "--output", str(tmp_path / "m.json"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "m.json").read_text() == path.read_text()


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_index_json_has_intervals_beside_the_spec_fields(baseline):
    index = json.loads((baseline / OUT / "index.json").read_text())
    for model in index["models"].values():
        lo, hi = model["index_ci95"]
        assert lo <= model["index"] <= hi
        assert set(model["track_ci95"]) == {"theorem", "solver", "construction", "open_conjecture"}
    assert index["bootstrap"]["resamples"] == 10000


def test_rerun_of_the_deterministic_models_is_identical(baseline, rerun, tmp_path):
    rc, result = compare(baseline, baseline / OUT, rerun / OUT, tmp_path / "c.json")
    assert result["verdict"] == "identical" and rc == 0
    assert result["inputs"]["differ"] == [], result["inputs"]
    for model in result["models"].values():
        assert model["index"]["delta"] == 0.0 and model["index"]["ci95"] == [0.0, 0.0]


def test_weakened_candidate_differs_on_its_task_only(baseline, tmp_path):
    ws = copy_workspace(baseline, tmp_path / "ws")
    solve = ws / "solvers/demo-fast/maxcut-mqlib/1/solve.py"
    text = solve.read_text()
    assert "MAX_ITERATIONS = 30000" in text
    solve.write_text(text.replace("MAX_ITERATIONS = 30000", "MAX_ITERATIONS = 0"))
    run_workflow(ws)
    rc, result = compare(ws, baseline / OUT, ws / OUT, tmp_path / "c.json")
    assert result["verdict"] == "differs" and rc == 3, result["reasons"]
    assert {(f["model"], f["level"], f["name"]) for f in result["differs_on"] if f["level"] == "task"} == {
        ("demo-fast", "task", "maxcut-mqlib")
    }
    assert {f["model"] for f in result["differs_on"]} == {"demo-fast"}
    assert result["models"]["demo-fast"]["tasks"]["maxcut-mqlib"]["delta"] < 0
    assert result["inputs"]["differ"] == ["candidates"]
    (changed,) = result["inputs"]["details"]["candidates"]
    assert (changed["model"], changed["task"], changed["attempt"]) == ("demo-fast", "maxcut-mqlib", "1")
    changes = result["instances"]["demo-fast"]["maxcut-mqlib"]["1"]
    assert {c["instance"] for c in changes["value_changes"]} == {"G11", "G14"}
    assert all(c["delta"] < 0 for c in changes["value_changes"])
    # the workflow's compare target (it succeeds whatever the verdict) and the report's page
    baseline_arg = f"baseline={baseline / OUT}"
    snakemake(ws, "compare", "--cores", "1", "--configfile", CONFIG, "--config", baseline_arg)
    stop_ray_head(ws)
    via_workflow = json.loads((ws / OUT / "compare/compare.json").read_text())
    assert via_workflow["verdict"] == "differs" and via_workflow["differs_on"] == result["differs_on"]
    assert (ws / OUT / "compare/deltas.png").read_bytes().startswith(b"\x89PNG")
    snakemake(ws, "--configfile", CONFIG, "--config", baseline_arg, "--report", "report.html", timeout=300)
    report = (ws / "report.html").read_text(errors="replace")
    assert "compare.html" in report and "deltas.png" in report


def test_changed_limits_are_incomparable(baseline, tmp_path):
    ws = copy_workspace(baseline, tmp_path / "ws")
    task = ws / "config/test/tasks/sat-satlib.yaml"  # the tiny config's task file
    text = task.read_text()
    assert "  wall_s: 60\n" in text
    task.write_text(text.replace("  wall_s: 60\n", "  wall_s: 61\n"))
    run_workflow(ws)
    rc, result = compare(ws, baseline / OUT, ws / OUT, tmp_path / "c.json")
    assert result["verdict"] == "incomparable" and rc == 4
    assert "task_limits" in result["inputs"]["differ"]
    assert result["inputs"]["details"]["task_limits"] == {"sat-satlib": {"wall_s": {"baseline": 60, "candidate": 61}}}
    assert any("sat-satlib" in r and "wall_s" in r for r in result["reasons"])
    assert "candidates" not in result["inputs"]["differ"]


def test_another_reference_is_incomparable(baseline, tmp_path):
    ws = copy_workspace(baseline, tmp_path / "ws")
    ref = json.loads((ws / "config/test/reference.json").read_text())
    ref["reference_id"] = "tcsexam-test-other"
    ref["tasks"]["maxcut-mqlib"]["instances"]["G11"] = [500, 510, 520]
    (ws / "config/test/reference-other.json").write_text(json.dumps(ref))
    run_workflow(ws, "--config", "reference=config/test/reference-other.json")
    rc, result = compare(ws, baseline / OUT, ws / OUT, tmp_path / "c.json")
    assert result["verdict"] == "incomparable" and rc == 4
    assert "reference" in result["inputs"]["differ"]
    assert any(r.startswith("reference:") and "tcsexam-test-other" in r for r in result["reasons"])


def test_replaced_instance_file_is_incomparable(baseline, tmp_path):
    ws = copy_workspace(baseline, tmp_path / "ws")
    link = ws / "references" / "instances"
    target = link.resolve()
    link.unlink()
    link.mkdir()
    for d in target.iterdir():
        if d.name != "maxcut-mqlib":
            (link / d.name).symlink_to(d)
    shutil.copytree(target / "maxcut-mqlib", link / "maxcut-mqlib")
    g14 = link / "maxcut-mqlib" / "G14.txt"
    lines = g14.read_text().splitlines()
    i, j, _w = lines[1].split()
    lines[1] = f"{i} {j} 2"  # one edge weight changed
    g14.write_text("\n".join(lines) + "\n")
    # instance files are not job inputs: force the task's jobs; the record keys (instance hash)
    # make them rerun G14 only
    jobs = sorted(str(p.relative_to(ws)) for p in (ws / OUT / "solver").glob("*/maxcut-mqlib/*/records.json"))
    assert len(jobs) == 2
    run_workflow(ws, "--forcerun", *jobs)
    rc, result = compare(ws, baseline / OUT, ws / OUT, tmp_path / "c.json")
    assert result["verdict"] == "incomparable" and rc == 4
    assert result["inputs"]["details"]["instances"] == {"maxcut-mqlib": {"file_changed": ["G14"]}}
    assert any("maxcut-mqlib" in r and "G14" in r for r in result["reasons"])


def test_symmetric_noise_is_reproduced(baseline, tmp_path):
    """The baseline run directory copied, demo-fast's MaxCut values moved by +4 on G11 and -4 on G14
    (what an anytime solver's rerun looks like), then re-scored with the CLI the workflow uses."""
    run = tmp_path / "run"
    shutil.copytree(baseline / OUT, run)
    attempt = run / "solver/demo-fast/maxcut-mqlib/1"
    records = json.loads((attempt / "records.json").read_text())
    for rec, shift in zip(records, (4, -4)):
        assert rec["status"] == "ok"
        rec["A"] += shift
        rec["claimed"] = rec["A"]
        rec["digest"] = record_digest(rec, find_key(attempt))  # as the harness writes it (an unsealed edit is refused)
    (attempt / "records.json").write_text(json.dumps(records))
    ws = baseline
    steps = [
        [
            "attempts",
            "solver-row",
            "--records",
            str(attempt / "records.json"),
            "--task",
            "maxcut-mqlib",
            "--reference",
            "config/test/reference.json",
            "--model",
            "demo-fast",
            "--attempt",
            "1",
            "--protocol",
            "offline",
            "--relative-output",
            str(attempt / "relative.json"),
            "--output",
            str(attempt / "row.json"),
        ],
        [
            "attempts",
            "table",
            "--rows",
            *map(str, sorted(run.glob("solver/*/*/*/row.json"))),
            *map(str, sorted(run.glob("construction/*/*/*/row.json"))),
            *map(str, sorted(run.glob("proof/*/*/*/row.json"))),
            *map(str, sorted(run.glob("tracks/*/rows.json"))),
            "--output",
            str(run / "attempts.csv"),
        ],
        [
            "score",
            "--suite",
            "lite",
            "--attempts",
            str(run / "attempts.csv"),
            "--cohort",
            str(run / "cohort.json"),
            "--output",
            str(run / "index.json"),
            "--solver-scores",
            str(run / "solver"),
        ],
    ]
    for step in steps:
        proc = tcsexam(ws, *step)
        assert proc.returncode == 0, proc.stderr
    rc, result = compare(ws, baseline / OUT, run, tmp_path / "c.json")
    assert result["verdict"] == "reproduced" and rc == 0, result["reasons"]
    delta = result["models"]["demo-fast"]["tasks"]["maxcut-mqlib"]
    assert delta["delta"] != 0 and delta["ci95"][0] < 0 < delta["ci95"][1]
    changes = result["instances"]["demo-fast"]["maxcut-mqlib"]["1"]["value_changes"]
    assert {(c["instance"], c["delta"]) for c in changes} == {("G11", 4), ("G14", -4)}


def test_compare_report_and_bad_input(baseline, tmp_path):
    proc = tcsexam(
        baseline,
        "compare",
        OUT,
        OUT,
        "--output",
        str(tmp_path / "c.json"),
        "--report",
        str(tmp_path / "c.html"),
        "--plot",
        str(tmp_path / "c.png"),
        "--resamples",
        "200",
    )
    assert proc.returncode == 0, proc.stderr
    html = (tmp_path / "c.html").read_text()
    assert "Verdict: identical" in html and "demo-weak" in html
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")
    proc = tcsexam(baseline, "compare", OUT, str(tmp_path / "nothing"), "--output", str(tmp_path / "d.json"))
    assert proc.returncode == 1 and not (tmp_path / "d.json").exists()
    assert proc.stderr.count("\n") == 1 and "nothing" in proc.stderr


#: the anytime tasks' wall limit in the demo-strong rerun test: long enough for demo-strong's
#: searches to settle on these small instances (the tiny config's 60 s made the test 5 minutes)
ANYTIME_WALL_S = 15


def test_demo_strong_rerun_is_reproduced_or_differs_only_by_its_search_time(tmp_path):
    """demo-strong searches until 85% of each limit with a fixed seed, so a rerun finds the same or
    a better or worse cut depending on how much CPU it got: on an idle machine the values repeat
    (identical) or move a little in both directions (reproduced); when the load differs between
    the two runs every moved instance moves the same way, and the comparison rightly says so
    (differs). Either way no input differs, the deterministic tasks are unchanged, and only its
    anytime tasks can be named, by small value changes. Both runs: demo-strong alone on the tiny
    config's instances, one per anytime task, under a wall limit of ANYTIME_WALL_S (each of those
    searches for 85% of it; the deterministic tasks keep both instances and their limits)."""
    runs = []
    anytime = {"maxcut-mqlib", "tsp-tsplib", "coloring-dimacs"}
    for k in range(2):
        ws = make_workspace(tmp_path / f"ws{k}")
        for task in anytime:
            path = ws / "config/test/tasks" / f"{task}.yaml"
            spec = yaml.safe_load(path.read_text())
            spec["instances"] = spec["instances"][:1]
            spec["limits"]["wall_s"] = ANYTIME_WALL_S
            path.write_text(yaml.safe_dump(spec, sort_keys=False))
        shutil.copytree(ROOT / "solvers" / "demo-strong", ws / "solvers" / "demo-strong")
        (ws / "strong.yaml").write_text("models:\n  - name: demo-strong\n")
        run_workflow(ws, "strong.yaml")
        runs.append(ws)
    rc, result = compare(runs[1], runs[0] / OUT, runs[1] / OUT, tmp_path / "c.json")
    assert result["inputs"]["differ"] == [], result["inputs"]
    assert result["verdict"] in ("identical", "reproduced", "differs"), result["reasons"]
    assert rc == {"identical": 0, "reproduced": 0, "differs": 3}[result["verdict"]]
    flagged_tasks = {f["name"] for f in result["differs_on"] if f["level"] == "task"}
    assert flagged_tasks <= anytime, result["reasons"]
    for task, attempts in result["instances"].get("demo-strong", {}).items():
        assert task in anytime
        for entry in attempts.values():
            assert entry["status_changes"] == []
            for change in entry["value_changes"]:
                assert abs(change["delta"]) <= 0.01 * abs(change["baseline"]), change
    if result["verdict"] == "reproduced":
        assert any(e["delta"] != 0 for e in result["models"]["demo-strong"]["tasks"].values())
