"""The results explorer of a real workflow run (the tiny config: demo-fast and demo-weak, two
instances per Lite Solver task), in headless Chromium from file://:

- the workflow wrote view/index.html and the report's leaderboard.html, constructions.png and
  proofs.png, which `snakemake --report report.html` puts in the report; the leaderboard's numbers
  are index.json's;
- three clicks from the leaderboard reach an instance's record: task cell -> instance cell ->
  the record, with its status and message; demo-weak's MaxSAT crash shows its stderr tail;
- no page logs a console error.

With TCSEXAM_VIEW_SCREENSHOTS=DIR the screenshots go to DIR (docs/img/ was made so:
`TCSEXAM_VIEW_SCREENSHOTS=docs/img pytest tests/integration/test_view_workflow.py`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "view"))
from browserkit import browser_or_skip, console_errors, open_site, save_small_png, wait  # noqa: E402
from test_workflow import CONFIG, OUT, copy_of_finished_run, snakemake  # noqa: E402

pytestmark = pytest.mark.slow
SHOTS = (
    ("view-leaderboard.png", "#/", "#task-matrix"),
    ("view-task.png", "#/task/coloring-dimacs?model=demo-weak", "#instance-matrix"),
    ("view-instance.png", "#/instance/maxsat-wcnf/gen-old-n30-s101?model=demo-weak", "section.record pre.stderr"),
    ("view-instances.png", "#/instances?status=crash", "#records tbody tr[data-status='crash']"),
    ("view-items.png", "#/items?track=construction", "#items tbody tr"),
)


@pytest.fixture(scope="module")
def browser():
    with browser_or_skip() as driver:
        yield driver


@pytest.fixture(scope="module")
def run_dir(finished_tiny_run) -> Path:
    return finished_tiny_run / OUT


def test_workflow_builds_the_explorer_and_the_report_files(run_dir):
    assert (run_dir / "view" / "index.html").is_file()
    assert list((run_dir / "view" / "data").glob("task-*.js"))
    index = json.loads((run_dir / "index.json").read_text())
    html = (run_dir / "plots" / "leaderboard.html").read_text()
    for m in index["models"].values():
        assert f"<b>{m['index']:.2f}</b>" in html
    assert (run_dir / "view" / "index.html").resolve().as_uri() in html
    for name in ("constructions.png", "proofs.png"):
        assert (run_dir / "plots" / name).read_bytes()[:4] == b"\x89PNG"
    # the runs kept what the explorer links
    assert list(run_dir.glob("solver/*/*/1/certificates/*.txt"))


def test_the_report_holds_the_leaderboard_and_the_figures(finished_tiny_run, tmp_path):
    ws = copy_of_finished_run(finished_tiny_run, tmp_path / "ws")
    snakemake(ws, "--configfile", CONFIG, "--report", "report.html", timeout=300)
    html = (ws / "report.html").read_text(errors="replace")
    for name in ("leaderboard.html", "constructions.png", "proofs.png"):
        assert name in html, name


def test_three_clicks_from_the_leaderboard_to_a_record(browser, run_dir, tmp_path):
    site = run_dir / "view"
    index = json.loads((run_dir / "index.json").read_text())
    browser.get_log("browser")
    open_site(browser, site)
    for model, m in index["models"].items():
        cell = browser.find_element("css selector", f"#leaderboard [data-model='{model}'][data-field='index']")
        assert float(cell.get_attribute("data-value")) == m["index"]
    records = {
        r["instance"]: r for r in json.loads((run_dir / "solver/demo-weak/coloring-dimacs/1/records.json").read_text())
    }
    # click 1: the task cell; click 2: the instance cell; the record is there (click 3 would open its files)
    browser.find_element("css selector", "#task-matrix a[data-task='coloring-dimacs'][data-model='demo-weak']").click()
    cell = wait(browser, "#instance-matrix a.cell-link[data-model='demo-weak']")[0]
    name = cell.get_attribute("data-instance")
    cell.click()
    section = wait(browser, "section.record[data-model='demo-weak']")[0]
    assert section.find_element("css selector", "h2 .badge").text.replace(" ", "_") == records[name]["status"]
    assert records[name]["message"] in section.text
    assert not console_errors(browser)
    target = os.environ.get("TCSEXAM_VIEW_SCREENSHOTS")
    for file, route, css in SHOTS:
        open_site(browser, site, route)
        wait(browser, css)
        path = tmp_path / file
        assert browser.save_screenshot(str(path))
        if target:
            save_small_png(path, Path(target) / file)
    assert not console_errors(browser)
