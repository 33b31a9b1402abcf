"""`tcsexam view` without a browser: what the collector reads, what the site folder holds, the
comparison verdicts, the report files, and bad input (one line, exit 1, nothing left behind)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tinyrun import FLIPPED, MODELS, ROOT, make_orspace, record_count

from tcsexam.cli import main
from tcsexam.view.collect import RECORD_COLUMNS, collect_run
from tcsexam.view.site import comparison_view, delta_verdict, write_site


def _task_data(site: Path) -> dict[str, list[dict]]:
    """task -> its records as dicts, read back from the site's data files."""
    out = {}
    for f in sorted((site / "data").glob("task-*.js")):
        body = re.fullmatch(r"TCSX\.task\((\d+), (.*)\);\n", f.read_text(), re.S)
        assert body, f
        data = json.loads(body.group(2))
        out[data["task"]] = [dict(zip(RECORD_COLUMNS, row)) for row in data["rows"]]
    return out


def _run_data(site: Path) -> dict:
    body = re.fullmatch(r"TCSX\.run\((.*)\);\n", (site / "data" / "run.js").read_text(), re.S)
    return json.loads(body.group(1))


def test_site_holds_every_record_with_its_score(tiny_runs, tiny_site):
    run = tiny_runs[0]
    tasks = _task_data(tiny_site)
    assert sum(len(v) for v in tasks.values()) == record_count()
    for task, rows in tasks.items():
        for model in MODELS:
            rel = json.loads((run / "solver" / model / task / "1" / "relative.json").read_text())
            recs = {
                r["instance"]: r for r in json.loads((run / "solver" / model / task / "1" / "records.json").read_text())
            }
            mine = {r["instance"]: r for r in rows if r["model"] == model}
            assert set(mine) == set(recs)
            for s in rel["instances"]:
                r = mine[s["instance"]]
                assert (r["status"], r["mu"], r["scale"], r["z"], r["score"]) == (
                    s["status"],
                    s["mu"],
                    s["scale"],
                    s["z"],
                    s["score"],
                )
                assert r["A"] == recs[s["instance"]]["A"] and r["wall_s"] == recs[s["instance"]]["wall_s"]
                assert r["digest_ok"] is True
                assert (tiny_site / r["record"]).resolve() == (
                    run / "solver" / model / task / "1" / "records" / f"{s['instance']}.json"
                ).resolve()
        for r in rows:
            if r["status"] in ("ok", "certificate_failed"):
                assert (tiny_site / r["certificate"]).read_text() == f"certificate of {r['model']} on {r['instance']}\n"
            else:
                assert r["certificate"] is None
    crash = next(r for r in tasks["coloring-dimacs"] if r["status"] == "crash")
    assert "ZeroDivisionError: division by zero" in crash["stderr"]
    trace = next(r for r in tasks["maxcut-mqlib"] if r["model"] == "alpha")
    assert trace["trace"] and trace["trace"][-1][2] == trace["A"]


def test_run_data_is_index_json_and_the_attempt_table(tiny_runs, tiny_site):
    index = json.loads((tiny_runs[0] / "index.json").read_text())
    data = _run_data(tiny_site)
    board = {r["model"]: r for r in data["leaderboard"]}
    for model, m in index["models"].items():
        assert board[model]["index"] == m["index"] and board[model]["index_ci95"] == m["index_ci95"]
        assert board[model]["track_means"] == m["track_means"] and board[model]["status"] == m["status"]
    assert len(data["items"]) == len(MODELS) * 15
    cap = next(i for i in data["items"] if i["model"] == "beta" and i["item"] == "construction-cap-set-f3-dim8")
    assert cap["source"] == "pipeline" and cap["checker"]["status"] == "certificate_failed"
    proof = next(i for i in data["items"] if i["item"] == "theorem-sum-odds-square" and i["model"] == "alpha")
    assert proof["source"] == "verdict file" and proof["checker"]["checker"].startswith("coqc")
    assert data["provenance"]["tasks"]["maxcut-mqlib"]["n_instances"] == 3
    assert [d["kind"] for d in data["orspace"]] == ["objectives", "explain"]
    assert data["issues"] == []


def test_a_record_failing_its_digest_is_an_issue(tiny_runs, tmp_path):
    run = tmp_path / "lite" / "offline"
    shutil.copytree(tiny_runs[0], run)
    path = run / "solver" / "alpha" / "sat-satlib" / "1" / "records.json"
    records = json.loads(path.read_text())
    records[0]["A"] = 1e9  # edited by hand: the digest no longer matches
    path.write_text(json.dumps(records))
    assert not [i for i in collect_run(run, tmp_path / "site").issues if i["kind"] == "record_digest"]
    data = collect_run(run, tmp_path / "site", verify_records=True)
    issues = [i for i in data.issues if i["kind"] == "record_digest"]
    assert [(i["model"], i["task"], i["instance"]) for i in issues] == [("alpha", "sat-satlib", records[0]["instance"])]
    row = next(r for r in data.tasks[1].rows if r[0] == "alpha" and r[2] == records[0]["instance"])
    assert row[RECORD_COLUMNS.index("digest_ok")] is False
    ok = next(r for r in data.tasks[1].rows if r[0] == "beta")
    assert ok[RECORD_COLUMNS.index("digest_ok")] is True


def test_comparison_verdicts_and_changes_status_first(tiny_runs, compare_site):
    body = re.fullmatch(r"TCSX\.compare\((.*)\);\n", (compare_site / "data" / "compare.js").read_text(), re.S)
    cmp = json.loads(body.group(1))
    model, task, instance = FLIPPED
    first = cmp["changes"][0]
    assert (first["kind"], first["model"], first["task"], first["instance"]) == ("status", model, task, instance)
    assert (first["baseline"], first["candidate"]) == ("ok", "timeout")
    verdicts = {(d["model"], d["level"], d["name"]): d["verdict"] for d in cmp["deltas"]}
    assert verdicts[("beta", "index", "Index")] == "identical"
    assert verdicts[(model, "task", task)] in ("within noise", "differs")
    assert verdicts[(model, "task", "tsp-tsplib")] == "identical"


def test_delta_verdicts():
    assert delta_verdict({"baseline": 1.0, "candidate": 1.0, "excludes_zero": False}) == "identical"
    assert delta_verdict({"baseline": 1.0, "candidate": 0.9, "excludes_zero": False}) == "within noise"
    assert delta_verdict({"baseline": 1.0, "candidate": 0.5, "excludes_zero": True}) == "differs"
    assert delta_verdict({"baseline": None, "candidate": 0.5, "excludes_zero": True}) == "differs"
    result = {"models": {"m": {"index": {"baseline": 1, "candidate": 1, "excludes_zero": False}}}, "instances": {}}
    assert comparison_view(result)["deltas"][0]["verdict"] == "identical"


def test_compare_command_builds_the_view_too(tiny_runs, tmp_path):
    a, b = tiny_runs
    code = main(
        [
            "compare",
            str(a),
            str(b),
            "--output",
            str(tmp_path / "c.json"),
            "--resamples",
            "50",
            "--exit-zero",
            "--view",
            str(tmp_path / "site"),
        ]
    )
    assert code == 0
    assert (tmp_path / "site" / "index.html").is_file()
    assert "TCSX.compare({" in (tmp_path / "site" / "data" / "compare.js").read_text()
    # the saved comparison gives the same site data
    code = main(["view", str(b), "--compare", str(tmp_path / "c.json"), "--output", str(tmp_path / "site2")])
    assert code == 0
    assert (tmp_path / "site" / "data" / "compare.js").read_text() == (
        tmp_path / "site2" / "data" / "compare.js"
    ).read_text()


def test_report_files_read_the_same_index(tiny_runs, tmp_path):
    run = tiny_runs[0]
    assert main(["view", str(run), "--output", str(tmp_path / "site"), "--report", str(tmp_path / "rep")]) == 0
    index = json.loads((run / "index.json").read_text())
    html = (tmp_path / "rep" / "leaderboard.html").read_text()
    for m in index["models"].values():
        assert f"<b>{m['index']:.2f}</b>" in html
        assert f"[{m['index_ci95'][0]:.2f}, {m['index_ci95'][1]:.2f}]" in html
    assert (tmp_path / "site" / "index.html").resolve().as_uri() in html
    for name in ("constructions.png", "proofs.png"):
        assert (tmp_path / "rep" / name).read_bytes()[:4] == b"\x89PNG"


def test_rebuilding_replaces_the_site_and_keeps_no_temporary_folder(tiny_runs, tmp_path):
    out = tmp_path / "site"
    write_site(collect_run(tiny_runs[0], out), out)
    (out / "stale.txt").write_text("from an older build")
    write_site(collect_run(tiny_runs[0], out), out)
    assert not (out / "stale.txt").exists() and (out / "index.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_bad_input_is_one_line_and_leaves_nothing(tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["view", str(tmp_path / "missing"), "--output", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run directory not found" in err[0]
    assert not out.exists()
    broken = tmp_path / "lite" / "offline"
    broken.mkdir(parents=True)
    (broken / "index.json").write_text("{not json")
    assert main(["view", str(broken), "--output", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "index.json" in err[0] and "malformed" in err[0]
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["lite"]


def test_a_foreign_folder_is_never_replaced(tiny_runs, tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["view", str(tiny_runs[0]), "--output", str(out)]) == 1
    assert "not a tcsexam view" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "keep me"


def test_candidate_and_compare_together_is_a_usage_error(tiny_runs, tmp_path):
    a, b = tiny_runs
    assert main(["view", str(a), str(b), "--compare", str(tmp_path / "c.json"), "--output", str(tmp_path / "s")]) == 2


def test_an_unfinished_attempt_shows_its_record_files(tiny_runs, tmp_path):
    run = tmp_path / "lite" / "offline"
    shutil.copytree(tiny_runs[0], run)
    (run / "solver" / "beta" / "tsp-tsplib" / "1" / "records.json").unlink()
    (run / "solver" / "beta" / "tsp-tsplib" / "1" / "relative.json").unlink()
    data = collect_run(run, tmp_path / "site")
    td = next(t for t in data.tasks if t.task == "tsp-tsplib")
    assert sum(1 for r in td.rows if r[0] == "beta") == 3
    assert td.summary["models"]["beta"]["attempts"]["1"]["n"] == 3


def test_orspace_folder_is_read(tmp_path, tiny_runs):
    data = collect_run(tiny_runs[0], tmp_path / "site", orspace_dir=make_orspace(tmp_path / "orspace"))
    objectives = next(d for d in data.orspace if d["kind"] == "objectives")
    assert [r["failure_mode"] for r in objectives["rows"]] == ["none", "wrong_objective"]


@pytest.mark.slow
def test_the_console_script_builds_a_site(tiny_runs, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tcsexam", "view", str(tiny_runs[0]), "--output", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"({record_count()} Solver records, 5 tasks)" in proc.stdout


def test_serve_serves_the_site(tiny_runs, tmp_path):
    import os
    import signal
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "tcsexam", "view", str(tiny_runs[0]), "--output", str(tmp_path / "s"), "--serve", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        url = None
        for line in proc.stdout:
            if line.startswith("serving "):
                url = line.split(" at ", 1)[1].split(" ", 1)[0]
                break
        assert url and url.startswith("http://127.0.0.1:"), proc.stderr.read() if url is None else url
        with urllib.request.urlopen(url + "data/run.js", timeout=30) as resp:
            assert resp.read().startswith(b"TCSX.run({")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"--serve outlived its SIGINT by 60 s; its stderr: {proc.communicate()[1][-2000:]}")


def test_a_results_folder_with_one_run_is_that_run(tiny_runs, tmp_path, capsys):
    results = tiny_runs[0].parents[1]  # <base>/a: holds lite/offline only
    assert main(["view", str(results), "--output", str(tmp_path / "s")]) == 0
    assert str(tiny_runs[0].resolve()) in _run_data(tmp_path / "s")["meta"]["path"]
    both = tmp_path / "both"
    shutil.copytree(tiny_runs[0], both / "lite" / "offline")
    shutil.copytree(tiny_runs[0], both / "lite" / "online")
    capsys.readouterr()
    assert main(["view", str(both), "--output", str(tmp_path / "s2")]) == 1
    err = capsys.readouterr().err
    assert "holds 2 runs" in err and "name one" in err and not (tmp_path / "s2").exists()
