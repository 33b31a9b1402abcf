"""The explorer's and the report's Index against cost: a tiny run whose model alpha has priced
generation records with a transcript and beta none; the Cost page draws alpha only (beta's cost
is unknown, never 0), marks the Pareto front and links each attempt's transcript."""

from __future__ import annotations

import json
import re
from pathlib import Path

import browserkit
import pytest
from tinyrun import build_site, make_run

from tcsexam.agents.accounting import GenerationRecord, StopReason, write_generation
from tcsexam.cli import main
from tcsexam.scoring.cost import add_cost
from tcsexam.suites import load_suite

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def cost_run(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cost-view")
    run = make_run(base / "results" / "lite" / "offline")
    suite = load_suite("lite")
    agent_run = base / "agent-run"
    (agent_run / "logs").mkdir(parents=True)
    (agent_run / "logs" / "theorem.eval").write_bytes(b"PK")  # the transcript the record names
    for item in suite.items:
        folder = base / "solvers" / "alpha" / item / "1"
        folder.mkdir(parents=True)
        record = GenerationRecord(
            workspace_id=item,
            mode=None,
            model={"name": "alpha"},
            stop_reason=StopReason.SUBMITTED,
            input_tokens=500,
            output_tokens=100,
            total_tokens=600,
            cost_usd=0.02,
            wall_time_s=3.0,
            tool_calls=1,
            tool_calls_by_name={"check_proof": 1},
            log_file="logs/theorem.eval",
            sample_uuid=f"u-{item}",
            run_dir=str(agent_run),
        )
        write_generation(folder / "generation.json", record)
    generation = run / "generation.csv"
    argv = ["attempts", "generation", "--attempts", str(run / "attempts.csv"), "--solvers-dir", str(base / "solvers")]
    assert main([*argv, "--output", str(generation)]) == 0
    index = json.loads((run / "index.json").read_text())
    add_cost(index, suite, run / "attempts.csv", generation)
    (run / "index.json").write_text(json.dumps(index))
    site = build_site(run, base / "site", "--report", str(base / "report"))
    return run, site


def test_site_data_and_report_carry_the_cost(cost_run):
    run, site = cost_run
    text = (site / "data" / "run.js").read_text()
    data = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    board = {r["model"]: r for r in data["leaderboard"]}
    assert board["alpha"]["cost"]["cost_usd"] == pytest.approx(0.02 * 20)
    assert board["beta"]["cost"]["cost_usd"] is None and board["beta"]["cost"]["cost_missing"]["no_generation"] == 20
    assert data["cost"]["pareto_front"] == ["alpha"]
    alpha = [a for a in data["cost"]["attempts"] if a["model"] == "alpha"]
    assert len(alpha) == 20 and all(a["links"]["transcript"].endswith("logs/theorem.eval") for a in alpha)
    assert (site / alpha[0]["links"]["transcript"]).resolve() == (run.parents[2] / "agent-run/logs/theorem.eval")
    report = (run.parents[2] / "report" / "leaderboard.html").read_text()
    assert "Pareto front" in report and "$0.4000" in report and "no generation 20" in report
    assert (run.parents[2] / "report" / "cost.png").stat().st_size > 1000


def test_cost_page_in_a_browser(cost_run):
    run, site = cost_run
    with browserkit.browser_or_skip() as page:
        browserkit.open_site(page, site, "#/cost")
        points = browserkit.wait(page, "#cost-plot g.pt")
        assert [p.get_attribute("data-model") for p in points] == ["alpha"]  # beta: unknown, not drawn at 0
        assert "on-front" in points[0].get_attribute("class")
        cost = page.find_element("css selector", "#cost-table [data-model='beta'][data-field='cost_usd']")
        assert cost.get_attribute("data-value") == "" and cost.text == "unknown"
        missing = page.find_element("css selector", "#cost-table [data-model='beta'][data-field='cost_missing']")
        assert re.search(r"no generation\s+20", missing.text)
        links = browserkit.wait(page, "#cost-attempts-table .tr-links a")
        assert any(a.text == "transcript" and a.get_attribute("href").endswith("logs/theorem.eval") for a in links)
        browserkit.open_site(page, site, "#/model/beta")
        card = browserkit.wait(page, "#model-cost")[0]
        assert "unknown" in card.text and re.search(r"no generation\s+20", card.text)
        assert not browserkit.console_errors(page)
