"""UNSAT answers and their DRAT proofs (tcsexam.runner.solver.drat, docs/proofs.md#unsat-answers-drat-proofs): real CaDiCaL
proofs (Debian's binary, text and binary DRAT; python-sat's) verified by the real checker, every
way a proof can fail refused with the checker's reason, and the runner's verdicts under
`unsat_proof: required` and `trusted` on real candidate runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcsexam.errors import InputError
from tcsexam.problems import get_problem
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver import drat
from tcsexam.runner.solver.candidate import load_candidate
from tcsexam.runner.solver.drat import CheckerMissing, ProofLimits, check_proof
from tcsexam.runner.solver.drat_check import decode_binary
from tcsexam.runner.solver.execute import run_instance
from tcsexam.scoring.solver_score import unsat_evidence
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
SATLIB = ROOT / "references" / "instances" / "sat-satlib"
SAT = get_problem("sat")
LIMITS = ProofLimits(wall_s=120, mem_mb=2048, proof_mb=64)
needs_cadical = pytest.mark.skipif(shutil.which("cadical") is None, reason="Debian's cadical is not installed")


def pigeonhole(n: int) -> str:
    """n pigeons, n - 1 holes: unsatisfiable, and its proofs grow fast with n."""
    holes = n - 1
    var = [[p * holes + k + 1 for k in range(holes)] for p in range(n)]
    clauses = [row[:] for row in var]
    for k in range(holes):
        clauses += [[-var[p][k], -var[q][k]] for p in range(n) for q in range(p + 1, n)]
    return f"p cnf {n * holes} {len(clauses)}\n" + "".join(" ".join(map(str, c)) + " 0\n" for c in clauses)


def cadical_proof(cnf: Path, proof: Path, *, binary: bool) -> None:
    """Debian's cadical on `cnf` (SATLIB's '%' trailer dropped), its DRAT proof to `proof`."""
    text = cnf.read_text().split("\n%")[0]
    args = ["cadical", "-q", "-", str(proof)] + ([] if binary else ["--no-binary"])
    out = subprocess.run(args, input=text, capture_output=True, text=True, timeout=120)
    assert out.returncode == 20 and "s UNSATISFIABLE" in out.stdout, out


@pytest.fixture
def work(reachable_tmp):
    return reachable_tmp


def check(cnf: Path, proof: Path, work: Path, limits: ProofLimits = LIMITS):
    return check_proof(SAT.parse_instance(cnf), proof, limits=limits, scratch=work / "scratch")


def write_cnf(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- real proofs verified ---------------------------------------------------------------------


@needs_cadical
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("name", ["uuf50-01", "uuf75-02", "uuf100-01", "uuf100-02"])
def test_cadical_proofs_of_bundled_satlib_files_verify(work, name, binary):
    proof = work / "proof"
    cadical_proof(SATLIB / f"{name}.cnf", proof, binary=binary)
    verdict = check(SATLIB / f"{name}.cnf", proof, work)
    assert verdict.verified, verdict
    assert verdict.format == ("binary" if binary else "text") and verdict.steps > 0
    assert "dratify" in verdict.checker and verdict.reason.startswith("empty clause derived")


@needs_cadical
def test_cadical_proofs_of_shared_satlib_files_verify(work, shared_data):
    files = sorted((shared_data / "sat").glob("uuf*.cnf"))
    assert files
    for i, cnf in enumerate(files):
        proof = work / "proof"
        cadical_proof(cnf, proof, binary=bool(i % 2))
        verdict = check(cnf, proof, work)
        assert verdict.verified, (cnf.name, verdict)


@needs_cadical
@pytest.mark.parametrize("n", [5, 7])
def test_cadical_proofs_of_generated_pigeonhole_formulas_verify(work, n):
    cnf = write_cnf(work / f"php{n}.cnf", pigeonhole(n))
    cadical_proof(cnf, work / "proof", binary=n % 2 == 1)
    assert check(cnf, work / "proof", work).verified


def test_python_sat_cadical_proofs_of_generated_unsat_formulas_verify(work):
    from pysat.solvers import Cadical195

    rng = np.random.default_rng(7)
    proven = 0
    for seed in range(40):
        text = SAT.generate(np.random.default_rng(seed + int(rng.integers(1000))), 40)
        cnf = write_cnf(work / "r.cnf", text)
        inst = SAT.parse_instance(cnf)
        clauses = [inst.clause(k) for k in range(inst.nclauses)]
        with Cadical195(bootstrap_with=clauses, with_proof=True) as solver:
            if solver.solve():
                continue
            (work / "proof").write_text("\n".join(solver.get_proof()) + "\n")
        assert check(cnf, work / "proof", work).verified
        proven += 1
        if proven == 3:
            break
    assert proven == 3


def test_binary_decoding_gives_the_text_proofs_steps():
    import dratify

    text = "1 -2 3 0\nd 1 -2 3 0\n-3 0\n0\n"

    def code(lit: int) -> bytes:
        value, out = 2 * abs(lit) + (lit < 0), bytearray()
        while value >= 128:
            out.append(value & 127 | 128)
            value >>= 7
        return bytes(out) + bytes([value])

    binary = b"a" + code(1) + code(-2) + code(3) + b"\0" + b"d" + code(1) + code(-2) + code(3) + b"\0"
    binary += b"a" + code(-3) + b"\0" + b"a\0" + b"a" + code(-200) + code(70000) + b"\0"
    steps = decode_binary(binary)
    assert steps[:4] == dratify.parse_proof(text)
    assert steps[4] == ("a", (2 * 199 + 1, 2 * 69999))


# -- proofs refused ---------------------------------------------------------------------------


@needs_cadical
def test_a_proof_of_another_formula_is_refused(work):
    cadical_proof(SATLIB / "uuf50-01.cnf", work / "proof", binary=False)
    verdict = check(SATLIB / "uuf50-02.cnf", work / "proof", work)
    assert not verdict.verified
    assert "neither RUP nor RAT" in verdict.reason or "never derives the empty clause" in verdict.reason


@needs_cadical
def test_a_proof_of_a_satisfiable_formula_cannot_verify(work):
    cadical_proof(SATLIB / "uuf75-01.cnf", work / "proof", binary=True)
    verdict = check(SATLIB / "uf75-01.cnf", work / "proof", work)
    assert not verdict.verified and verdict.reason


@needs_cadical
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_a_truncated_proof_is_refused(work, binary):
    cnf = write_cnf(work / "php6.cnf", pigeonhole(6))
    cadical_proof(cnf, work / "full", binary=binary)
    data = (work / "full").read_bytes()
    cuts = [len(data) // 2, len(data) - 1] if binary else [data.rfind(b"\n", 0, len(data) // 2) + 1, len(data) - 3]
    for cut in cuts:
        (work / "proof").write_bytes(data[:cut])
        verdict = check(cnf, work / "proof", work)
        assert not verdict.verified, cut
        assert any(w in verdict.reason for w in ("never derives the empty clause", "truncated", "not terminated"))


def test_a_missing_an_empty_and_a_junk_proof_are_refused(work):
    cnf = SATLIB / "uuf50-01.cnf"
    verdict = check(cnf, work / "nothing-here", work)
    assert not verdict.verified and "no DRAT proof written" in verdict.reason
    (work / "proof").write_bytes(b"")
    assert "empty" in check(cnf, work / "proof", work).reason
    (work / "proof").write_text("c only a comment\n")
    assert "never derives the empty clause" in check(cnf, work / "proof", work).reason
    (work / "proof").write_text("1 2 x 0\n")
    verdict = check(cnf, work / "proof", work)
    assert not verdict.verified and "malformed proof" in verdict.reason
    (work / "proof").write_text("0\n")  # the empty clause alone: not RUP on a formula unit propagation leaves open
    verdict = check(cnf, work / "proof", work)
    assert not verdict.verified and "neither RUP nor RAT" in verdict.reason


def test_a_link_or_a_fifo_is_not_read(work):
    target = work / "elsewhere"
    target.write_text("0\n")
    (work / "proof").symlink_to(target)
    verdict = check(SATLIB / "uuf50-01.cnf", work / "proof", work)
    assert not verdict.verified and "not a file the program wrote" in verdict.reason
    (work / "proof").unlink()
    os.mkfifo(work / "proof")
    verdict = check(SATLIB / "uuf50-01.cnf", work / "proof", work)  # never blocks on the FIFO
    assert not verdict.verified and "not a file the program wrote" in verdict.reason


def test_a_proof_over_the_size_cap_is_refused_unread(work):
    (work / "proof").write_bytes(b"1 2 3 0\n" * (1 << 17) + b"0\n")  # just over 1 MB
    verdict = check(SATLIB / "uuf50-01.cnf", work / "proof", work, ProofLimits(wall_s=60, mem_mb=2048, proof_mb=1))
    assert not verdict.verified and "larger than the 1 MB" in verdict.reason


@needs_cadical
def test_the_checker_out_of_time_or_memory_is_a_refusal_with_its_reason(work):
    cnf = write_cnf(work / "php8.cnf", pigeonhole(8))
    cadical_proof(cnf, work / "proof", binary=False)
    # no Python with numpy and dratify starts, parses and checks in 10 ms: the checker's wall limit
    verdict = check(cnf, work / "proof", work, ProofLimits(wall_s=0.01, mem_mb=2048, proof_mb=64))
    assert not verdict.verified and "did not finish within its 0.01 s limit" in verdict.reason
    # nor in 12 MB of memory (numpy alone needs more): the memory limit, or a MemoryError, ends the check
    verdict = check(cnf, work / "proof", work, ProofLimits(wall_s=120, mem_mb=12, proof_mb=64))
    assert not verdict.verified and ("memory" in verdict.reason or "failed" in verdict.reason), verdict


def fake_checker(tmp: Path, body: str) -> Path:
    script = tmp / "drat_check.py"
    script.write_text(body)
    return script


@pytest.mark.parametrize(
    "body, reason",
    [
        ("print('c reason looks fine')\n", "gave no verdict"),  # exit 0 alone verifies nothing
        ("print('s VERIFIED')\nraise SystemExit(1)\n", "exit code 1"),  # a verdict with a failing exit
        ("print('s VERIFIED?')\n", "gave no verdict"),
        ("print('s VERIFIED')\nprint('c trailing')\n", "gave no verdict"),  # the verdict must be its last line
    ],
)
def test_only_the_checkers_explicit_verified_line_counts(work, monkeypatch, body, reason):
    (work / "proof").write_text("0\n")
    monkeypatch.setattr(drat, "CHECKER_SCRIPT", fake_checker(work, body))
    verdict = check(SATLIB / "uuf50-01.cnf", work / "proof", work)
    assert not verdict.verified and reason in verdict.reason


def test_a_checker_that_is_missing_is_the_harnesss_failure(work, monkeypatch):
    (work / "proof").write_text("0\n")
    body = (
        "print('c checker missing: dratify cannot be imported (test)')\nprint('s NOT VERIFIED')\nraise SystemExit(3)\n"
    )
    monkeypatch.setattr(drat, "CHECKER_SCRIPT", fake_checker(work, body))
    with pytest.raises(CheckerMissing, match="dratify cannot be imported"):
        check(SATLIB / "uuf50-01.cnf", work / "proof", work)


def test_a_checker_killed_from_outside_is_the_harnesss_failure(work, monkeypatch):
    """A SIGKILL within the checker's limits (another job, the machine) says nothing about the proof."""
    (work / "proof").write_text("0\n")
    body = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
    monkeypatch.setattr(drat, "CHECKER_SCRIPT", fake_checker(work, body))
    with pytest.raises(CheckerMissing, match="killed by a signal"):
        check(SATLIB / "uuf50-01.cnf", work / "proof", work)
    rec = run(sat_task(work, "required"), "junk", "u", work)
    assert rec.status == "infrastructure_error" and "killed by a signal" in rec.message, rec


# -- the runner's verdicts --------------------------------------------------------------------

CANDIDATE = """\
import os, sys, shutil
instance, solution, how = sys.argv[1], sys.argv[2], sys.argv[3]
proof = os.environ["TCSEXAM_PROOF"]
assert proof == sys.argv[4], (proof, sys.argv[4])
if how == "cadical":
    text = open(instance).read().split("\\n%")[0]
    import subprocess
    subprocess.run(["cadical", "-q", "-", proof], input=text, text=True, capture_output=True)
elif how == "link":
    os.symlink("/etc/passwd", proof)
elif how == "junk":
    open(proof, "w").write("1 0\\n0\\n")
open(solution, "w").write("s UNSATISFIABLE\\n")
"""


def sat_task(folder: Path, mode: str | None) -> object:
    for name in ("uuf50-01", "uf50-01"):
        shutil.copyfile(SATLIB / f"{name}.cnf", folder / f"{name}.cnf")
    (folder / "plain.cnf").write_text((SATLIB / "uuf50-02.cnf").read_text())
    line = f"unsat_proof: {mode}\n" if mode else ""
    (folder / "task.yaml").write_text(
        "id: sat-tiny\nproblem: sat\nkind: solve\ndirection: maximize\nlimits: {wall_s: 20, mem_mb: 1024}\n"
        f"{line}instance_dir: {folder}\ninstances:\n  - {{name: u, file: uuf50-01.cnf, label: UNSAT}}\n"
        "  - {name: s, file: uf50-01.cnf, label: SAT}\n  - {name: n, file: plain.cnf}\n"
    )
    return load_task(folder / "task.yaml")


def run(task, how: str, instance: str, work: Path):
    cand = work / f"cand-{how}"
    cand.mkdir(exist_ok=True)
    (cand / "solve.py").write_text(CANDIDATE)
    (cand / "solver.yaml").write_text(
        f"command: [python3, solve.py, '{{instance}}', '{{solution}}', {how}, '{{proof}}']\n"
    )
    cand.chmod(0o755)
    scratch = work / f"run-{how}-{instance}"
    scratch.mkdir()
    scratch.chmod(0o755)
    return run_instance(
        task,
        instance,
        load_candidate(cand),
        sandbox=get_sandbox("local"),
        limits=task.limits.for_threads(1),
        seed=1,
        scratch_dir=scratch,
    )


@needs_cadical
def test_required_an_unsat_claim_counts_only_with_its_verified_proof(work):
    task = sat_task(work, None)
    assert task.unsat_proof == "required"  # the default of a SAT task
    rec = run(task, "cadical", "u", work)
    assert rec.status == "ok" and rec.solved is True and rec.A == 1.0, rec
    assert rec.message.startswith("UNSAT proven: DRAT proof verified")
    assert rec.extra["unsat_proof"]["verified"] is True and rec.extra["unsat_proof"]["format"] == "binary"
    rec = run(task, "cadical", "n", work)  # an unlabelled instance: the proof is the evidence
    assert rec.status == "ok" and rec.solved is True, rec
    for how in ("none", "junk", "link"):
        rec = run(task, how, "u", work)
        assert rec.status == "certificate_failed" and rec.solved is None, (how, rec)
        assert rec.message.startswith("UNSAT claim without a verified DRAT proof: "), rec.message
        assert rec.extra["unsat_proof"]["verified"] is False
    rec = run(task, "cadical", "s", work)  # UNSAT on a satisfiable instance: refused, no proof needed
    assert rec.status == "certificate_failed" and "satisfiable" in rec.message


def test_trusted_keeps_the_old_rule_and_says_so(work):
    task = sat_task(work, "trusted")
    rec = run(task, "none", "u", work)
    assert rec.status == "ok" and rec.solved is True, rec
    assert "UNSAT trusted (unsat_proof: trusted)" in rec.message
    assert rec.extra["unsat_proof"] == {
        "mode": "trusted",
        "verified": None,
        "reason": "unsat_proof: trusted: no proof checked",
    }
    assert run(task, "none", "n", work).solved is False  # unlabelled: not solved, as before
    refused = run(task, "none", "s", work)
    assert refused.status == "certificate_failed"
    records = [r.to_dict() for r in (rec, refused)]
    evidence = unsat_evidence(records)
    assert evidence["trusted"] == ["u"] and "on trust" in evidence["note"]


def test_a_missing_checker_makes_the_run_an_infrastructure_error(work, monkeypatch):
    task = sat_task(work, "required")
    body = "print('c checker missing: test')\nraise SystemExit(3)\n"
    monkeypatch.setattr(drat, "CHECKER_SCRIPT", fake_checker(work, body))
    rec = run(task, "junk", "u", work)
    assert rec.status == "infrastructure_error" and "test" in rec.message, rec


def test_unsat_proof_belongs_to_sat_tasks(tmp_path):
    base = "id: t\nkind: objective\ndirection: maximize\nlimits: {wall_s: 1}\ninstance_dir: .\ninstances: []\n"
    (tmp_path / "m.yaml").write_text(base + "problem: maxcut\nunsat_proof: required\n")
    with pytest.raises(InputError, match="applies to SAT tasks only"):
        load_task(tmp_path / "m.yaml")
    (tmp_path / "s.yaml").write_text(base + "problem: sat\nunsat_proof: maybe\n")
    with pytest.raises(InputError, match="unsat_proof must be required"):
        load_task(tmp_path / "s.yaml")
    (tmp_path / "l.yaml").write_text(base + "problem: sat\nproof_limits: {wall_s: 5, mem_mb: 100, proof_mb: 2}\n")
    task = load_task(tmp_path / "l.yaml")
    assert task.proof_limits == ProofLimits(5.0, 100, 2) and task.unsat_proof == "required"
    assert load_task("maxcut-mqlib").unsat_proof is None
    assert {load_task(t).unsat_proof for t in ("sat-satlib", "sat-random3")} == {"required"}


def test_the_checker_runs_from_its_own_copy_with_numpy_and_dratify_only():
    text = Path(drat.CHECKER_SCRIPT).read_text()
    assert "import tcsexam" not in text and "from tcsexam" not in text
    out = subprocess.run(
        [sys.executable, "-I", str(drat.CHECKER_SCRIPT), "/nonexistent.cnf", "/nonexistent"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "s VERIFIED" not in out.stdout


@needs_cadical
def test_the_pure_python_engine_gives_the_same_verdicts(work):
    cnf = SATLIB / "uuf75-01.cnf"
    cadical_proof(cnf, work / "proof", binary=True)
    inst = SAT.parse_instance(cnf)
    native = check_proof(inst, work / "proof", limits=LIMITS, scratch=work / "a")
    python = check_proof(inst, work / "proof", limits=LIMITS, scratch=work / "b", engine="python")
    assert native.verified and python.verified and "engine python" in python.checker
    other = SAT.parse_instance(SATLIB / "uuf75-02.cnf")
    assert not check_proof(other, work / "proof", limits=LIMITS, scratch=work / "c", engine="python").verified


@needs_cadical
def test_tcsexam_check_applies_the_tasks_rule_with_proof(work, capsys):
    import json

    from tcsexam.cli import main

    cert = work / "cert"
    cert.write_text("s UNSATISFIABLE\n")
    cadical_proof(SATLIB / "uuf50-01.cnf", work / "p", binary=False)
    base = ["check", "--task", "sat-satlib", "--instance", "uuf50-01", "--certificate", str(cert), "--json"]
    assert main(base + ["--proof", str(work / "p")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "ok" and out["solved"] is True and out["unsat_proof"]["verified"] is True
    assert main(base) == 0  # required: no proof, no credit
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "certificate_failed" and "no DRAT proof written" in out["message"]
    assert main(base[:4] + ["uuf50-02"] + base[5:] + ["--proof", str(work / "p")]) == 0  # another formula's proof
    assert json.loads(capsys.readouterr().out)["status"] == "certificate_failed"


@pytest.mark.parametrize("mem_mb", [20, 30, 45, 60])
def test_a_memory_limit_near_the_checkers_start_up_is_never_an_infrastructure_error(work, mem_mb):
    """Wherever the memory limit hits (start-up, imports, parsing), the proof is refused, and the
    checker is never reported missing (that would make the record an infrastructure error)."""
    cnf = write_cnf(work / "php7.cnf", pigeonhole(7))
    (work / "proof").write_text("1 2 0\n" * 20000 + "0\n")
    verdict = check(cnf, work / "proof", work, ProofLimits(wall_s=120, mem_mb=mem_mb, proof_mb=64))
    assert not verdict.verified and verdict.reason


def test_a_traced_unsat_answer_counts_only_under_trusted(work):
    from dataclasses import replace

    from tcsexam.runner.solver.execute import _trace_check

    task = sat_task(work, "required")
    inst = task.instance("u")
    assert _trace_check(task, inst, inst.path, b"s UNSATISFIABLE\n") == ("ok", 0.0)  # no proof is checked mid-run
    assert _trace_check(replace(task, unsat_proof="trusted"), inst, inst.path, b"s UNSATISFIABLE\n") == ("ok", 1.0)
    assert _trace_check(task, task.instance("s"), task.instance("s").path, b"s UNSATISFIABLE\n")[0] == (
        "certificate_failed"
    )
