"""Certificates and DRAT proofs kept with the records (issue 46: `tcsexam run --keep`), so that a
record can be re-checked later without rerunning (`tcsexam check --record`). Real runs through
`tcsexam run` (no Ray, `local`), with Debian's cadical as it is (skipped where absent)."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from tcsexam.cli import main

ROOT = Path(__file__).resolve().parents[3]
SATLIB = ROOT / "references" / "instances" / "sat-satlib"
needs_cadical = pytest.mark.skipif(
    shutil.which("cadical") is None, reason="cadical not installed (apt-get install cadical)"
)
CADICAL = 'command: [cadical, -q, "--seed={seed}", "{instance}", "{proof}"]\ncertificate: stdout\n'


@pytest.fixture
def work(reachable_tmp):
    return reachable_tmp


def sat_task(folder: Path) -> Path:
    for name in ("uf50-01", "uuf50-01"):
        shutil.copyfile(SATLIB / f"{name}.cnf", folder / f"{name}.cnf")
    (folder / "task.yaml").write_text(
        "id: sat-keep\nproblem: sat\nkind: solve\ndirection: maximize\nlimits: {wall_s: 20, mem_mb: 1024}\n"
        f"unsat_proof: required\ninstance_dir: {folder}\ninstances:\n"
        "  - {name: s, file: uf50-01.cnf, label: SAT}\n  - {name: u, file: uuf50-01.cnf, label: UNSAT}\n"
    )
    return folder / "task.yaml"


def candidate(folder: Path, yaml: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir()
    (folder / "solver.yaml").write_text(yaml)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    folder.chmod(0o755)
    return folder


def run(task: Path, cand: Path, out: Path, *extra: str) -> dict[str, dict]:
    argv = ["run", "--task", str(task), "--candidate", str(cand), "--output", str(out), "--no-progress", "--no-ray"]
    assert main([*argv, "--sandbox", "local", "--allow-unsandboxed", *extra]) == 0
    return {r["instance"]: r for r in json.loads(out.read_text())}


def check(capsys, *argv: str) -> dict:
    assert main(["check", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


@needs_cadical
def test_certificates_and_unsat_proofs_are_kept_and_a_record_rechecked(work, capsys):
    task = sat_task(work)
    out = work / "attempt" / "records.json"
    recs = run(task, candidate(work / "cadical", CADICAL), out)
    assert recs["u"]["status"] == "ok" and recs["u"]["extra"]["unsat_proof"]["verified"] is True
    kept = recs["u"]["extra"]["kept"]
    proof = out.parent / kept["proof"]["file"]
    assert kept["proof"]["file"] == "proofs/u.drat.gz" and proof.is_file()
    assert hashlib.sha256(gzip.decompress(proof.read_bytes())).hexdigest() == kept["proof"]["sha256"]
    cert = out.parent / kept["certificate"]["file"]
    assert cert.read_text().strip() == "s UNSATISFIABLE"
    assert "proof" not in recs["s"]["extra"]["kept"]  # a SAT answer has no proof to keep
    assert (out.parent / recs["s"]["extra"]["kept"]["certificate"]["file"]).read_text().startswith("s SATISFIABLE")

    # re-checked later from what was kept, without rerunning: from records.json and from a record file
    for record in (out, out.parent / "records" / "u.json"):
        again = check(capsys, "--task", str(task), "--record", str(record), "--instance", "u")
        assert again["status"] == "ok" and again["solved"] is True and again["agrees"] is True, again
        assert again["unsat_proof"]["verified"] is True
    again = check(capsys, "--task", str(task), "--record", str(out.parent / "records" / "s.json"))
    assert again["agrees"] is True and again["record_status"] == "ok"
    # a kept proof given by hand, compressed as it is kept
    again = check(capsys, "--task", str(task), "--instance", "u", "--certificate", str(cert), "--proof", str(proof))
    assert again["solved"] is True

    # a kept file that is not the one the record was judged on is refused, naming it
    proof.write_bytes(gzip.compress(b"1 0\n0\n"))
    assert main(["check", "--task", str(task), "--record", str(out), "--instance", "u"]) == 1
    assert "differs from the proof the record was judged on" in capsys.readouterr().err


@needs_cadical
def test_keep_none_keeps_nothing_and_proofs_only_keeps_proofs(work):
    task = sat_task(work)
    cand = candidate(work / "cadical", CADICAL)
    out = work / "none" / "records.json"
    recs = run(task, cand, out, "--keep", "none")
    assert all("kept" not in r["extra"] for r in recs.values())
    assert not (out.parent / "certificates").exists() and not (out.parent / "proofs").exists()
    out = work / "proofs" / "records.json"
    recs = run(task, cand, out, "--keep", "proofs")
    assert set(recs["u"]["extra"]["kept"]) == {"proof"} and "kept" not in recs["s"]["extra"]


BIG = "import sys\nopen(sys.argv[1], 'w').write('c ' + 'x' * (1 << 21) + '\\n0 1 0 1 1\\n')\n"


def test_a_certificate_over_the_cap_is_checked_not_kept(work):
    (work / "g.txt").write_text("5 6\n1 2 1\n2 3 1\n3 4 1\n4 5 1\n5 1 1\n1 3 1\n")
    (work / "task.yaml").write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {wall_s: 10, output_mb: 8}\n"
        f"instance_dir: {work}\ninstances:\n  - {{name: g, file: g.txt, best_known: 5}}\n"
    )
    cmd = json.dumps([sys.executable, "big.py", "{solution}"])
    cand = candidate(work / "big", f"command: {cmd}\n", {"big.py": BIG})
    out = work / "attempt" / "records.json"
    recs = run(work / "task.yaml", cand, out, "--keep-max-mb", "1")
    assert recs["g"]["extra"]["kept"]["certificate"] == {"not_kept": "larger than the 1 MiB kept (--keep-max-mb)"}
    assert not (out.parent / "certificates" / "g.txt").exists()
    with pytest.raises(SystemExit) as exc:
        main(["run", "--task", "t", "--candidate", "c", "--output", "o", "--keep-max-mb", "0"])
    assert exc.value.code == 2
