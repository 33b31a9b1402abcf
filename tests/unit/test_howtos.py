"""CONTRIBUTING.md's how-tos, each walked through once with a toy: a problem, a sandbox and a track.

Each toy is a real module (written into a temporary package, as it would be written under
src/tcsexam) registered the way CONTRIBUTING says, then put through the code paths that use it:

- the toy problem (number partitioning) through every check of the shared conformance suite
  (tests/unit/problems/test_conformance.py) and `tcsexam check`;
- the toy sandbox (the program run through env(1) with a marker variable) chosen by name and by
  `auto`, running real commands through the limiter, a limit enforced, a missing piece named;
- the toy track from its row builder through sealed row files and attempts.csv to the Index. The
  closed vocabulary (`tcsexam.suites.Track`) is not edited here: adding the member is emulated by
  giving the modules that read `TRACKS` and `WEIGHTS` the extended tuple and mapping.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from tcsexam import problems, suites
from tcsexam.attempts import rows
from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.limits import Limits
from tcsexam.records import Termination
from tcsexam.runner import sandboxes
from tcsexam.scoring.index import score_files

PROBLEM_TESTS = Path(__file__).resolve().parent / "problems"
TOY = "toy_plugins"

PARTITION = '''
"""Number partitioning (a toy): `n`, then n non-negative integer weights. Certificate: one side (0 or
1) per weight in order, optionally with a `value <difference>` line. Value: the difference between
the two sides' sums (minimize). Reward: optimum / value when the task gives the optimum."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tcsexam.errors import InputError
from tcsexam.problems import _common as c
from tcsexam.problems.solver_base import InstanceFile, VectorProblem


@dataclass(frozen=True, eq=False)
class PartitionInstance:
    n: int
    weights: np.ndarray


def parse_partition_bytes(data: bytes, path: Path | str = "<partition>") -> PartitionInstance:
    tokens = data.split()
    values = c.ints_or_none(tokens)
    if values is None:
        i = c.first_bad_int(tokens)
        raise InputError(f"{path}: line {c.line_of_token(data, i)}: {c.show(tokens[i])} is not an integer")
    if values.size == 0 or values[0] < 1 or values.size != 1 + values[0]:
        raise InputError(f"{path}: expected the count n and then n weights")
    if (values[1:] < 0).any():
        raise InputError(f"{path}: a weight is negative")
    return PartitionInstance(int(values[0]), values[1:].astype(np.int64))


class Partition(VectorProblem[PartitionInstance]):
    direction = "minimize"
    instance_file = InstanceFile("partition", ".txt", parse_partition_bytes, bytes_per_entry=4)
    certificate_format = "one side (0 or 1) per weight in order; optional 'value <difference>' line"
    best_known = ("optimum",)
    entry = "side"

    def vector_value(self, instance: PartitionInstance, side: np.ndarray, claimed: float | None) -> float:
        if side.size != instance.n:
            raise c.failed(f"certificate has {side.size} sides, the instance has {instance.n} weights", claimed)
        if ((side != 0) & (side != 1)).any():
            raise c.failed("sides must be 0 or 1", claimed)
        ones = int(instance.weights[side == 1].sum())
        return float(abs(ones - (int(instance.weights.sum()) - ones)))

    def describe(self, value: float) -> str:
        return f"difference {c.fmt(value)}"

    def generate(self, rng: np.random.Generator, size: int) -> str:
        n = max(2, int(size))
        return f"{n}\\n" + " ".join(map(str, rng.integers(1, 100, size=n).tolist())) + "\\n"
'''

ENV_SANDBOX = '''
"""`toy`: the program run through env(1) with TOY_SANDBOX=1 set; no isolation of its own (a real
one wraps the program in its isolation layer here, as bwrap.py does), the host's limiter applies
the limits as for every wrapping sandbox."""

from __future__ import annotations

import os

from tcsexam.errors import InputError
from tcsexam.runner.limiter import Launch, RunSpec
from tcsexam.runner.sandboxes.base import WrappingSandbox


class EnvSandbox(WrappingSandbox):
    name = "toy"
    isolates_files = False  # the program writes wherever its uid can
    EXECUTABLE = "/usr/bin/env"

    def check_available(self) -> None:
        if not os.access(self.EXECUTABLE, os.X_OK):
            raise InputError(f"sandbox toy: {self.EXECUTABLE} not found: install coreutils")

    def prepare(self, spec: RunSpec) -> Launch:
        return Launch([self.EXECUTABLE, "TOY_SANDBOX=1", *spec.argv], spec.cwd, dict(spec.env))
'''


@pytest.fixture
def toy_package(tmp_path, monkeypatch):
    """A package `toy_plugins` on sys.path: `write(name, source)` adds the module toy_plugins.<name>."""
    root = tmp_path / "plugins"
    (root / TOY).mkdir(parents=True)
    (root / TOY / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))

    def write(name: str, source: str) -> str:
        (root / TOY / f"{name}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        return f"{TOY}.{name}"

    yield write
    for name in [m for m in sys.modules if m == TOY or m.startswith(f"{TOY}.")]:
        del sys.modules[name]


# ---------------------------------------------------------------------------------------------
# a problem


def _conformance_module(monkeypatch):
    """A private copy of the shared conformance suite (it imports `cases` from its folder)."""
    monkeypatch.syspath_prepend(str(PROBLEM_TESTS))
    spec = importlib.util.spec_from_file_location("howto_conformance", PROBLEM_TESTS / "test_conformance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parametrized(fn) -> dict[str, list]:
    """argument name -> the values of `fn`'s `pytest.mark.parametrize` (one argument's lists only)."""
    out = {}
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
            if len(names) == 1:
                out[names[0]] = list(mark.args[1])
    return out


def test_howto_add_a_problem(toy_package, monkeypatch, tmp_path, capsys):
    """CONTRIBUTING, "A problem": a module with one concrete Problem subclass, registered by name,
    and a case of the conformance suite; every shared check then runs on it."""
    module_name = toy_package("partition", PARTITION)
    monkeypatch.setitem(problems.PROBLEMS, "partition", module_name)  # what SOLVER_PROBLEMS' entry does
    problems.get_problem.cache_clear()
    try:
        problem = problems.get_problem("partition")
        assert (problem.name, problem.kind, problem.direction) == ("partition", "objective", "minimize")

        conf = _conformance_module(monkeypatch)
        from cases import FAILED, INVALID, Case  # noqa: PLC0415 (tests/unit/problems is on sys.path only now)

        toy = Case(
            "partition",
            "5\n3 1 1 2 2\n",
            {"optimum": 1},
            b"value 1\n1 0 0 1 0\n",  # 3 + 2 against 1 + 1 + 2
            1.0,
            1.0,
            [
                ("wrong length", b"1 0 0 1\n", FAILED),
                ("side 2", b"1 0 2 1 0\n", FAILED),
                ("wrong claim", b"value 3\n1 0 0 1 0\n", FAILED),
                ("not a number", b"1 0 x 1 0\n", INVALID),
            ],
        )
        monkeypatch.setattr(conf, "IDS", [*conf.IDS, toy.problem])  # the case added to CASES
        instance = tmp_path / "inst.txt"
        instance.write_text(toy.instance)
        case = (toy, problem, problem.parse_instance(instance))

        ran = []
        for name, fn in vars(conf).items():
            if not (name.startswith("test_") and callable(fn)):
                continue
            values = _parametrized(fn)
            if "c" in inspect.signature(fn).parameters:  # the bad certificates: the toy's own
                calls = [{"c": toy, "label": label, "cert": cert, "status": status} for label, cert, status in toy.bad]
            elif values:
                (arg, options), *_ = values.items()
                calls = [{arg: option} for option in options]
            else:
                calls = [{}]
            for number, kwargs in enumerate(calls):
                wanted = inspect.signature(fn).parameters
                if "case" in wanted:
                    kwargs["case"] = case
                if "tmp_path" in wanted:
                    kwargs["tmp_path"] = tmp_path / f"{name}-{number}"
                    kwargs["tmp_path"].mkdir()
                assert set(wanted) <= set(kwargs), f"{name} needs {set(wanted) - set(kwargs)}: teach this walk-through"
                fn(**kwargs)
            ran.append(name)
        assert {
            "test_registry_covers_every_case",
            "test_bad_certificates",
            "test_fuzz_certificates_never_raise",
        } <= set(ran)

        # `tcsexam check` finds it by name
        certificate = tmp_path / "cert.txt"
        certificate.write_bytes(toy.good)
        capsys.readouterr()
        argv = ["check", "--problem", "partition", "--instance", str(instance), "--certificate", str(certificate)]
        assert main([*argv, "--json"]) == 0
        verdict = json.loads(capsys.readouterr().out)
        assert (verdict["status"], verdict["value"]) == ("ok", 1.0)
    finally:
        problems.get_problem.cache_clear()


# ---------------------------------------------------------------------------------------------
# a sandbox


def test_howto_add_a_sandbox(toy_package, monkeypatch, tmp_path):
    """CONTRIBUTING, "A sandbox": a Sandbox subclass registered in SANDBOXES (and AUTO_ORDER), chosen
    and checked like the others, running real programs under the limiter."""
    module_name = toy_package("toy", ENV_SANDBOX)
    monkeypatch.setitem(sandboxes.SANDBOXES, "toy", (module_name, "EnvSandbox"))
    box, why = sandboxes.choose_sandbox("toy")
    assert box.name == "toy" and why == "sandbox toy"

    out = tmp_path / "stdout"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    ended = sandboxes.run_limited(
        ["sh", "-c", 'echo "inside: $TOY_SANDBOX"; exit 3'],
        cwd=tmp_path,
        limits=Limits(wall_s=60),
        sandbox=box,
        env=env,
        stdout_path=out,
    )
    assert (ended.termination, ended.exit_code, ended.sandbox) == (Termination.EXIT, 3, "toy")
    assert out.read_text() == "inside: 1\n"
    over = sandboxes.run_limited(["sleep", "60"], cwd=tmp_path, limits=Limits(wall_s=0.5), sandbox=box, env=env)
    assert over.termination == Termination.WALLTIME and over.sandbox == "toy"

    # `auto` takes it where AUTO_ORDER puts it first
    monkeypatch.setattr(sandboxes, "AUTO_ORDER", ("toy", "local"))
    box, why = sandboxes.choose_sandbox("auto")
    assert box.name == "toy" and why.startswith("sandbox auto -> toy")
    # a machine without its piece: one line naming it, and `auto` goes on to the next
    monkeypatch.setattr(type(box), "EXECUTABLE", str(tmp_path / "no-env"))
    with pytest.raises(InputError, match=r"^sandbox toy: .*no-env not found: install coreutils$"):
        sandboxes.choose_sandbox("toy")
    box, why = sandboxes.choose_sandbox("auto", allow_unsandboxed=True)
    assert box.name == "local" and "toy: " in why
    # the command lines' choices are spelt from SANDBOXES when the module is imported: a real
    # sandbox is an entry of the dict literal, not an entry added later
    assert "toy" not in sandboxes.CHOICES


# ---------------------------------------------------------------------------------------------
# a track

TOY_TRACK = "toy"


def toy_row(model: str, item: str, attempt: str, verdict: Path) -> rows.AttemptRow:
    """The toy track's row builder (what attempts/<track>.py holds): the score its checker wrote in
    the verdict file, or a `missing` row saying why there is none."""
    if not verdict.is_file():
        return rows.failed_row(model, TOY_TRACK, item, attempt, "missing", f"no verdict {verdict.name}")
    score = json.loads(verdict.read_text())["score"]
    return rows.AttemptRow(model, TOY_TRACK, item, attempt, score, "selected", "valid", "original_task_score", "")


def _with_toy_track(monkeypatch) -> None:
    """Emulate the toy member of `Track` and its weight: every loaded tcsexam module that took
    suites' TRACKS and WEIGHTS gets the extended ones."""
    old_tracks, old_weights = suites.TRACKS, suites.WEIGHTS
    tracks, weights = (*old_tracks, TOY_TRACK), {**old_weights, TOY_TRACK: 10}
    for module in [m for name, m in sys.modules.items() if name == "tcsexam" or name.startswith("tcsexam.")]:
        if getattr(module, "TRACKS", None) is old_tracks:
            monkeypatch.setattr(module, "TRACKS", tracks)
        if getattr(module, "WEIGHTS", None) is old_weights:
            monkeypatch.setattr(module, "WEIGHTS", weights)


def test_howto_add_a_track(monkeypatch, tmp_path):
    """CONTRIBUTING, "A track": the closed vocabulary refuses a track it does not hold; with the
    member added, the track's rows go through sealed row files and attempts.csv into the Index,
    its mean weighted beside the other four."""
    suite_file = tmp_path / "toy-suite.yaml"
    suite_file.write_text(
        "id: toy-suite\ntracks:\n  theorem: [th1]\n  solver: [so1]\n  construction: [co1]\n"
        "  open_conjecture: [oc1]\n  toy: [toy1, toy2]\n"
    )
    with pytest.raises(InputError, match="unknown track 'toy'"):
        suites.load_suite(suite_file)
    with pytest.raises(InputError, match="unknown track 'toy'"):
        toy_row("m", "toy1", "1", tmp_path / "nothing.json")

    _with_toy_track(monkeypatch)
    suite = suites.load_suite(suite_file)
    assert suite.track_of["toy2"] == TOY_TRACK

    verdicts = tmp_path / "verdicts"
    verdicts.mkdir()
    (verdicts / "toy1.json").write_text(json.dumps({"score": 0.25}))
    (verdicts / "toy2.json").write_text(json.dumps({"score": 0.75}))
    results = tmp_path / "results"
    row_files = []

    def write(row: rows.AttemptRow) -> None:
        path = results / "rows" / f"{row.track}-{row.item}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows.write_row(path, row)
        assert rows.read_row(path) == row  # sealed, read back
        row_files.append(path)

    write(rows.AttemptRow("m", "theorem", "th1", "1", 1.0, "selected", "valid", "original_task_score", ""))
    write(rows.AttemptRow("m", "solver", "so1", "1", 0.5, "selected", "valid", "fixed_reference_relative", "offline"))
    write(rows.AttemptRow("m", "construction", "co1", "1", 2.0, "selected", "valid", "original_task_score", ""))
    write(rows.AttemptRow("m", "open_conjecture", "oc1", "1", 0.0, "selected", "valid", "original_task_score", ""))
    for item in ("toy1", "toy2"):
        write(toy_row("m", item, "1", verdicts / f"{item}.json"))

    cohort = results / "cohort.json"
    cohort.write_text(
        json.dumps(
            {
                "suite": "toy-suite",
                "solver_protocol": "offline",
                "solver_reference_id": "toy-ref",
                "models": {"m": {"attempts_per_task": 1}},
            }
        )
    )
    table = results / "attempts.csv"
    rows.write_table(row_files, table)
    index = score_files(suite, table, cohort)
    model = index["models"]["m"]
    assert model["status"] == "complete" and index["weights"][TOY_TRACK] == 10
    assert model["track_means"] == {
        "theorem": 1.0,
        "solver": 0.5,
        "construction": 2.0,
        "open_conjecture": 0.0,
        TOY_TRACK: 0.5,
    }
    assert model["index"] == pytest.approx(30 * 1.0 + 30 * 0.5 + 30 * 2.0 + 10 * 0.0 + 10 * 0.5)

    # a toy attempt without its verdict: a `missing` row, the Index incomplete and saying which
    (verdicts / "toy2.json").unlink()
    write(toy_row("m", "toy2", "1", verdicts / "toy2.json"))
    rows.write_table(row_files[:-2] + row_files[-1:], table)
    model = score_files(suite, table, cohort)["models"]["m"]
    assert model["status"] == "incomplete" and model["index"] is None
    assert [(i["track"], i["item"]) for i in model["issues"]] == [(TOY_TRACK, "toy2")]
