"""Twins keep the value: value(certificate on the twin) == value(translated certificate on the
original) on every bundled instance, the TSP distance matrix bit for bit, the reference carried
over exactly (docs/twins.md)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tcsexam.problems import get_problem
from tcsexam.tasks import load_task
from tcsexam.twins.make import make_twins, twin_name, twin_rng

BUNDLED = ["maxcut-mqlib", "sat-satlib", "tsp-tsplib", "coloring-dimacs", "maxsat-wcnf", "tsp-tsplib-large"]
CASES = [(t, inst.name) for t in BUNDLED for inst in load_task(t).instances]


def _twin(task: str, name: str, seed: int, tmp_path: Path):
    t = load_task(task)
    inst = t.instance(name)
    p = t.problem_impl
    orig = p.parse_instance(inst.path)
    tw = p.make_twin(orig, twin_rng(task, seed, name), twin_name(task, seed, name))
    path = tmp_path / f"twin{p.instance_suffix}"
    path.write_text(tw.text)
    return t, inst, p, orig, p.parse_instance(path), tw


def _certificates(problem: str, twin, rng: np.random.Generator) -> list[bytes]:
    """Certificates for the twin: random ones, and some from a quick real heuristic."""
    if problem == "maxcut":
        sides = [rng.integers(0, 2, twin.n) for _ in range(3)]
        # one pass of greedy improvement: flip every vertex whose flip gains
        s = sides[0].copy()
        for _ in range(2):
            same = np.take(s, twin.u) == np.take(s, twin.v)
            gain = np.bincount(twin.u, same * twin.w, twin.n) + np.bincount(twin.v, same * twin.w, twin.n)
            s = np.where(gain > 0, 1 - s, s)
        sides.append(s)
        return [" ".join(map(str, x)).encode() for x in sides]
    if problem == "coloring":
        out = []
        for _ in range(2):  # greedy colouring in a random vertex order: always proper
            adj = [[] for _ in range(twin.n)]
            for a, b in zip(twin.u.tolist(), twin.v.tolist()):
                adj[a].append(b)
                adj[b].append(a)
            col = [-1] * twin.n
            for v in rng.permutation(twin.n).tolist():
                used = {col[x] for x in adj[v]}
                col[v] = next(k for k in range(twin.n + 1) if k not in used)
            out.append(" ".join(map(str, col)).encode())
        out.append(" ".join(map(str, rng.integers(0, 3, twin.n))).encode())  # mostly improper
        return out
    if problem == "tsp":
        tours = [rng.permutation(twin.n) + 1 for _ in range(3)]
        return [" ".join(map(str, t)).encode() for t in tours] + [
            b"TOUR_SECTION\n" + "\n".join(map(str, tours[0])).encode() + b"\n-1\n"
        ]
    if problem == "sat":
        from pysat.solvers import Cadical153

        clauses, k = [], 0
        for length in twin.lengths.tolist():
            v, pos = twin.var[k : k + length], twin.positive[k : k + length]
            clauses.append([int(x) if p else -int(x) for x, p in zip(v, pos)])
            k += length
        with Cadical153(bootstrap_with=clauses) as s:
            model = s.get_model() if s.solve() else None
        rand = [int(v) if b else -int(v) for v, b in zip(range(1, twin.nvars + 1), rng.integers(0, 2, twin.nvars))]
        certs = [("s SATISFIABLE\nv " + " ".join(map(str, rand)) + " 0\n").encode()]
        certs.append(
            b"s UNSATISFIABLE\n"
            if model is None
            else ("s SATISFIABLE\nv " + " ".join(map(str, model)) + " 0\n").encode()
        )
        return certs
    if problem == "maxsat":
        bits = ["".join("01"[b] for b in rng.integers(0, 2, twin.nvars)) for _ in range(2)]
        lits = [int(v) if b else -int(v) for v, b in zip(range(1, twin.nvars + 1), rng.integers(0, 2, twin.nvars))]
        from pysat.solvers import Cadical153

        hard = [[] for _ in range(twin.hard.count)]
        for v, pos, k in zip(twin.hard.var.tolist(), twin.hard.positive.tolist(), twin.hard.clause_of.tolist()):
            hard[k].append(v if pos else -v)
        with Cadical153(bootstrap_with=hard) as s:  # a model of the hard clauses: a feasible answer
            s.solve()
            model = [x for x in s.get_model() or [] if abs(x) <= twin.nvars]
        feasible = [("v " + " ".join(map(str, model)) + " 0\n").encode()] if model else []
        return feasible + [f"v {b}\n".encode() for b in bits] + [("v " + " ".join(map(str, lits)) + "\n").encode()]
    raise AssertionError(problem)


@pytest.mark.parametrize("task,name", CASES, ids=[f"{t}:{n}" for t, n in CASES])
def test_twin_keeps_every_certificates_value(task, name, tmp_path):
    t, inst, p, orig, twin, tw = _twin(task, name, 11, tmp_path)
    original_bytes = inst.path.read_bytes()
    assert tw.text.encode() != original_bytes
    assert name not in tw.text and inst.path.stem not in tw.text  # the name does not survive
    assert not any(line.lstrip().startswith("c ") for line in tw.text.splitlines())  # no comment
    rng = np.random.default_rng(5)
    seen_ok = 0
    for cert in _certificates(t.problem, twin, rng):
        on_twin = p.check_certificate(twin, cert, inst.meta)
        back = p.translate_certificate(tw.mapping, cert)
        on_orig = p.check_certificate(orig, back, inst.meta)
        assert on_twin.status == on_orig.status, (on_twin.message, on_orig.message)
        assert on_twin.value == on_orig.value and on_twin.solved == on_orig.solved
        seen_ok += on_twin.status == "ok"
    assert seen_ok >= 1


@pytest.mark.parametrize("task,name", [c for c in CASES if c[0].startswith("tsp")])
def test_tsp_twin_distance_matrix_is_the_original_bit_for_bit(task, name, tmp_path):
    for seed in range(6):  # every symmetry (swap, each flip, translations) gets drawn
        _, _, _, orig, twin, tw = _twin(task, name, seed, tmp_path)
        perm = np.asarray(tw.mapping["perm"])
        assert np.array_equal(twin.full_matrix()[np.ix_(perm, perm)], orig.full_matrix())
        assert twin.weight_type == orig.weight_type


def test_geo_is_only_mirrored_and_integer_coordinates_are_translated(tmp_path):
    _, _, _, _, _, geo = _twin("tsp-tsplib", "burma14", 3, tmp_path)
    assert geo.mapping["symmetry"]["swap_xy"] is False and geo.mapping["symmetry"]["shift"] == [0, 0]
    shifts = [_twin("tsp-tsplib", "eil51", s, tmp_path)[5].mapping["symmetry"]["shift"] for s in range(4)]
    assert any(any(x != 0 for x in s) for s in shifts)


def test_sat_twin_flips_and_permutes_and_keeps_the_counts(tmp_path):
    _, _, _, orig, twin, tw = _twin("sat-satlib", "uf50-01", 2, tmp_path)
    assert (twin.nvars, twin.nclauses) == (orig.nvars, orig.nclauses)
    assert 0 < sum(tw.mapping["flip"]) < orig.nvars and tw.mapping["perm"] != list(range(orig.nvars))
    assert sorted(twin.lengths.tolist()) == sorted(orig.lengths.tolist())


def test_maxsat_twin_keeps_form_and_weights(tmp_path):
    for name in ("gen-old-n30-s101", "gen-new-n30-s201"):
        _, _, _, orig, twin, _ = _twin("maxsat-wcnf", name, 4, tmp_path)
        assert twin.form == orig.form
        assert sorted(twin.weights.tolist()) == sorted(orig.weights.tolist())
        assert twin.hard.count == orig.hard.count


def test_twins_make_writes_task_reference_and_map(tmp_path):
    out = tmp_path / "tw"
    summary = make_twins("tsp-tsplib", 9, out, "lite")
    assert summary["reference_id"] == "tcsexam-bundled-k3-v4-twin-s9"
    task = load_task(out / "task.yaml")
    orig = load_task("tsp-tsplib")
    assert task.id == orig.id and task.limits == orig.limits and len(task.instances) == len(orig.instances)
    ref = json.loads((out / "reference.json").read_text())
    lite = json.loads(Path("references/lite.json").read_text())
    doc = json.loads((out / "map.json").read_text())
    back = {t: v["original"] for t, v in doc["instances"].items()}
    carried = {back[t]: v for t, v in ref["tasks"]["tsp-tsplib"]["instances"].items()}
    assert carried == lite["tasks"]["tsp-tsplib"]["instances"]  # the same outcome lists, exactly
    for inst in task.instances:
        assert inst.name.startswith("twin-") and len(inst.name) == 15
        assert hashlib.sha256(inst.path.read_bytes()).hexdigest() == inst.sha256
        assert inst.meta == orig.instance(back[inst.name]).meta
    # the same seed gives the same bytes; another seed other bytes
    again = make_twins("tsp-tsplib", 9, tmp_path / "again", "lite")
    assert again["instances"] == summary["instances"]
    a = sorted(p.read_bytes() for p in (out / "instances").iterdir())
    b = sorted(p.read_bytes() for p in (tmp_path / "again" / "instances").iterdir())
    assert a == b
    make_twins("tsp-tsplib", 10, tmp_path / "other", "lite")
    c = sorted(p.read_bytes() for p in (tmp_path / "other" / "instances").iterdir())
    assert not set(a) & set(c)


def test_twins_make_cli_error_leaves_nothing(tmp_path):
    out = tmp_path / "tw"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "twins",
            "make",
            "--task",
            "no-such-task",
            "--seed",
            "1",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "no-such-task" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists() and not list(tmp_path.iterdir())


def test_translate_cli_round_trip(tmp_path):
    out = tmp_path / "tw"
    make_twins("maxcut-mqlib", 3, out, "lite")
    doc = json.loads((out / "map.json").read_text())
    name, entry = next(iter(doc["instances"].items()))
    p = get_problem("maxcut")
    twin = p.parse_instance(out / "instances" / f"{name}.txt")
    side = np.random.default_rng(0).integers(0, 2, twin.n)
    cert = tmp_path / "cert"
    cert.write_text(" ".join(map(str, side)))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tcsexam",
            "twins",
            "translate",
            "--map",
            str(out / "map.json"),
            "--instance",
            name,
            "--certificate",
            str(cert),
            "--output",
            str(tmp_path / "back"),
        ],
        check=True,
        capture_output=True,
    )
    orig = p.parse_instance(load_task("maxcut-mqlib").instance(entry["original"]).path)
    a = p.check_certificate(twin, cert.read_bytes(), {})
    b = p.check_certificate(orig, (tmp_path / "back").read_bytes(), {})
    assert a.status == b.status == "ok" and a.value == b.value


def test_degenerate_instance_twin_still_differs_and_parses(tmp_path):
    (tmp_path / "inst").mkdir()
    (tmp_path / "inst" / "one.txt").write_text("1 0\n")
    task = tmp_path / "one.yaml"
    task.write_text(
        "id: tiny\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {wall_s: 1}\n"
        f"instance_dir: {tmp_path / 'inst'}\ninstances:\n- {{name: one, file: one.txt}}\n"
    )
    make_twins(task, 1, tmp_path / "tw", None)
    (twin,) = (tmp_path / "tw" / "instances").iterdir()
    assert twin.read_bytes() != b"1 0\n"
    assert get_problem("maxcut").parse_instance(twin).n == 1
