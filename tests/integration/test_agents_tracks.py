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
from the session's own judgment, with no model request and no candidate run.

A second cohort on the same server: a model that hands in a table of the published instances'
answers (demo-memo's; the candidate scan and the twins flag it) and runs out of messages on the
theorem (judged as what it left: 0), and one whose candidate only knows its development
instances (good feedback, nothing on the evaluation instances)."""

from __future__ import annotations

import contextlib
import csv
import hashlib
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

from tcsexam.agents.track_solver import dev_instances  # noqa: E402
from tcsexam.proofs import coq  # noqa: E402
from tcsexam.records.digest import hash_file  # noqa: E402
from tcsexam.tasks import load_task  # noqa: E402

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
        cost = index["models"]["scripted"]["cost"]  # tokens and prices of every attempt's session
        assert cost["recorded"] == cost["priced"] == 4 and cost["cost_usd"] > 0 and cost["feedback_calls"] >= 4
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


# ---- models that game the development set, memorise the published answers, run out of budget -----

MEMO = ROOT / "solvers" / "demo-memo" / SOLVER / "1"


def overfit_candidate(dev_hashes: list[str]) -> str:
    """Good on the development instances it saw (keyed on their sha256), nothing elsewhere."""
    return (
        "import hashlib, sys\n"
        f"SEEN = {sorted(dev_hashes)!r}\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "n = int(data.split()[0])\n"
        "seen = hashlib.sha256(data).hexdigest() in SEEN\n"
        "open(sys.argv[2], 'w').write(' '.join(str(v % 2 if seen else 0) for v in range(n)) + '\\n')\n"
    )


class Cohort(Model):
    """Two scripted models on one server, told apart by the request's model name: `memoriser`
    hands in demo-memo's table of the published instances' answers (their reference certificates)
    and runs out of messages on the theorem; `overfitter` hands in a candidate that only knows its development instances."""

    def __init__(self, dev_hashes: list[str]):
        super().__init__()
        self.by_model = {
            "memoriser": {
                SOLVER: [
                    _edit("submission/solver.yaml", (MEMO / "solver.yaml").read_text()),
                    _edit("submission/solve.py", (MEMO / "solve.py").read_text()),
                    _edit("submission/answers.py", (MEMO / "answers.py").read_text()),
                    ("run_dev", {}),
                    ("submit", {"answer": "a table"}),
                ],
                THEOREM: [_edit("submission/proof.v", WRONG_PROOF), *[("bash", {"command": "ls"})] * 20],
            },
            "overfitter": {
                SOLVER: [
                    _edit("submission/solver.yaml", SOLVER_YAML),
                    _edit("submission/solve.py", overfit_candidate(dev_hashes)),
                    ("run_dev", {}),
                    ("submit", {"answer": "tuned on dev"}),
                ],
                THEOREM: scripts()[THEOREM],
            },
        }

    def __call__(self, body: dict) -> Entry:
        name = body.get("model", "?")
        self.scripts = self.by_model[name]
        entry = super().__call__(body)
        item = self.asked[-1]
        self.tool_results[(name, item)] = self.tool_results.pop(item)
        return entry


def test_overfitting_memorising_and_a_spent_budget_are_judged_as_what_they_left(tmp_path):
    task = load_task(ROOT / "config" / "test" / "tasks" / f"{SOLVER}.yaml")
    dev = [hashlib.sha256(data).hexdigest() for data in dev_instances(task, 2).values()]
    assert not set(dev) & {hash_file(i.path) for i in task.instances}
    model = Cohort(dev)
    with ScriptedOpenAI(route=model) as server:
        ws = workspace(tmp_path / "ws", server.base_url)
        config = yaml.safe_load((ws / CONFIG).read_text())
        endpoint = config["agents"]["models"].pop("scripted")
        config["agents"]["models"] = {
            "memoriser": {**endpoint, "model": "memoriser", "limits": {"messages": 12}},
            "overfitter": {**endpoint, "model": "overfitter"},
        }
        config["agents"]["tcsexam"]["tracks"] = ["solver", "theorem"]
        config["models"] = [{"name": "memoriser"}, {"name": "overfitter"}]
        config["allow_missing"] = True  # the construction and the conjecture are not generated here
        config["twins"] = {"seed": 3}
        (ws / CONFIG).write_text(yaml.safe_dump(config, sort_keys=False))
        snakemake(ws, "--cores", "2", "--configfile", CONFIG, timeout=1500)

    index = json.loads((ws / OFFLINE / "index.json").read_text())
    rows = {(r["model"], r["item"]): r for r in csv.DictReader(open(ws / OFFLINE / "attempts.csv"))}

    # the published answers: the candidate scan and the twins flag them
    memo = index["models"]["memoriser"]
    issues = {i["reason"]: i for i in memo["issues"]}
    assert issues["hardcoded_answers_suspected"]["tasks"] == [SOLVER]
    assert {f["file"] for f in memo["candidate_scan"]["findings"]} == {"answers.py"}
    twins = index["twins"]["models"]["memoriser"][SOLVER]
    assert twins["flagged"] and issues["memorisation_suspected"]["tasks"] == [SOLVER], twins
    assert twins["original"] > twins["twin"]  # the table answers the originals only

    # the budget: the theorem session ended on its message limit, judged as what it left (0)
    record = json.loads((ws / SOLVERS.replace("scripted", "memoriser") / THEOREM / "1" / "generation.json").read_text())
    assert record["stop_reason"] == "message_limit"
    assert rows[("memoriser", THEOREM)]["score_status"] == "valid" and float(rows[("memoriser", THEOREM)]["score"]) == 0

    # overfitting: its development feedback was good, the evaluation instances score nothing
    runs = [t for t in model.tool_results[("overfitter", SOLVER)] if t.startswith("run ")]
    assert runs and runs[-1].count(": ok value ") == 2 and "relative score" in runs[-1]
    assert rows[("overfitter", SOLVER)]["score_status"] == "valid" and float(rows[("overfitter", SOLVER)]["score"]) == 0
    assert "hardcoded_answers_suspected" not in {i["reason"] for i in index["models"]["overfitter"]["issues"]}
    assert float(rows[("overfitter", THEOREM)]["score"]) == 1.0
