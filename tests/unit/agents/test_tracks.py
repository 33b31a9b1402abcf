"""A scripted `mockllm` agent writes TCSExam submissions through the real sandbox and the judge's own
checkers (`tcsexam agents solve`), and the existing judges score what it left:

- theorem: it reads the statement, writes a wrong proof, reads Coq's error from `check_proof`,
  writes a correct one, sees it accepted, submits; `tcsexam proof check` finds it complete. A
  second item ends on its message limit without a proof: finished, judged as what it left.
- open conjecture: a refutation, checked then submitted, is complete (resolution refutation).
- construction: a Golomb ruler with a repeated difference is refused by `check_construction`, a
  correct one is handed in as construction.txt; a Sidon set is handed in as a program
  (solver.yaml), which the checker tool runs in the sandbox; `tcsexam construction run` scores both.
- a rerun asks the model nothing; an attempt folder not written by an agent run is refused.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from inspect_ai.model import ModelOutput, get_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_support import TOKENS_IN, TOKENS_OUT, reply, sandbox_config_or_skip, tool_outputs  # noqa: E402

from tcsexam.agents.accounting import read_generation  # noqa: E402
from tcsexam.agents.providers import ModelConfig  # noqa: E402
from tcsexam.agents.tasks import AgentLimits  # noqa: E402
from tcsexam.agents.tracks import SolveSettings, solve  # noqa: E402
from tcsexam.cli import main  # noqa: E402
from tcsexam.errors import InputError  # noqa: E402
from tcsexam.proofs import coq  # noqa: E402
from tcsexam.runner.construction import judge_submission  # noqa: E402
from tcsexam.runner.engine.batch import PoolOptions, RunOptions  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
ITEM_LINE = re.compile(r"task ([a-z0-9][a-z0-9-]*[a-z0-9])\b")

WRONG_PROOF = (
    "From TCSExam Require Import Task.\nTheorem sum_odds_square : statement.\nProof. intro n. reflexivity. Qed.\n"
)
RIGHT_PROOF = (REPO / "solvers/demo-strong/theorem-sum-odds-square/1/proof.v").read_text()
REFUTATION = (REPO / "solvers/demo-strong/conjecture-fermat-numbers-prime/1/proof.v").read_text()
BAD_RULER = "0 1 2 4 8 16 32 64 128 256 512 1024 2048 4096\n"  # 1-0 = 2-1
OPTIMAL_RULER = "# the optimal 14-mark ruler\n0 4 6 20 35 52 59 77 78 86 89 99 122 127\n"
MIAN_CHOWLA = """import sys
marks, sums = [], set()
for x in range(1, 501):
    new = {x + y for y in marks + [x]}
    if not new & sums:
        marks.append(x)
        sums |= new
open(sys.argv[1], "w").write(" ".join(map(str, marks)) + "\\n")
"""
SOLVER_YAML = 'command: ["python3", "build.py", "{solution}"]\n'

Step = tuple[str, dict]


def theorem_steps() -> list[Step]:
    return [
        ("bash", {"command": "ls -R && cat task/theorem-sum-odds-square.v"}),
        ("text_editor", {"command": "create", "path": "submission/proof.v", "file_text": WRONG_PROOF}),
        ("check_proof", {}),
        ("text_editor", {"command": "create", "path": "submission/proof.v", "file_text": RIGHT_PROOF}),
        ("check_proof", {}),
        ("submit", {"answer": "proved by induction"}),
    ]


#: what an agent must not reach: the checkout's reference proofs and task files, the run's other folders
PEEK = f"cat {REPO}/solvers/demo-strong/theorem-gauss-sum/1/proof.v; ls {REPO}/config/tasks {REPO}/references"


def wandering_steps() -> list[Step]:
    # looks for the reference proof, then never writes one: stopped by its message limit
    return [("bash", {"command": PEEK})] + [("bash", {"command": "cat task/*.v"})] * 50


def refutation_steps() -> list[Step]:
    return [
        ("text_editor", {"command": "create", "path": "submission/proof.v", "file_text": REFUTATION}),
        ("check_proof", {}),
        ("submit", {"answer": "refuted: 641 divides F5"}),
    ]


def golomb_steps() -> list[Step]:
    return [
        ("bash", {"command": "cat task/instance.yaml"}),
        ("text_editor", {"command": "create", "path": "submission/construction.txt", "file_text": BAD_RULER}),
        ("check_construction", {}),
        ("text_editor", {"command": "create", "path": "submission/construction.txt", "file_text": OPTIMAL_RULER}),
        ("check_construction", {}),
        ("submit", {"answer": "the optimal ruler"}),
    ]


def sidon_steps() -> list[Step]:
    return [
        ("text_editor", {"command": "create", "path": "submission/build.py", "file_text": MIAN_CHOWLA}),
        ("text_editor", {"command": "create", "path": "submission/solver.yaml", "file_text": SOLVER_YAML}),
        ("check_construction", {}),
        ("submit", {"answer": "Mian-Chowla"}),
    ]


class Scripted:
    """A mockllm output function: the next step of the script of the item its prompt names."""

    def __init__(self, scripts: dict[str, list[Step]]):
        self.scripts, self.calls = scripts, {}

    def __call__(self, messages, tools, tool_choice, config) -> ModelOutput:
        text = " ".join(m.text for m in messages if m.role == "user")  # the item's prompt
        found = ITEM_LINE.search(text)
        item = found.group(1) if found else "?"
        self.calls[item] = self.calls.get(item, 0) + 1
        script = self.scripts[item]
        step = sum(1 for m in messages if m.role == "assistant")
        return reply(*script[min(step, len(script) - 1)])

    def model(self):
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def _settings(root: Path, track: str, items: tuple[str, ...], **kw) -> SolveSettings:
    return SolveSettings(
        track=track,
        output=root / f"run-{track}",
        solvers_dir=root / "solvers",
        attempt="1",
        model=ModelConfig(model="mockllm/model", name="scripted"),
        suite="lite" if track != "open_conjecture" else None,
        items=items,
        sandbox=sandbox_config_or_skip(call_time_s=60),
        limits=AgentLimits(message_limit=kw.pop("message_limit", 30)),
        max_checks=kw.pop("max_checks", 4),
        **kw,
    )


def _need_coq() -> None:
    if not coq.coqc_version():
        pytest.skip("coqc is not installed here (make setup-coq)")


@pytest.fixture(scope="module")
def theorem_run(tmp_path_factory):
    _need_coq()
    root = tmp_path_factory.mktemp("tracks")
    agent = Scripted({"theorem-sum-odds-square": theorem_steps(), "theorem-gauss-sum": wandering_steps()})
    settings = _settings(root, "theorem", ("theorem-sum-odds-square", "theorem-gauss-sum"), message_limit=20)
    return settings, agent, solve(settings, model=agent.model())


def test_the_agent_proves_a_theorem_after_a_failed_check(theorem_run):
    settings, _, summary = theorem_run
    assert summary["complete"] and summary["finished"] == 2, summary
    assert summary["stop_reasons"] == {"message_limit": 1, "submitted": 1}
    outputs = tool_outputs(settings.output, "theorem-sum-odds-square")
    assert any("Definition statement" in o for o in outputs)  # it read the statement
    checks = [o for o in outputs if o.startswith("check ")]
    assert checks[0].startswith("check 1 (3 checks left): status invalid") and "Unable to unify" in checks[0]
    assert checks[1].startswith("check 2 (2 checks left): status complete")
    folder = settings.solvers_dir / "scripted" / "theorem-sum-odds-square" / "1"
    assert sorted(p.name for p in folder.iterdir()) == ["generation.json", "proof.v"]
    assert (folder / "proof.v").read_text() == RIGHT_PROOF
    record = read_generation(folder / "generation.json")
    assert record.final and record.stop_reason == "submitted" and record.mode == "theorem"
    assert record.tool_calls_by_name == {"bash": 1, "check_proof": 2, "submit": 1, "text_editor": 2}
    assert (record.input_tokens, record.output_tokens) == (6 * TOKENS_IN, 6 * TOKENS_OUT)
    assert record.log_file and (settings.output / record.log_file).is_file()


def test_the_judge_scores_what_the_agent_left(theorem_run, tmp_path):
    settings, _, _ = theorem_run
    folder = settings.solvers_dir / "scripted" / "theorem-sum-odds-square" / "1"
    verdict = tmp_path / "verdict.json"
    args = ["proof", "check", "--task", "theorem-sum-odds-square", "--submission", str(folder)]
    assert main([*args, "--output", str(verdict)]) == 0
    got = json.loads(verdict.read_text())
    assert got["status"] == "complete" and (got["model"], got["attempt"]) == ("scripted", "1")
    # the item that ran out of messages is finished (its record), with nothing to judge: a missing row
    other = settings.solvers_dir / "scripted" / "theorem-gauss-sum" / "1"
    assert sorted(p.name for p in other.iterdir()) == ["generation.json"]
    assert read_generation(other / "generation.json").stop_reason == "message_limit"


def test_the_checkout_with_its_reference_proofs_is_hidden_from_the_agent(theorem_run):
    settings, _, _ = theorem_run
    peek = tool_outputs(settings.output, "theorem-gauss-sum")[0]
    assert "No such file" in peek and "Qed" not in peek and "theorem-gauss-sum.yaml" not in peek, peek


def test_a_rerun_asks_nothing_and_a_foreign_attempt_is_refused(theorem_run):
    settings, _, _ = theorem_run
    again = Scripted({})
    summary = solve(settings, model=again.model())
    assert again.calls == {} and summary["generated_now"] == 0 and summary["complete"]
    foreign = settings.solvers_dir / "scripted" / "theorem-even-or-odd" / "1"
    foreign.mkdir(parents=True)
    (foreign / "proof.v").write_text(RIGHT_PROOF)
    other = SolveSettings(
        **{**settings.__dict__, "items": ("theorem-even-or-odd",), "output": settings.output.parent / "r2"}
    )
    with pytest.raises(InputError, match="no agent run wrote"):
        solve(other, model=again.model())
    assert not other.output.exists()  # refused before anything is written


def test_an_open_conjecture_is_refuted(tmp_path):
    _need_coq()
    agent = Scripted({"conjecture-fermat-numbers-prime": refutation_steps()})
    settings = _settings(tmp_path, "open_conjecture", ("conjecture-fermat-numbers-prime",))
    summary = solve(settings, model=agent.model())
    assert summary["complete"], summary
    (check,) = [o for o in tool_outputs(settings.output, "conjecture-fermat-numbers-prime") if o.startswith("check ")]
    assert "status complete" in check and "resolution: refutation" in check
    folder = settings.solvers_dir / "scripted" / "conjecture-fermat-numbers-prime" / "1"
    verdict = tmp_path / "v.json"
    args = ["proof", "check", "--task", "conjecture-fermat-numbers-prime", "--submission", str(folder)]
    assert main([*args, "--output", str(verdict)]) == 0
    assert json.loads(verdict.read_text())["resolution"] == "refutation"


def test_constructions_checked_then_judged(tmp_path):
    agent = Scripted({"construction-golomb-ruler-14": golomb_steps(), "construction-sidon-set-500": sidon_steps()})
    settings = _settings(tmp_path, "construction", ("construction-golomb-ruler-14", "construction-sidon-set-500"))
    summary = solve(settings, model=agent.model())
    assert summary["complete"] and summary["stop_reasons"] == {"submitted": 2}, summary
    checks = [o for o in tool_outputs(settings.output, "construction-golomb-ruler-14") if o.startswith("check ")]
    assert "status certificate_failed" in checks[0]
    assert "status ok" in checks[1] and "value: 127" in checks[1] and "reward: 1.0" in checks[1]
    (sidon,) = [o for o in tool_outputs(settings.output, "construction-sidon-set-500") if o.startswith("check ")]
    assert "status ok" in sidon and "value: 20" in sidon  # the program ran (the baseline: reward 0)
    base = settings.solvers_dir / "scripted"
    assert sorted(p.name for p in (base / "construction-sidon-set-500" / "1").iterdir()) == [
        "build.py",
        "generation.json",
        "solver.yaml",
    ]
    for item, value, reward in (("construction-golomb-ruler-14", 127, 1.0), ("construction-sidon-set-500", 20, 0.0)):
        records = tmp_path / item / "records.json"
        args = ["construction", "run", "--task", item, "--submission", str(base / item / "1"), "--attempt", "1"]
        assert main([*args, "--output", str(records), "--no-ray"]) == 0
        (record,) = json.loads(records.read_text())
        assert (record["status"], record["A"], record["reward"]) == ("ok", value, reward), record


def hostile_steps() -> list[Step]:
    return [
        ("bash", {"command": "ln -s /etc/passwd submission/proof.v && mkfifo submission/pipe && ls -l submission"}),
        ("check_proof", {}),
        ("submit", {"answer": "a link"}),
    ]


def test_a_linked_proof_is_neither_checked_nor_handed_in(tmp_path):
    _need_coq()
    agent = Scripted({"theorem-even-or-odd": hostile_steps()})
    settings = _settings(tmp_path, "theorem", ("theorem-even-or-odd",))
    summary = solve(settings, model=agent.model())
    assert summary["complete"] and summary["stop_reasons"] == {"submitted": 1}, summary
    check = tool_outputs(settings.output, "theorem-even-or-odd")[1]
    assert "no submission/proof.v yet" in check and "links are not followed" in check and "root:" not in check
    folder = settings.solvers_dir / "scripted" / "theorem-even-or-odd" / "1"
    assert sorted(p.name for p in folder.iterdir()) == ["generation.json"]  # judged as what it left: nothing
    left = (settings.output / "samples" / "theorem-even-or-odd" / "left_out.txt").read_text()
    assert "submission/proof.v (a link or special file)" in left and "submission/pipe" in left


COPY_SECRET = "import shutil, sys\nshutil.copyfile(sys.argv[2], sys.argv[1])\n"


@pytest.mark.parametrize("hide", [False, True])
def test_the_checker_hides_the_given_folders_from_a_construction_program(tmp_path, hide):
    """What `check_construction` passes as hidden (the solvers and run folders, the checkout) is out
    of the program's sight; outside /tmp (private in the sandbox) and the working folder, only
    that hides it."""
    sandbox_config_or_skip()
    secret = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="tcsexam-test-secret-"))
    try:
        secret.chmod(0o755)
        (secret / "ruler.txt").write_text(OPTIMAL_RULER)
        (secret / "ruler.txt").chmod(0o644)
        sub = tmp_path / "m" / "construction-golomb-ruler-14" / "1"
        sub.mkdir(parents=True)
        (sub / "build.py").write_text(COPY_SECRET)
        (sub / "solver.yaml").write_text(f'command: ["python3", "build.py", "{{solution}}", "{secret}/ruler.txt"]\n')
        record = judge_submission(
            task="construction-golomb-ruler-14",
            submission=sub,
            output=tmp_path / "out" / "records.json",
            attempt="1",
            options=RunOptions(progress=False, pool=PoolOptions(workers=1, use_ray=False)),
            hidden=(str(secret),) if hide else (),
        )
    finally:
        shutil.rmtree(secret)
    assert (record["status"] != "ok") if hide else (record["status"], record["A"]) == ("ok", 127), record


ENV_PROBE = (
    "import os, sys\n"
    "leaked = [k for k in os.environ if 'API_KEY' in k]\n"
    "open(sys.argv[1], 'w').write('# leaked\\n' if leaked else sys.argv[2].replace(',', ' ') + '\\n')\n"
)


def test_an_api_key_of_the_harness_never_reaches_a_checked_program(tmp_path, monkeypatch):
    sandbox_config_or_skip()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    sub = tmp_path / "m" / "construction-golomb-ruler-14" / "1"
    sub.mkdir(parents=True)
    (sub / "build.py").write_text(ENV_PROBE)
    ruler = ",".join(OPTIMAL_RULER.splitlines()[1].split())
    (sub / "solver.yaml").write_text(f'command: ["python3", "build.py", "{{solution}}", "{ruler}"]\n')
    record = judge_submission(
        task="construction-golomb-ruler-14",
        submission=sub,
        output=tmp_path / "out" / "records.json",
        attempt="1",
        options=RunOptions(progress=False, pool=PoolOptions(workers=1, use_ray=False)),
    )
    assert (record["status"], record["A"]) == ("ok", 127), record  # "# leaked" alone would be invalid
