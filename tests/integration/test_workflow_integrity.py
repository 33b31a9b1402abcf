"""Corrupted runs heal themselves, or stop with one line (issue 11), on the tiny config.

One finished run (module fixture) is copied for each case. After each corruption one plain
`snakemake` run either gives the clean run's index.json bit for bit (both demo models of the tiny
config are deterministic) or stops with one clear line: never a traceback, never a `complete`
Index that differs from the clean one, never a lost user file (damaged records are set aside,
not deleted).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_workflow import BIN, CONFIG, OUT, _env, snakemake, stop_ray_head  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(finished_tiny_run) -> Path:
    return finished_tiny_run  # read only: every case works on its own copy (_copy)


def _copy(finished: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(finished, ws, symlinks=True)
    return ws


def _rerun(ws: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    try:
        return snakemake(ws, "--cores", "2", "--configfile", CONFIG, *extra, check=check)
    finally:
        stop_ray_head(ws)


def _index_bytes(ws: Path) -> bytes:
    return (ws / OUT / "index.json").read_bytes()


def _edit_json(path: Path, change) -> None:
    """Edit a JSON file in place, keeping its time stamps (Snakemake's mtime check cannot see it)."""
    st = path.stat()
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _solver(ws: Path, model: str, task: str) -> Path:
    return ws / OUT / "solver" / model / task / "1"


def _one_line_failure(proc: subprocess.CompletedProcess, *needles: str) -> str:
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("tcsexam")]
    assert len(lines) == 1, proc.stderr[-3000:]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_many_corruptions_of_a_finished_run_heal_in_one_plain_rerun(finished, tmp_path):
    ws = _copy(finished, tmp_path)
    clean = _index_bytes(finished)

    # an instance record edited (its digest kept): its A would move the Index
    edited = _solver(ws, "demo-fast", "maxcut-mqlib") / "records" / "G11.json"
    _edit_json(edited, lambda d: d.update(A=d["A"] + 500))
    # the same record edited inside records.json too (as in the issue: Index 25.2 -> 25.6)
    _edit_json(_solver(ws, "demo-fast", "maxcut-mqlib") / "records.json", lambda d: d[0].update(A=d[0]["A"] + 500))
    # a truncated records.json and a truncated instance record
    rj = _solver(ws, "demo-weak", "coloring-dimacs") / "records.json"
    rj.write_bytes(rj.read_bytes()[:120])
    rec = _solver(ws, "demo-weak", "sat-satlib") / "records" / "uf50-01.json"
    rec.write_bytes(rec.read_bytes()[:50])
    # records.json swapped between the two models (same task and attempt), time stamps kept
    a, b = (
        _solver(ws, "demo-fast", "tsp-tsplib") / "records.json",
        _solver(ws, "demo-weak", "tsp-tsplib") / "records.json",
    )
    tmp = tmp_path / "swap"
    shutil.copy2(a, tmp)
    shutil.copy2(b, a)
    shutil.copy2(tmp, b)
    # a truncated relative.json, a row edited to a higher score, a wrong reference label
    rel = _solver(ws, "demo-fast", "maxsat-wcnf") / "relative.json"
    rel.write_bytes(rel.read_bytes()[:10])
    _edit_json(_solver(ws, "demo-weak", "maxsat-wcnf") / "row.json", lambda d: d.update(score=1.0))
    _edit_json(ws / OUT / "cohort.json", lambda d: d.update(solver_reference_id="paper-k3-fixed-260925"))
    # a stale index.json: edited, time stamp kept
    _edit_json(ws / OUT / "index.json", lambda d: d["models"]["demo-weak"].update(index=99.0))

    _rerun(ws)
    assert _index_bytes(ws) == clean
    # nothing was lost: the damaged records are kept, set aside with their reason
    aside = list((_solver(ws, "demo-fast", "maxcut-mqlib") / "records" / ".set-aside").glob("*/G11.json"))
    assert len(aside) == 1 and json.loads(aside[0].read_text())["A"] == json.loads(edited.read_text())["A"] + 500
    assert list((_solver(ws, "demo-weak", "sat-satlib") / "records" / ".set-aside").glob("*/uf50-01.json"))
    log = (_solver(ws, "demo-weak", "sat-satlib") / "run.log").read_text()
    assert "1 set aside (1 unreadable)" in log
    kept = {p.relative_to(ws / OUT / ".set-aside").parts[1:] for p in (ws / OUT / ".set-aside").rglob("*.json")}
    assert ("cohort.json",) in kept and ("index.json",) in kept
    # and the next plain run has nothing left to do
    proc = _rerun(ws)
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_a_half_finished_run_with_damaged_records_completes(finished, tmp_path):
    ws = _copy(finished, tmp_path)
    clean = _index_bytes(finished)
    for name in ("index.json", "attempts.csv", "manifest.json"):
        (ws / OUT / name).unlink(missing_ok=True)
    shutil.rmtree(ws / OUT / "plots")
    base = _solver(ws, "demo-weak", "tsp-tsplib")
    for name in ("records.json", "relative.json", "row.json"):
        (base / name).unlink()
    (base / "records" / "gr17.json").unlink()  # killed before this instance finished
    rec = base / "records" / "ulysses16.json"
    rec.write_text(rec.read_text().replace('"certificate_failed"', '"ok"'))  # edited by hand
    _rerun(ws)
    assert _index_bytes(ws) == clean
    assert "1 set aside (1 digest-mismatch)" in (base / "run.log").read_text()


def test_tcsexam_repair_then_a_plain_rerun(finished, tmp_path):
    ws = _copy(finished, tmp_path)
    clean = _index_bytes(finished)
    base = _solver(ws, "demo-fast", "coloring-dimacs")
    rj = base / "records.json"
    rj.write_bytes(rj.read_bytes()[:200])
    rep = subprocess.run(
        [str(BIN / "tcsexam"), "repair", "--records-dir", str(base / "records"), "--output", str(rj)],
        cwd=ws,
        env=_env(ws),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rep.returncode == 0 and "set aside stale" in rep.stdout, rep.stdout + rep.stderr
    assert not rj.exists() and list((base / "records" / ".repaired").glob("*/records.json"))
    _rerun(ws)
    assert _index_bytes(ws) == clean


@pytest.mark.parametrize(
    "config, needles",
    [
        ("models=[{name: demo-fsat}]", ["model 'demo-fsat'", "solvers/demo-fsat/", "did you mean 'demo-fast'"]),
        ("solvers_dir=solver", ["solvers_dir", "did you mean 'solvers'"]),
        ("verdicts_dir=config/verdict", ["verdicts_dir", "config/verdict", "did you mean 'verdicts'"]),
        ("reference=config/test/referense.json", ["reference file", "referense.json", "did you mean 'reference.json'"]),
        ("run={sandbox: bwrapp}", ["config run.sandbox", "'bwrapp' is not one of"]),
        ("modles=[]", ["unknown key 'modles'", "did you mean 'models'"]),
    ],
)
def test_config_typos_fail_fast_in_a_dry_run(finished, config, needles):
    proc = snakemake(finished, "-n", "--configfile", CONFIG, "--config", config, check=False)
    _one_line_failure(proc, *needles)


def test_a_partial_nested_config_override_works(finished):
    proc = snakemake(
        finished, "-n", "--configfile", CONFIG, "--config", "run={threads: 2}", "--forcerun", "attempts_cohort"
    )
    assert "attempts_cohort" in proc.stdout


def test_snakemake_without_the_venv_on_path_finds_tcsexam(finished, tmp_path):
    ws = _copy(finished, tmp_path)
    env = _env(ws)
    env["PATH"] = "/usr/bin:/bin"
    proc = subprocess.run(
        [str(BIN / "snakemake"), "-n", "--configfile", CONFIG], cwd=ws, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "tcsexam` was not on PATH; using" in proc.stderr


@contextlib.contextmanager
def _read_only(path: Path):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root and mount(8) for a read-only bind mount")
    ok = subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True).returncode == 0
    ok = ok and subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], capture_output=True).returncode == 0
    if not ok:
        subprocess.run(["umount", str(path)], capture_output=True)
        pytest.skip("cannot make a read-only bind mount here")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_read_only_results_folder_stops_with_one_line(finished, tmp_path):
    ws = _copy(finished, tmp_path)
    rj = _solver(ws, "demo-weak", "maxcut-mqlib") / "records.json"
    rj.write_bytes(rj.read_bytes()[:100])
    before = rj.read_bytes()
    with _read_only(ws / "results"):
        proc = _rerun(ws, check=False)
    _one_line_failure(proc, "Read-only file system", str(Path("results")))
    assert rj.read_bytes() == before  # nothing half-moved
