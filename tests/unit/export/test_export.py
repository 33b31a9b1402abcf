"""tcsexam export: the per-instance table (CSV; Parquet when pyarrow is here, else one line naming
the fix) and the Every Eval Ever files, checked against the vendored schema and, where a Python
with the `every-eval-ever` package is named (TCSEXAM_EEE_PYTHON, CI: .ci/eee-venv.sh), by the
package's own `validate` command."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "view"))
from tinyrun import make_run  # noqa: E402

from tcsexam.agents.accounting import GenerationRecord, StopReason, write_generation  # noqa: E402
from tcsexam.cli import main  # noqa: E402
from tcsexam.export.eee import EEE_SCHEMA_RELEASE, SCHEMA_DIR  # noqa: E402
from tcsexam.scoring.cost import add_cost  # noqa: E402
from tcsexam.scoring.generation import write_generation_table  # noqa: E402
from tcsexam.suites import load_suite  # noqa: E402

EEE_PYTHON = os.environ.get("TCSEXAM_EEE_PYTHON")
MODEL_IDS = ["--model-id", "alpha=tcsexam-test/alpha", "beta=tcsexam-test/beta"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """The explorer's tiny run, with priced generation records (a transcript, limits) for alpha's
    theorem items and the cost sections in index.json."""
    base = tmp_path_factory.mktemp("export")
    folder = make_run(base / "results" / "lite" / "offline")
    suite = load_suite("lite")
    agent = base / "agent-run"
    (agent / "logs").mkdir(parents=True)
    (agent / "logs" / "t.eval").write_bytes(b"PK")
    (agent / "run.json").write_text(json.dumps({"limits": {"messages": 40, "tokens": None, "time_s": 600}}))
    for item in suite.tracks["theorem"]:
        dest = base / "solvers" / "alpha" / item / "1"
        dest.mkdir(parents=True)
        write_generation(
            dest / "generation.json",
            GenerationRecord(
                workspace_id=item,
                mode=None,
                model={"name": "alpha", "model": "openai/gpt-x", "provider": "openai", "temperature": 0.0},
                stop_reason=StopReason.SUBMITTED,
                input_tokens=700,
                output_tokens=300,
                total_tokens=1000,
                cost_usd=0.05,
                wall_time_s=12.5,
                tool_calls=3,
                tool_calls_by_name={"bash": 1, "check_proof": 2},
                log_file="logs/t.eval",
                run_dir=str(agent),
            ),
        )
    write_generation_table(folder / "attempts.csv", base / "solvers", folder / "generation.csv")
    index = json.loads((folder / "index.json").read_text())
    add_cost(index, suite, folder / "attempts.csv", folder / "generation.csv")
    (folder / "index.json").write_text(json.dumps(index))
    return folder


def _export(run: Path, out: Path, *extra: str) -> int:
    return main(["-q", "export", str(run), "--output", str(out), *extra])


def test_instance_table_has_every_record_and_attempt(run, tmp_path):
    assert _export(run, tmp_path / "out", "--format", "csv") == 0
    with open(tmp_path / "out" / "instances.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(run / "attempts.csv", newline="") as fh:
        attempts = list(csv.DictReader(fh))
    solver = [a for a in attempts if a["track"] == "solver"]
    assert len(rows) == 3 * len(solver) + len(attempts) - len(solver)  # 3 instances per Solver attempt
    for a in solver:
        relative = json.loads((run / "solver" / a["model"] / a["item"] / "1" / "relative.json").read_text())
        mine = {r["instance"]: r for r in rows if (r["model"], r["item"]) == (a["model"], a["item"])}
        for inst in relative["instances"]:
            assert float(mine[inst["instance"]]["instance_score"]) == inst["score"]
            assert mine[inst["instance"]]["instance_status"] == inst["status"]
        assert all(float(r["attempt_score"]) == float(a["score"]) for r in mine.values())
    crash = next(r for r in rows if r["instance"] == "coloring-dimacs-3" and r["model"] == "beta")
    assert crash["instance_status"] == "crash" and float(crash["instance_score"]) == 0.0
    theorem = [r for r in rows if r["track"] == "theorem" and r["model"] == "alpha"]
    assert all(
        r["generation"] == "recorded" and r["cost_usd"] == "0.05" and r["feedback_calls"] == "2" for r in theorem
    )
    assert all(r["transcript"].endswith("agent-run/logs/t.eval") for r in theorem)
    other = [r for r in rows if r["model"] == "beta"]
    assert all(
        r["generation"] == "none" and r["cost_usd"] == "" and r["cost_missing"] == "no_generation" for r in other
    )


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow is not installed here")
def test_parquet_equals_the_csv(run, tmp_path):
    import pandas as pd

    assert _export(run, tmp_path / "out", "--format", "csv", "parquet") == 0
    table = pd.read_parquet(tmp_path / "out" / "instances.parquet")
    assert len(table) == len(pd.read_csv(tmp_path / "out" / "instances.csv"))


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None, reason="pyarrow is installed here")
def test_parquet_without_pyarrow_is_one_line_naming_the_fix(run, tmp_path, capsys):
    assert _export(run, tmp_path / "out", "--format", "csv", "parquet") != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install pyarrow" in err[0]
    assert not (tmp_path / "out").exists()  # nothing written, not even the CSV


def _eee(run: Path, out: Path) -> dict[str, object]:
    assert _export(run, out, "--format", "eee", "--timestamp", "1765000000", *MODEL_IDS) == 0
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}


def test_eee_aggregate_holds_the_index_its_intervals_and_settings(run, tmp_path):
    files = _eee(run, tmp_path / "out")
    index = json.loads((run / "index.json").read_text())
    aggregates = {k: v for k, v in files.items() if k.endswith(".json")}
    assert sorted(k.split("/")[3] for k in aggregates) == ["alpha", "beta"]
    for key, path in aggregates.items():
        assert key.startswith("data/tcsexam-lite-offline/tcsexam-test/")
        data = json.loads(path.read_text())
        model = data["model_info"]["name"]
        m = index["models"][model]
        assert data["schema_version"] == EEE_SCHEMA_RELEASE and data["retrieved_timestamp"] == "1765000000"
        results = {r["evaluation_result_id"]: r for r in data["evaluation_results"]}
        assert results["index"]["score_details"]["score"] == m["index"]
        ci = results["index"]["score_details"]["uncertainty"]["confidence_interval"]
        assert [ci["lower"], ci["upper"]] == m["index_ci95"] and ci["confidence_level"] == 0.95
        for track, mean in m["track_means"].items():
            assert results[f"track/{track}"]["score_details"]["score"] == mean
        for item, mean in m["task_means"].items():
            assert results[f"task/{item}"]["score_details"]["score"] == mean
        judge = data["eval_library"]["additional_details"]
        assert judge["solver_reference_id"] == index["solver_reference_id"] and judge["solver_protocol"] == "offline"
        detail = data["detailed_evaluation_results"]
        samples = files[detail["file_path"]].read_bytes()
        assert detail["checksum"] == hashlib.sha256(samples).hexdigest()
        assert detail["total_rows"] == len(samples.splitlines())
        lines = [json.loads(x) for x in samples.splitlines()]
        assert {x["evaluation_id"] for x in lines} == {data["evaluation_id"]}
        solver = [x for x in lines if x["metadata"]["track"] == "solver"]
        assert len(solver) == 15 and len(lines) == 30  # 5 tasks x 3 instances + 15 other items
        if model == "alpha":
            gen = results["index"]["generation_config"]["generation_args"]
            assert gen["temperature"] == 0.0 and gen["eval_limits"] == {"message_limit": 40, "time_limit": 600}
            assert data["source_metadata"]["additional_details"]["cost_usd"] == "unknown"  # no records for the rest
            theorem = [x for x in lines if x["metadata"]["track"] == "theorem"]
            assert all(x["token_usage"]["total_tokens"] == 1000 for x in theorem)
        else:
            assert "generation_config" not in results["index"]


def test_eee_export_is_reproducible(run, tmp_path):
    a = _eee(run, tmp_path / "a")
    b = _eee(run, tmp_path / "b")
    assert list(a) == list(b) and all(a[k].read_bytes() == b[k].read_bytes() for k in a)


def test_bad_input_is_one_line_and_writes_nothing(run, tmp_path, capsys):
    assert main(["export", str(tmp_path), "--output", str(tmp_path / "out")]) != 0
    assert "no index.json" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert _export(run, tmp_path / "out", "--format", "eee", "--model-id", "alpha=noslash") != 0
    assert "must read DEVELOPER/MODEL" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert _export(run, tmp_path / "out", "--format", "eee", "--model-id", "gamma=x/y") != 0
    assert "not a model of" in capsys.readouterr().err


def _wheel_schemas() -> dict[str, bytes] | None:
    """The schema files of the every-eval-ever package where one is at hand: a wheel named by
    TCSEXAM_EEE_WHEEL, or the package of TCSEXAM_EEE_PYTHON."""
    wheel = os.environ.get("TCSEXAM_EEE_WHEEL")
    if wheel and Path(wheel).is_file():
        with zipfile.ZipFile(wheel) as z:
            return {
                name: z.read(f"every_eval_ever/schemas/{name}")
                for name in ("eval.schema.json", "instance_level_eval.schema.json")
            }
    if EEE_PYTHON:
        code = "import every_eval_ever.schemas as s, os; print(os.path.dirname(s.__file__))"
        folder = Path(
            subprocess.run([EEE_PYTHON, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        )
        return {name: (folder / name).read_bytes() for name in ("eval.schema.json", "instance_level_eval.schema.json")}
    return None


def _require_eee(what: str) -> None:
    reason = f"{what}: no every-eval-ever here (set TCSEXAM_EEE_PYTHON to a Python that has it: .ci/eee-venv.sh)"
    if os.environ.get("TCSEXAM_REQUIRE_EEE") == "1":
        pytest.fail(reason + " and TCSEXAM_REQUIRE_EEE=1")
    pytest.skip(reason)


def test_vendored_schema_files_are_the_packages():
    wheel = _wheel_schemas()
    if wheel is None:
        _require_eee("comparing the vendored schema files with the package's")
    for name, data in wheel.items():
        assert (SCHEMA_DIR / name).read_bytes() == data, name


def test_the_packages_own_validate_accepts_the_export(run, tmp_path):
    if not EEE_PYTHON:
        _require_eee("the package's validate command")
    out = tmp_path / "out"
    _eee(run, out)
    proc = subprocess.run(
        [EEE_PYTHON, "-m", "every_eval_ever", "validate", "--format", "json", "data/*/*/*/*.json*"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert len(report) == 4 and all(f["valid"] and not f["errors"] and not f["warnings"] for f in report), report
