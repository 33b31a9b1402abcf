"""Real third-party SAT solvers as candidates, as they are, without a wrapper (issue 46): Debian's
cadical printing SAT-competition output on stdout (`certificate: stdout`) and its DRAT proof to
`{proof}`, exiting 10/20; Debian's minisat writing its result file to `{solution}`. Both refuse
SATLIB's `%` trailer, so the SATLIB instances they get are normalised copies (the record keeps the
original's digest). Each solver test is skipped with a reason when the binary is absent (.ci/run
installs both)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tcsexam.errors import InputError
from tcsexam.problems import get_problem
from tcsexam.problems.sat import without_trailer
from tcsexam.runner.sandboxes import get_sandbox
from tcsexam.runner.solver.candidate import CertificateSource, load_candidate
from tcsexam.runner.solver.execute import run_instance
from tcsexam.runner.solver.orchestrate import GIVEN_KEY_VERSION, _key_meta
from tcsexam.tasks import load_task

ROOT = Path(__file__).resolve().parents[3]
SATLIB = ROOT / "references" / "instances" / "sat-satlib"
LOCAL = get_sandbox("local")
needs_cadical = pytest.mark.skipif(
    shutil.which("cadical") is None, reason="cadical not installed (apt-get install cadical)"
)
needs_minisat = pytest.mark.skipif(
    shutil.which("minisat") is None, reason="minisat not installed (apt-get install minisat)"
)

#: cadical as it is: its stdout is the certificate, its DRAT proof goes to {proof}
CADICAL = 'command: [cadical, -q, "--seed={seed}", "{instance}", "{proof}"]\ncertificate: stdout\n'
#: minisat as it is: its result file is the certificate
MINISAT = 'command: [minisat, -verb=0, "-rnd-seed={seed}", "{instance}", "{solution}"]\n'


def sat_task(folder: Path, mode: str = "required"):
    """uf50-01 (SAT) and uuf50-01 (UNSAT), real SATLIB files ending in "%\\n0\\n", and a tiny
    SATLIB-style one made here (SAT), under `unsat_proof: mode`."""
    for name in ("uf50-01", "uuf50-01"):
        shutil.copyfile(SATLIB / f"{name}.cnf", folder / f"{name}.cnf")
    (folder / "tiny.cnf").write_text("c made in the test\np cnf 3 3\n1 2 0\n-1 3 0\n-2 -3 0\n%\n0\n\n")
    (folder / "task.yaml").write_text(
        "id: sat-real\nproblem: sat\nkind: solve\ndirection: maximize\nlimits: {wall_s: 20, mem_mb: 1024}\n"
        f"unsat_proof: {mode}\ninstance_dir: {folder}\ninstances:\n"
        "  - {name: s, file: uf50-01.cnf, label: SAT}\n  - {name: u, file: uuf50-01.cnf, label: UNSAT}\n"
        "  - {name: tiny, file: tiny.cnf, label: SAT}\n"
    )
    return load_task(folder / "task.yaml")


def candidate(folder: Path, yaml: str):
    folder.mkdir()
    (folder / "solver.yaml").write_text(yaml)
    folder.chmod(0o755)
    return load_candidate(folder)


def run(task, cand, instance: str, work: Path, box=LOCAL):
    scratch = work / f"run-{box.name}-{cand.dir.name}-{instance}"
    scratch.mkdir()
    scratch.chmod(0o755)
    return run_instance(
        task, instance, cand, sandbox=box, limits=task.limits.for_threads(1), seed=1, scratch_dir=scratch
    )


@pytest.fixture(params=["local", "bwrap"])
def box(request):
    """The solvers run as they are under local and, where it works here, bwrap (skipped with why)."""
    sandbox = get_sandbox(request.param)
    try:
        sandbox.check_available()
    except InputError as exc:
        pytest.skip(f"sandbox {request.param} unavailable here: {exc}")
    return sandbox


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def work(reachable_tmp):
    return reachable_tmp


def test_the_trailer_is_stripped_in_a_copy_and_only_there(work):
    task = sat_task(work)
    original = (work / "uf50-01.cnf").read_bytes()
    assert original.endswith(b"%\n0\n\n")
    copy, change = without_trailer(original)
    assert b"%" not in copy and copy == original[: original.rindex(b"%")]
    assert "SATLIB trailer removed" in change
    assert without_trailer(copy) is None  # a clean file is given as it is
    # the copy is the same formula as the original
    sat = get_problem("sat")
    a, b = sat.parse_instance(work / "uf50-01.cnf"), sat.instance_file.parse(copy, "copy")
    assert (a.nvars, a.nclauses, a.var.tolist(), a.positive.tolist()) == (
        b.nvars,
        b.nclauses,
        b.var.tolist(),
        b.positive.tolist(),
    )
    # a normalised instance has its own record key; a clean one keeps the key it had
    by_name = {inst.name: inst for inst in task.instances}
    assert _key_meta(task, by_name["s"]) == {**by_name["s"].meta, "instance_given": GIVEN_KEY_VERSION}
    (work / "clean.cnf").write_bytes(copy)
    clean = type(by_name["s"])(**{**by_name["s"].__dict__, "path": work / "clean.cnf"})
    assert _key_meta(task, clean) is clean.meta


def test_the_candidate_gets_the_normalised_copy_and_the_record_the_original_digest(work, box):
    """A candidate that reports the digest of the file it was given (on stderr) and answers UNKNOWN."""
    task = sat_task(work)
    (work / "c").mkdir()
    (work / "c" / "show.py").write_text(
        "import hashlib, sys\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "print('given', hashlib.sha256(data).hexdigest(), b'%' in data, file=sys.stderr)\n"
        "open(sys.argv[2], 'w').write('s UNKNOWN\\n')\n"
    )
    (work / "c" / "solver.yaml").write_text("command: [python3, show.py, '{instance}', '{solution}']\n")
    (work / "c").chmod(0o755)
    rec = run(task, load_candidate(work / "c"), "tiny", work, box)
    assert rec.status == "ok" and rec.solved is False, rec
    copy, _ = without_trailer((work / "tiny.cnf").read_bytes())
    assert rec.extra["instance_sha256"] == sha(work / "tiny.cnf")
    assert rec.extra["instance_given"]["sha256"] == hashlib.sha256(copy).hexdigest()
    assert f"given {hashlib.sha256(copy).hexdigest()} False" in rec.extra["stderr_tail"]
    assert (work / "tiny.cnf").read_bytes().endswith(b"%\n0\n\n")  # the original is untouched


@needs_cadical
def test_cadical_as_it_is_solves_satlib_files_with_their_trailer(work, box):
    task = sat_task(work)
    cand = candidate(work / "cadical", CADICAL)
    assert cand.certificate == CertificateSource.STDOUT and cand.exit_codes_ok == frozenset({0})
    for name in ("s", "tiny"):
        rec = run(task, cand, name, work, box)
        assert rec.status == "ok" and rec.solved is True and rec.exit_code == 10, rec
        assert rec.extra["instance_sha256"] == sha(work / task.instance(name).path.name)
        assert "instance_given" in rec.extra
    rec = run(task, cand, "u", work, box)  # UNSAT, exit 20, with its binary DRAT proof in {proof}
    assert rec.status == "ok" and rec.solved is True and rec.exit_code == 20, rec
    assert rec.extra["unsat_proof"]["verified"] is True, rec.extra


@needs_minisat
def test_minisat_as_it_is_writes_its_result_file(work, box):
    task = sat_task(work)
    cand = candidate(work / "minisat", MINISAT)
    for name in ("s", "tiny"):
        rec = run(task, cand, name, work, box)
        assert rec.status == "ok" and rec.solved is True and rec.exit_code == 10, rec
        assert rec.claimed == "SAT"
    rec = run(task, cand, "u", work, box)  # minisat writes no DRAT proof: the UNSAT claim is refused
    assert rec.status == "certificate_failed" and rec.exit_code == 20 and rec.claimed == "UNSAT", rec
    assert "no DRAT proof written" in rec.message
    (work / "t").mkdir(mode=0o755)
    trusted = sat_task(work / "t", "trusted")
    rec = run(trusted, cand, "u", work / "t", box)
    assert rec.status == "ok" and rec.solved is True, rec


@needs_cadical
def test_stdout_not_read_is_named_when_it_held_the_answer(work):
    """cadical printing on stdout while solver.yaml reads {solution} (the default): invalid, and
    the message says that stdout held an answer and was not read."""
    task = sat_task(work)
    for name, extra in (("listed", "exit_codes_ok: [10, 20]\n"), ("plain", "")):  # exit 10, listed or not
        cand = candidate(work / f"cadical-{name}", f'command: [cadical, -q, "{{instance}}"]\n{extra}')
        rec = run(task, cand, "tiny", work)
        assert rec.status == "invalid" and rec.exit_code == 10, rec
        assert rec.message.startswith(
            "no certificate written; stdout held an answer ('s SATISFIABLE') but was not read"
        )
        assert "certificate: stdout" in rec.message


def test_an_answer_exit_code_that_the_certificate_contradicts_is_a_crash(work):
    """Exit 20 (UNSATISFIABLE) with a certificate saying SATISFIABLE: a crash, not a normal exit;
    exit 10 with it: ok, without `exit_codes_ok`."""
    task = sat_task(work)
    (work / "c").mkdir()
    (work / "c" / "say.py").write_text(
        "import sys\nprint('s SATISFIABLE')\nprint('v 1 3 -2 0')\nsys.exit(int(sys.argv[1]))\n"
    )
    for code, status in (("10", "ok"), ("20", "crash"), ("30", "crash"), ("0", "ok")):
        (work / "c" / "solver.yaml").write_text(f"command: [python3, say.py, '{code}']\ncertificate: stdout\n")
        rec = run(task, load_candidate(work / "c"), "tiny", work)
        assert rec.status == status, (code, rec)
        if code == "20":
            assert "exit code 20 (the convention's UNSATISFIABLE) but the certificate says 'SATISFIABLE'" in rec.message
        shutil.rmtree(work / "run-local-c-tiny")


def test_a_maxsat_solver_printing_evaluation_output_on_stdout(work):
    """MaxSAT Evaluation output on stdout (`o` lines, `s OPTIMUM FOUND`, a `v` bit string) with exit
    30, the convention's OPTIMUM FOUND: ok with the recomputed cost, no wrapper, no exit_codes_ok."""
    (work / "m.wcnf").write_text("h 1 2 0\nh -1 -2 0\n3 1 0\n1 2 0\n%\n0\n")
    (work / "task.yaml").write_text(
        "id: maxsat-real\nproblem: maxsat\nkind: objective\ndirection: minimize\nlimits: {wall_s: 10}\n"
        f"instance_dir: {work}\ninstances:\n  - {{name: m, file: m.wcnf, optimum: 1}}\n"
    )
    task = load_task(work / "task.yaml")
    (work / "c").mkdir()
    (work / "c" / "solve.py").write_text(
        "import sys\nassert b'%' not in open(sys.argv[1], 'rb').read()\n"
        "print('c anytime output'); print('o 3'); print('o 1'); print('s OPTIMUM FOUND'); print('v 10')\n"
        "sys.exit(30)\n"
    )
    (work / "c" / "solver.yaml").write_text("command: [python3, solve.py, '{instance}']\ncertificate: stdout\n")
    (work / "c").chmod(0o755)
    rec = run(task, load_candidate(work / "c"), "m", work)
    assert rec.status == "ok" and rec.A == 1.0 and rec.claimed == 1.0 and rec.exit_code == 30, rec
    assert rec.reward == 1.0
