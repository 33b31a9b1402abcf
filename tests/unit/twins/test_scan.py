"""`tcsexam scan-candidate`: memorising candidates keyed on things other than the file name are
found (file and line), honest ones are not; the scan never runs anything."""

from __future__ import annotations

import base64
import hashlib
import json
import pickle

import numpy as np
import pytest

from tcsexam.tasks import load_task
from tcsexam.twins.scan import scan_candidate


def _candidate(tmp_path, files: dict[str, str | bytes]):
    folder = tmp_path / "cand"
    folder.mkdir(parents=True)
    (folder / "solver.yaml").write_text('command: ["python3", "solve.py", "{instance}", "{solution}"]\n')
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


def _kinds(report) -> dict[str, list]:
    out: dict[str, list] = {}
    for f in report["findings"]:
        out.setdefault(f["kind"], []).append(f)
    return out


def test_table_keyed_on_sizes_with_bit_strings(tmp_path):
    bits = "".join(np.random.default_rng(0).choice(["0", "1"], 800))
    code = f'import sys\n\nTABLE = {{\n    (800, 1600): "{bits}",\n    (800, 4694): "{bits[::-1]}",\n}}\n'
    report = scan_candidate(_candidate(tmp_path, {"solve.py": code}), "maxcut-mqlib")
    kinds = _kinds(report)
    assert {f["line"] for f in kinds["size_key"]} == {4, 5}
    assert kinds["embedded_certificate"][0]["line"] == 4 and kinds["embedded_certificate"][0]["file"] == "solve.py"


def test_table_keyed_on_the_instance_files_sha256(tmp_path):
    task = load_task("tsp-tsplib")
    digest = hashlib.sha256(task.instance("berlin52").path.read_bytes()).hexdigest()
    code = f"import hashlib\nKNOWN = {{\n  '{digest}': [1, 2, 3],\n}}\n"
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"lib/memo.py": code}), "tsp-tsplib"))
    assert kinds["content_hash"][0]["line"] == 3 and "berlin52" in kinds["content_hash"][0]["detail"]
    assert kinds["content_hash"][0]["file"] == "lib/memo.py"


def test_table_keyed_on_unknown_hashes_of_a_normal_form(tmp_path):
    keys = [hashlib.sha1(str(k).encode()).hexdigest() for k in range(4)]
    code = "import hashlib\nANSWERS = {\n" + "".join(f"    '{k}': 'v 1 -2 0',\n" for k in keys) + "}\n"
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"solve.py": code}), "sat-satlib"))
    assert [f["line"] for f in kinds["hash_table"]] == [3, 4, 5, 6]


def test_instance_names_compared_in_code(tmp_path):
    code = "def answer(path):\n    if open(path).read(40).find('NAME') and 'burma14' in path:\n        return 1\n"
    code += 'NAMES = ["ulysses16", "gr17"]\n'
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"solve.c": code}), "tsp-tsplib"))
    assert sorted(f["line"] for f in kinds["instance_name"]) == [2, 4, 4]


def test_published_best_values_and_a_table_keyed_by_size(tmp_path):
    code = "best = {14: 3323, 16: 6859, 17: 2085}\nswitch (n) { case 21: break; case 26: break; }\n"
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"solve.cpp": code}), "tsp-tsplib"))
    assert {f["line"] for f in kinds["best_value_literal"]} == {1}
    assert len(kinds["best_value_literal"]) == 3
    assert {f["line"] for f in kinds["size_key"]} == {1, 2}


def test_tours_in_a_json_file_a_blob_and_a_pickle(tmp_path):
    tour = [int(x) for x in np.random.default_rng(1).permutation(52) + 1]
    blob = base64.b64encode(np.random.default_rng(2).bytes(300)).decode()
    files = {
        "data/tours.json": json.dumps({"k1": tour}, indent=None),
        "packed.py": f'DATA = "{blob}"\n',
        "table.pkl": pickle.dumps({"x": list(range(100))}),
    }
    kinds = _kinds(scan_candidate(_candidate(tmp_path, files), "tsp-tsplib"))
    assert (
        kinds["embedded_certificate"][0]["file"] == "data/tours.json"
        and "tour" in kinds["embedded_certificate"][0]["detail"]
    )
    assert kinds["encoded_blob"][0]["file"] == "packed.py"
    assert kinds["opaque_file"][0]["file"] == "table.pkl"


@pytest.mark.parametrize("task", ["maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf"])
def test_honest_solvers_have_no_findings(task):
    problem = load_task(task).problem
    for folder in (f"solvers/reference/{problem}", f"solvers/demo-fast/{task}/1", f"solvers/demo-weak/{task}/1"):
        assert scan_candidate(folder, task)["findings"] == [], folder


def test_the_scan_never_runs_the_candidate(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\n"
    folder = _candidate(tmp_path, {"solve.py": code, "setup.py": code})
    scan_candidate(folder, "sat-satlib")
    assert not marker.exists()


def test_table_keyed_on_edge_counts_alone(tmp_path):
    code = "TABLE = {\n    19176: 'a',\n    1600: 'b',\n    4694: 'c',\n}\n"
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"solve.py": code}), "maxcut-mqlib"))
    assert [f["line"] for f in kinds["size_key"]] == [2, 3, 4]


def test_a_colouring_list_and_a_short_assignment_string(tmp_path):
    colours = ", ".join(str(k % 4) for k in range(74))  # huck has 74 vertices
    kinds = _kinds(scan_candidate(_candidate(tmp_path, {"a.py": f"C = [{colours}]\n"}), "coloring-dimacs"))
    assert "colouring" in kinds["embedded_certificate"][0]["detail"]
    bits = "".join("01"[k % 3 == 0] for k in range(30))  # gen-old-n30-s101 has 30 variables
    kinds = _kinds(scan_candidate(_candidate(tmp_path / "b", {"b.py": f"A = '{bits}'\n"}), "maxsat-wcnf"))
    assert kinds["embedded_certificate"][0]["detail"] == "a run of 30 0/1 digits"


def test_the_harness_record_at_the_top_is_left_out_and_a_nested_one_is_read(tmp_path):
    # the agent stage's generation.json beside a submission holds long paths and ids (a run folder
    # of 140 characters reads as a blob); the same name below the top is the candidate's own file
    blob = base64.b64encode(np.random.default_rng(3).bytes(300)).decode()
    files = {"generation.json": json.dumps({"run_dir": blob}), "data/generation.json": json.dumps({"x": blob})}
    report = scan_candidate(_candidate(tmp_path, files), "tsp-tsplib")
    assert {f["file"] for f in report["findings"]} == {"data/generation.json"}
