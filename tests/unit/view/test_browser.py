"""The explorer in a real headless Chromium (Selenium + Debian's chromedriver), opened from file://:

- the leaderboard's numbers are index.json's (the raw value in data-value, the shown rounding);
- every record of the tiny run is reached by clicks from the leaderboard (task cell -> instance
  cell -> the instance's record of that model), and shows its status;
- the instance filters (task, model, status, search) select exactly the matching records;
- a comparison of two runs lists the instance whose status changed first and marks it on the
  instance page;
- sorting works; no page writes an error to the console.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import browserkit
import pytest
from tinyrun import FLIPPED

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TIMEOUT = browserkit.TIMEOUT
_wait = browserkit.wait
_open = browserkit.open_site
_console_errors = browserkit.console_errors


@pytest.fixture
def page(browser):
    browser.get_log("browser")  # drop what earlier tests left
    yield browser
    errors = _console_errors(browser)
    assert not errors, errors


def _records(run: Path) -> list[tuple[str, str, str, str]]:
    out = []
    for f in sorted(run.glob("solver/*/*/*/records.json")):
        model, task = f.parts[-4], f.parts[-3]
        for r in json.loads(f.read_text()):
            out.append((model, task, r["instance"], r["status"]))
    return out


def test_opens_from_file_and_leaderboard_equals_index_json(page, tiny_site, tiny_runs):
    _open(page, tiny_site)
    assert page.current_url.startswith("file://")
    index = json.loads((tiny_runs[0] / "index.json").read_text())
    cells = _wait(page, "#leaderboard [data-field='index']", len(index["models"]))
    shown = {c.get_attribute("data-model"): c for c in cells}
    assert set(shown) == set(index["models"])
    for model, m in index["models"].items():
        assert float(shown[model].get_attribute("data-value")) == m["index"]
        assert shown[model].text == f"{m['index']:.2f}"
        ci = json.loads(
            page.find_element(
                "css selector", f"#leaderboard [data-model='{model}'][data-field='index_ci95']"
            ).get_attribute("data-value")
        )
        assert ci == m["index_ci95"]
        for track, value in m["track_means"].items():
            el = page.find_element("css selector", f"#leaderboard [data-model='{model}'][data-field='track:{track}']")
            assert float(el.get_attribute("data-value")) == value
            assert el.text == f"{value:.3f}"
        status = page.find_element("css selector", f"#leaderboard [data-model='{model}'][data-field='status']")
        assert status.get_attribute("data-value") == m["status"]


def test_leaderboard_sorts_by_a_clicked_header(page, tiny_site, tiny_runs):
    _open(page, tiny_site)
    index = json.loads((tiny_runs[0] / "index.json").read_text())
    best_first = sorted(index["models"], key=lambda m: -index["models"][m]["index"])
    order = [c.get_attribute("data-model") for c in _wait(page, "#leaderboard [data-field='index']")]
    assert order == best_first
    page.find_element("css selector", "#leaderboard th[data-k='index']").click()
    order = [c.get_attribute("data-model") for c in _wait(page, "#leaderboard [data-field='index']")]
    assert order == best_first[::-1]


def test_every_record_is_reachable_by_clicks(page, tiny_site, tiny_runs):
    expected = _records(tiny_runs[0])
    reached = set()
    _open(page, tiny_site)
    tasks = sorted({t for _, t, _, _ in expected})
    models = sorted({m for m, _, _, _ in expected})
    for task in tasks:
        for model in models:
            _open(page, tiny_site)
            page.find_element("css selector", f"#task-matrix a[data-task='{task}'][data-model='{model}']").click()
            links = _wait(page, f"#instance-matrix a.cell-link[data-model='{model}']")
            names = [a.get_attribute("data-instance") for a in links]
            for name in names:
                _wait(page, f"#instance-matrix a.cell-link[data-model='{model}'][data-instance='{name}']")[0].click()
                section = _wait(page, f"section.record[data-model='{model}']")[0]
                header = page.find_element("css selector", "h1").text
                assert header.startswith(name), header
                status = section.find_element("css selector", "h2 .badge").text.replace(" ", "_")
                reached.add((model, task, name, status))
                page.back()
                _wait(page, "#instance-matrix")
    assert reached == set(expected)


def test_instance_filters_select_exactly_the_matching_records(page, tiny_site, tiny_runs):
    from selenium.webdriver.support.ui import Select

    expected = _records(tiny_runs[0])
    _open(page, tiny_site, "#/instances")
    _wait(page, "#records tbody tr[data-status]")
    assert page.find_element("css selector", "#rec .pager .count").text == f"{len(expected)} records"

    def shown():  # read in one script: the table may be redrawn between two WebDriver calls
        script = (
            "return [...document.querySelectorAll('#records tbody tr[data-status]')]"
            ".map(r => [r.dataset.model, r.dataset.task, r.dataset.instance, r.dataset.status])"
        )
        return {tuple(r) for r in page.execute_script(script)}

    Select(page.find_element("css selector", "#f-status")).select_by_value("crash")
    assert shown() == {e for e in expected if e[3] == "crash"} and shown()
    Select(page.find_element("css selector", "#f-status")).select_by_value("")
    Select(page.find_element("css selector", "#f-model")).select_by_value("beta")
    assert shown() == {e for e in expected if e[0] == "beta"}
    search = page.find_element("css selector", "#f-q")
    search.send_keys("ZeroDivision")  # only in the crash record's stderr tail
    _wait(page, "#records tbody tr[data-status='crash']")
    import time

    deadline = time.monotonic() + TIMEOUT
    while len(shown()) != 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shown() == {("beta", "coloring-dimacs", "coloring-dimacs-3", "crash")}
    search.clear()
    Select(page.find_element("css selector", "#f-model")).select_by_value("")
    Select(page.find_element("css selector", "#f-task")).select_by_value("tsp-tsplib")  # a new route: that task only
    _wait(page, "#records tbody tr[data-task='tsp-tsplib']")
    while len(shown()) != 6 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert shown() == {e for e in expected if e[1] == "tsp-tsplib"}


def test_constructions_and_proofs_show_checker_verdicts(page, tiny_site, tiny_runs):
    _open(page, tiny_site, "#/items")
    rows = _wait(page, "#items tbody tr[data-item]")
    assert page.find_element("css selector", "#it .pager .count").text == f"{2 * 15} attempts"
    assert rows
    _open(page, tiny_site, "#/item/beta/construction-cap-set-f3-dim8/1")
    text = _wait(page, "table.kv")[0].text
    assert "certificate_failed" in text and "not a valid object" in text
    _open(page, tiny_site, "#/item/alpha/theorem-sum-odds-square/1")
    text = _wait(page, "table.kv")[0].text
    assert "coqc 8.16.1" in text and "accepted" in text


def test_comparison_lists_the_changed_status_first(page, compare_site):
    _open(page, compare_site, "#/compare")
    rows = _wait(page, "#changes tbody tr[data-kind]")
    model, task, instance = FLIPPED
    first = rows[0]
    assert first.get_attribute("data-kind") == "status"
    assert first.get_attribute("data-instance") == instance
    assert "ok" in first.text and "timeout" in first.text
    verdict = page.find_element("css selector", "#verdict").text
    assert verdict in ("reproduced", "differs")
    first.click()
    banner = _wait(page, ".banner")[0].text
    assert "Changed against the baseline" in banner and "timeout" in banner
    section = _wait(page, f"section.record[data-model='{model}']")[0]
    assert section.find_element("css selector", "h2 .badge").text == "timeout"
    assert "certificate not kept" in section.text  # a timeout's certificate does not count


def test_instance_page_links_record_and_certificate(page, tiny_site, tiny_runs):
    _open(page, tiny_site, "#/instance/tsp-tsplib/tsp-tsplib-1?model=beta")
    section = _wait(page, "section.record[data-model='beta']")[0]
    links = {a.text: a.get_attribute("href") for a in section.find_elements("css selector", "a.file")}
    adir = tiny_runs[0] / "solver" / "beta" / "tsp-tsplib" / "1"
    assert links["certificate"] == (adir / "certificates" / "tsp-tsplib-1.txt").resolve().as_uri()
    assert links["record JSON"] == (adir / "records" / "tsp-tsplib-1.json").resolve().as_uri()
    assert "tour visits city 3 twice" in section.text


def test_a_task_page_shows_each_models_delta_against_the_baseline(page, compare_site):
    model, task, _ = FLIPPED
    _open(page, compare_site, f"#/task/{task}")
    deltas = {d.get_attribute("data-model"): d.text for d in _wait(page, ".model-card .delta", 2)}
    assert "identical" in deltas["beta"]
    assert "within noise" in deltas[model] or "differs" in deltas[model]


def test_every_page_renders_without_console_errors(page, compare_site):
    for route in (
        "#/",
        "#/tasks",
        "#/task/maxcut-mqlib",
        "#/instances",
        "#/instance/maxcut-mqlib/maxcut-mqlib-1",
        "#/items",
        "#/provenance",
        "#/issues",
        "#/compare",
        "#/model/alpha",
        "#/nonsense",
    ):
        _open(page, compare_site, route)
        _wait(page, "main h1")
        errors = _console_errors(page)
        assert not errors, (route, errors)


def test_screenshots(page, compare_site, tmp_path):
    """Screenshots of the main pages of the fabricated runs, each a real, non-empty PNG; with
    TCSEXAM_VIEW_SCREENSHOTS=DIR copied there as tiny-*.png (docs/img/tiny-instance.png and
    tiny-compare.png: an anytime trace and a comparison; the other docs screenshots come from the
    real tiny workflow run, tests/integration/test_view_workflow.py)."""
    for name, route, css in (
        ("leaderboard", "#/", "#leaderboard"),
        ("task", "#/task/maxcut-mqlib?model=beta", "#instance-matrix"),
        ("instance", "#/instance/maxcut-mqlib/maxcut-mqlib-1", "svg.trace"),
        ("compare", "#/compare", "#changes"),
    ):
        _open(page, compare_site, route)
        _wait(page, css)
        path = tmp_path / f"{name}.png"
        assert page.save_screenshot(str(path))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    target = os.environ.get("TCSEXAM_VIEW_SCREENSHOTS")
    if target:
        for f in tmp_path.glob("*.png"):
            browserkit.save_small_png(f, Path(target) / f"tiny-{f.name}")


def test_orspace_workspaces_show_failure_modes_rationale_and_cost(page, tiny_site):
    _open(page, tiny_site, "#/orspace")
    rows = _wait(page, "section.orsp tr[data-ws]", 3)
    text = page.find_element("css selector", "main").text
    assert "wrong objective" in text and "$0.0042" in text
    next(r for r in rows if r.get_attribute("data-ws") == "ws-explain-003").click()
    detail = _wait(page, ".detail h3")[0].find_element("xpath", "..").text
    assert "names the binding constraint" in detail and "the LP is unbounded" in detail


def test_an_incomplete_model_shows_its_status_and_reasons(page, tmp_path):
    from tinyrun import build_site, make_run

    run = make_run(tmp_path / "lite" / "offline", drop={("beta", "construction-sidon-set-500")})
    index = json.loads((run / "index.json").read_text())
    assert index["models"]["beta"]["status"] == "incomplete" and index["models"]["beta"]["index"] is None
    site = build_site(run, tmp_path / "site")
    _open(page, site)
    status = _wait(page, "#leaderboard [data-model='beta'][data-field='status']")[0]
    assert status.get_attribute("data-value") == "incomplete"
    row = status.find_element("xpath", "ancestor::tr").text
    assert "missing" in row and "construction-sidon-set-500" in row
    cell = page.find_element("css selector", "#leaderboard [data-model='beta'][data-field='index']")
    assert cell.get_attribute("data-value") == "" and cell.text == "\u2014"
    order = [c.get_attribute("data-model") for c in _wait(page, "#leaderboard [data-field='index']")]
    assert order == ["alpha", "beta"]  # no Index: last
    _open(page, site, "#/issues")
    assert "construction-sidon-set-500" in _wait(page, "#issues tbody tr")[0].text
