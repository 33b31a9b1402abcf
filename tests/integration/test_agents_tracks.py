"""From a model endpoint to an Index in one `snakemake` run (config/test/agents-tracks.yaml): a
scripted OpenAI-compatible server (tests/unit/agents/openai_server.py, real HTTP) plays a model
that, in the agents' sandbox with the judge's checkers as tools,

- writes a Solver candidate, reads its development feedback (every instance certificate_failed),
  fixes it and submits (its session's candidate is judged online inside the generation);
- proves a theorem after a failed check, proves the open conjecture, builds the construction.

The first `snakemake` is killed (SIGKILL, the whole process group) while the Solver session is
held by the server, after the theorem's was finished; the rerun (`--rerun-incomplete`) asks the
model nothing for the finished items and ends with a complete Index, every item judged by the
evaluation's own rules (offline). The same generation then gives the online protocol's Index
from the session's own judgment, with no model request and no candidate run."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from test_workflow import ROOT, SNAKEMAKE, _env, snakemake

sys.path.insert(0, str(ROOT / "tests" / "unit" / "agents"))
from agent_support import sandbox_config_or_skip  # noqa: E402
from openai_server import Entry, ScriptedOpenAI, completion, tool_call  # noqa: E402

from tcsexam.proofs import coq  # noqa: E402

pytestmark = pytest.mark.slow
CONFIG = "agents-tracks.yaml"
RESULTS = "results/agents-tracks-test"
OFFLINE = f"{RESULTS}/agents-tiny/offline"
ONLINE = f"{RESULTS}/agents-tiny/online"
RUNS = f"{RESULTS}/agents/agents-tiny/scripted"
SOLVERS = f"{RESULTS}/solvers/scripted"
THEOREM, SOLVER = "theorem-sum-odds-square", "maxcut-mqlib"
CONSTRUCTION, CONJECTURE = "construction-golomb-ruler-14", "conjecture-rev-app-distributes"
ITEM_LINE = re.compile(r"task ([a-z0-9][a-z0-9-]*[a-z0-9])\b")
DEMO = ROOT / "solvers" / "demo-strong"

SOLVER_YAML = 'command: ["python3", "solve.py", "{instance}", "{solution}"]\nthreads: 1\n'
BROKEN = "import sys\nopen(sys.argv[2], 'w').write('2 2 2\\n')\n"
ALTERNATE = (
    "import sys\n"
    "n = int(open(sys.argv[1]).readline().split()[0])\n"
    "open(sys.argv[2], 'w').write(' '.join(str(v % 2) for v in range(n)) + '\\n')\n"
)
WRONG_PROOF = "From TCSExam Require Import Task.\nTheorem sum_odds_square : statement.\nProof. reflexivity. Qed.\n"


def _edit(path: str, text: str) -> tuple[str, dict]:
    return ("text_editor", {"command": "create", "path": path, "file_text": text})


def scripts() -> dict[str, list[tuple[str, dict]]]:
    golomb = DEMO / CONSTRUCTION / "1"
    return {
        SOLVER: [
            ("bash", {"command": "ls dev && head -n 2 dev/*"}),
            _edit("submission/solver.yaml", SOLVER_YAML),
            _edit("submission/solve.py", BROKEN),
            ("run_dev", {}),
            _edit("submission/solve.py", ALTERNATE),
            ("run_dev", {}),
            ("submit", {"answer": "alternating sides"}),
        ],
        THEOREM: [
            _edit("submission/proof.v", WRONG_PROOF),
            ("check_proof", {}),
            _edit("submission/proof.v", (DEMO / THEOREM / "1" / "proof.v").read_text()),
            ("check_proof", {}),
            ("submit", {"answer": "by induction"}),
        ],
        CONJECTURE: [
            _edit("submission/proof.v", (DEMO / CONJECTURE / "1" / "proof.v").read_text()),
            ("check_proof", {}),
            ("submit", {"answer": "proved"}),
        ],
        CONSTRUCTION: [
            _edit("submission/solver.yaml", (golomb / "solver.yaml").read_text()),
            _edit("submission/build.py", (golomb / "build.py").read_text()),
            ("check_construction", {}),
            ("submit", {"answer": "a ruler"}),
        ],
    }


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class Model:
    """The scripted model: the next step of the script of the item the prompt names (the step is
    the number of assistant messages so far); `stall`: items whose requests the server holds."""

    def __init__(self):
        self.scripts = scripts()
        self.stall: dict[str, float] = {}
        self.asked: list[str] = []
        self.tool_results: dict[str, list[str]] = {}

    def __call__(self, body: dict) -> Entry:
        messages = body.get("messages", [])
        prompt = " ".join(_text(m) for m in messages if m.get("role") == "user")
        found = ITEM_LINE.search(prompt)
        item = found.group(1) if found else "?"
        self.asked.append(item)
        self.tool_results[item] = [_text(m) for m in messages if m.get("role") == "tool"]
        step = sum(1 for m in messages if m.get("role") == "assistant")
        script = self.scripts[item]
        name, arguments = script[min(step, len(script) - 1)]
        return completion(None, tool_calls=[tool_call(name, arguments)], delay=self.stall.get(item, 0.0))


def workspace(dest: Path, base_url: str) -> Path:
    """A copy of the workflow (its rules, schemas, config, the reference solvers; the instances
    linked), the tiny agents config pointed at the scripted server."""
    dest.mkdir(parents=True)
    shutil.copy2(ROOT / "Snakefile", dest / "Snakefile")
    for name in ("rules", "workflow", "config", "envs"):
        shutil.copytree(ROOT / name, dest / name)
    shutil.copytree(ROOT / "solvers" / "reference", dest / "solvers" / "reference")
    (dest / "references").mkdir()
    (dest / "references" / "instances").symlink_to(ROOT / "references" / "instances")
    config = yaml.safe_load((ROOT / "config" / "test" / CONFIG).read_text())
    config["agents"]["models"]["scripted"]["base_url"] = base_url
    (dest / CONFIG).write_text(yaml.safe_dump(config, sort_keys=False))
    return dest


def _wait_until(done, child: subprocess.Popen, what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if child.poll() is not None:
            raise AssertionError(f"snakemake ended ({child.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} in {timeout} s")
        time.sleep(0.5)


def _wait_for(path: Path, child: subprocess.Popen) -> None:
    _wait_until(path.is_file, child, f"{path} was written")


@pytest.fixture(autouse=True)
def _needs():
    sandbox_config_or_skip()
    if not coq.coqc_version():
        pytest.skip("coqc is not installed here (make setup-coq)")


def test_an_endpoint_to_an_index_in_one_snakemake_run_killed_and_resumed(tmp_path):
    model = Model()
    model.stall = {SOLVER: 3600.0}  # the Solver session is held until the run is killed
    with ScriptedOpenAI(route=model) as server:
        ws = workspace(tmp_path / "ws", server.base_url)
        args = ["--cores", "2", "--configfile", CONFIG]
        with subprocess.Popen(
            [SNAKEMAKE, *args],
            cwd=ws,
            env=_env(ws),
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "first.log", "w"),  # noqa: SIM115 (closed with the process)
            start_new_session=True,
        ) as child:
            try:
                _wait_for(ws / SOLVERS / THEOREM / "1" / "generation.json", child)
                _wait_until(lambda: SOLVER in model.asked, child, "the Solver session asked the model")
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{(tmp_path / 'first.log').read_text()[-3000:]}") from None
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        assert THEOREM in model.asked and SOLVER in model.asked
        assert not (ws / SOLVERS / SOLVER).exists()  # the held session left nothing
        finished = {
            i for i in (THEOREM, CONJECTURE, CONSTRUCTION) if (ws / SOLVERS / i / "1" / "generation.json").is_file()
        }
        assert THEOREM in finished

        model.stall, model.asked = {}, []
        snakemake(ws, "--unlock", "--configfile", CONFIG)
        proc = snakemake(ws, *args, "--rerun-incomplete", timeout=1200)
        assert not finished & set(model.asked), (finished, model.asked)  # nothing asked again
        assert SOLVER in model.asked
        requests = server.count

        # the Solver session: feedback read, candidate fixed; judged online inside the generation
        runs = [t for t in model.tool_results[SOLVER] if t.startswith("run ")]
        assert runs[0].count(": certificate_failed") == 2 and runs[1].count(": ok value ") == 2
        online = json.loads((ws / RUNS / "solver" / "1" / "generation.json").read_text())["online"]
        assert online["judged"] == {"judged": 1}
        published = Path(online["online_dir"])
        published = published if published.is_absolute() else ws / published
        judged = json.loads((published / "scripted" / SOLVER / "1" / "records.json").read_text())
        assert [r["status"] for r in judged] == ["ok", "ok"]
        # the theorem: proved after a failed check
        checks = [t for t in model.tool_results.get(THEOREM, []) if t.startswith("check ")] or None
        if checks is not None:  # asked in this run only when the first run had not finished it
            assert "status complete" not in checks[0] and "status complete" in checks[1]

        # the Index: every item judged by the evaluation's own rules, complete
        index = json.loads((ws / OFFLINE / "index.json").read_text())
        assert index["status"] == "complete", proc.stderr[-3000:]
        rows = {r["item"]: r for r in csv.DictReader(open(ws / OFFLINE / "attempts.csv"))}
        assert set(rows) == {THEOREM, SOLVER, CONSTRUCTION, CONJECTURE}
        assert {r["score_status"] for r in rows.values()} == {"valid"}
        assert float(rows[THEOREM]["score"]) == 1.0 and float(rows[CONJECTURE]["score"]) == 1.0
        assert float(rows[CONSTRUCTION]["score"]) > 0
        assert rows[SOLVER]["solver_protocol"] == "offline" and float(rows[SOLVER]["score"]) > 0
        assert (ws / OFFLINE / "proof" / "scripted" / THEOREM / "1" / "verdict.json").is_file()
        offline_records = json.loads((ws / OFFLINE / "solver" / "scripted" / SOLVER / "1" / "records.json").read_text())

        # the online protocol from the same generation: no model request, no candidate run
        proc = snakemake(ws, *args, "--config", "protocol=online")
        assert server.count == requests
        assert "rule run:" not in proc.stderr and "localrule run:" not in proc.stderr
        online_index = json.loads((ws / ONLINE / "index.json").read_text())
        assert online_index["solver_protocol"] == "online" and online_index["status"] == "complete"
        table = {r["item"]: r for r in csv.DictReader(open(ws / ONLINE / "attempts.csv"))}
        assert table[SOLVER]["solver_protocol"] == "online"
        ingested = json.loads((ws / ONLINE / "solver" / "scripted" / SOLVER / "1" / "records.json").read_text())
        assert [r["A"] for r in ingested] == [r["A"] for r in offline_records]  # one candidate, judged twice apart
