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

from tcsexam.problems import get_problem
from tcsexam.problems.sat import without_trailer
from tcsexam.runner.candidate import load_candidate
from tcsexam.runner.execute import run_instance
from tcsexam.runner.orchestrate import GIVEN_KEY_VERSION, _key_meta
from tcsexam.runner.sandboxes import get_sandbox
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


def run(task, cand, instance: str, work: Path):
    scratch = work / f"run-{cand.dir.name}-{instance}"
    scratch.mkdir()
    scratch.chmod(0o755)
    return run_instance(
        task, instance, cand, sandbox=LOCAL, limits=task.limits.for_threads(1), seed=1, scratch_dir=scratch
    )


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


def test_the_candidate_gets_the_normalised_copy_and_the_record_the_original_digest(work):
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
    rec = run(task, load_candidate(work / "c"), "tiny", work)
    assert rec.status == "ok" and rec.solved is False, rec
    copy, _ = without_trailer((work / "tiny.cnf").read_bytes())
    assert rec.extra["instance_sha256"] == sha(work / "tiny.cnf")
    assert rec.extra["instance_given"]["sha256"] == hashlib.sha256(copy).hexdigest()
    assert f"given {hashlib.sha256(copy).hexdigest()} False" in rec.extra["stderr_tail"]
    assert (work / "tiny.cnf").read_bytes().endswith(b"%\n0\n\n")  # the original is untouched
