"""The results explorer (`tcsexam view`) at Full scale: 10 models x 3 attempts x the 13 Full Solver
tasks, about 60,000 instance records (records.json with digests, relative.json, the attempt table
of every Full item, index.json from the real scorer).

    .venv/bin/python benchmarks/view.py [--records 60000] [--browser]

No solver runs: records are synthetic (values around a reference mean, ~10% timeouts, a few crashes
with a stderr tail, anytime traces on a third). Printed, each as a ratio against a baseline in the
same process:

1. building the site (collect + write; records not re-verified: --verify-records) against just
   reading the records: json.load of every
   records.json and relative.json;
2. the site's size: all data, the largest file (one task's records), run.js (what the first page
   reads);
3. with --browser (Debian's chromium + chromedriver): time to the first page, to a task page
   (its instance matrix), to the all-records table (every task file loaded), and one status filter
   over all 60,000 records; against the time to open an empty page.
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr

from tcsexam.records.digest import record_digest
from tcsexam.records.key import ensure_key
from tcsexam.scoring.index import score_files
from tcsexam.suites import load_suite
from tcsexam.view.collect import collect_run
from tcsexam.view.site import write_site

MODELS = [f"model-{m:02d}" for m in range(10)]
ATTEMPTS = ["1", "2", "3"]
COLUMNS = "model,track,item,attempt,score,adoption_status,score_status,score_type,solver_protocol".split(",")


def synth(folder: Path, total: int, rng) -> int:
    suite = load_suite("full")
    tasks = list(suite.tracks["solver"])
    per_task = max(2, total // (len(MODELS) * len(ATTEMPTS) * len(tasks)))
    key = ensure_key(folder)
    rows, n = [], 0
    for t in tasks:
        mu = rng.uniform(100, 10000, per_task)
        scale = np.maximum(0.02 * mu, 1.0)
        names = [f"{t}-{i:05d}" for i in range(per_task)]
        for mi, model in enumerate(MODELS):
            for a in ATTEMPTS:
                d = folder / "solver" / model / t / a
                d.mkdir(parents=True)
                value = mu + rng.normal(-mi * 0.2, 1.0, per_task) * scale
                u = rng.random(per_task)
                status = np.where(u < 0.1, "timeout", np.where(u < 0.12, "crash", "ok"))
                records = []
                for i, name in enumerate(names):
                    st = str(status[i])
                    rec = {
                        "instance": name,
                        "status": st,
                        "A": float(value[i]) if st == "ok" else None,
                        "solved": None,
                        "claimed": None,
                        "reward": None,
                        "message": {"ok": "cut", "timeout": "walltime limit", "crash": "exit code 1"}[st],
                        "wall_s": float(rng.uniform(0.1, 5)),
                        "cpu_s": 1.0,
                        "peak_mem_mb": 40.0,
                        "exit_code": 0,
                        "signal": None,
                        "termination": "walltime" if st == "timeout" else "exit",
                        "sandbox": "bwrap",
                        "limiter": "light",
                        "key": "sha256:" + "0" * 64,
                        "task": t,
                        "attempt": a,
                        "harness_version": "0.1.0",
                        "schema_version": 1,
                    }
                    if st == "crash":
                        rec["extra"] = {"stderr_tail": "Traceback (most recent call last):\n  ...\nMemoryError"}
                    if i % 3 == 0 and st == "ok":
                        rec["trace"] = [[0.5, "ok", float(value[i] - scale[i])], [2.0, "ok", float(value[i])]]
                    rec["digest"] = record_digest(rec, key)
                    records.append(rec)
                ok = status == "ok"
                z = np.where(ok, (value - mu) / scale, np.nan)
                score = np.where(ok, ndtr(np.nan_to_num(z)), 0.0)
                rel = {
                    "schema_version": 1,
                    "task": t,
                    "reference_id": "bench-k3",
                    "kind": "objective",
                    "direction": "maximize",
                    "relative_score": float(score.mean()),
                    "n_eligible": per_task,
                    "instances": [
                        {
                            "instance": nm,
                            "status": str(status[i]),
                            "value": float(value[i]) if ok[i] else None,
                            "mu": float(mu[i]),
                            "scale": float(scale[i]),
                            "z": float(z[i]) if ok[i] else None,
                            "score": float(score[i]),
                        }
                        for i, nm in enumerate(names)
                    ],
                    "unscored_instances": [],
                }
                (d / "records.json").write_text(json.dumps(records))
                (d / "relative.json").write_text(json.dumps(rel))
                n += per_task
                rows.append(
                    [
                        model,
                        "solver",
                        t,
                        a,
                        repr(rel["relative_score"]),
                        "selected",
                        "valid",
                        "fixed_reference_relative",
                        "offline",
                    ]
                )
    for model in MODELS:
        for track in ("theorem", "construction", "open_conjecture"):
            for item in suite.tracks[track]:
                for a in ATTEMPTS:
                    v = float(rng.integers(0, 2)) if track != "construction" else float(rng.random())
                    rows.append([model, track, item, a, repr(v), "selected", "valid", "original_task_score", ""])
    with open(folder / "attempts.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        w.writerows(rows)
    cohort = {
        "suite": "full",
        "solver_protocol": "offline",
        "solver_reference_id": "bench-k3",
        "models": {m: {"attempts_per_task": len(ATTEMPTS)} for m in MODELS},
    }
    (folder / "cohort.json").write_text(json.dumps(cohort))
    index = score_files(suite, folder / "attempts.csv", folder / "cohort.json")
    (folder / "index.json").write_text(json.dumps(index))
    return n


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def read_only(run: Path) -> None:
    for f in sorted(run.glob("solver/*/*/*/records.json")):
        json.loads(f.read_text())
    for f in sorted(run.glob("solver/*/*/*/relative.json")):
        json.loads(f.read_text())


def browser_timings(site: Path) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1360,900"):
        o.add_argument(a)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    try:
        url = (site / "index.html").resolve().as_uri()

        def timed(route: str, css: str) -> float:
            t0 = time.perf_counter()
            d.get(url + route)
            d.refresh()  # a hash change alone would not reload the page
            WebDriverWait(d, 300).until(lambda x: x.execute_script(f"return !!document.querySelector({css!r})"))
            return time.perf_counter() - t0

        blank = site / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title><p id=x>x</p>")
        t0 = time.perf_counter()
        d.get(blank.resolve().as_uri())
        WebDriverWait(d, 60).until(lambda x: x.execute_script("return !!document.getElementById('x')"))
        empty = time.perf_counter() - t0
        first = timed("#/", "#leaderboard tbody tr")
        task = timed("#/task/maxcut-mqlib", "#instance-matrix tbody tr")
        every = timed("#/instances", "#records tbody tr[data-status]")
        t0 = time.perf_counter()
        d.execute_script(
            "var s=document.querySelector('#f-status'); s.value='crash'; s.dispatchEvent(new Event('change'));"
        )
        WebDriverWait(d, 60).until(
            lambda x: x.execute_script(
                "var r=document.querySelectorAll('#records tbody tr[data-status]');"
                "return r.length>0 && [...r].every(e=>e.dataset.status==='crash')"
            )
        )
        filt = time.perf_counter() - t0
        print(f"  browser: empty page {empty:.3f} s; leaderboard {first:.3f} s ({first / empty:.1f}x);")
        print(
            f"           task page {task:.3f} s ({task / empty:.1f}x); all records table {every:.3f} s ({every / empty:.1f}x);"
        )
        print(f"           status filter over all records {filt:.3f} s")
    finally:
        d.quit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=60000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also time pages in headless chromium")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tcsexam-view-bench-"))
    try:
        run = tmp / "full" / "offline"
        run.mkdir(parents=True)
        n = synth(run, args.records, np.random.default_rng(7))
        site = tmp / "site"
        print(f"{n} records, {len(MODELS)} models x {len(ATTEMPTS)} attempts x 13 tasks")
        base = best_of(lambda: read_only(run), args.repeat)
        build = best_of(lambda: write_site(collect_run(run, site), site), args.repeat)
        print(f"  just reading the records (json.load of records.json + relative.json): {base:.3f} s")
        print(f"  tcsexam view (collect + write the site): {build:.3f} s ({build / base:.1f}x)")
        files = [f for f in site.rglob("*") if f.is_file()]
        total = sum(f.stat().st_size for f in files)
        largest = max(files, key=lambda f: f.stat().st_size)
        records_mb = sum(f.stat().st_size for f in run.glob("solver/*/*/*/records.json")) / 1e6
        print(f"  site: {total / 1e6:.1f} MB in {len(files)} files (records.json files: {records_mb:.1f} MB);")
        print(
            f"        largest {largest.name} {largest.stat().st_size / 1e6:.2f} MB; run.js {(site / 'data' / 'run.js').stat().st_size / 1e6:.2f} MB"
        )
        if args.browser:
            browser_timings(site)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
