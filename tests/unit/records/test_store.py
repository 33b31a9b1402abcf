"""The per-instance record store: file names, keys, reuse rules and `tcsexam repair`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.records import InstanceRecord
from tcsexam.records.digest import hash_candidate, hash_file, record_key
from tcsexam.records.store import RecordStore, record_filename, repair


def test_record_filename_keeps_plain_names_and_escapes_the_rest():
    assert record_filename("G1") == "G1.json"
    assert record_filename("uf20-01.cnf") == "uf20-01.cnf.json"
    assert record_filename("a/b") == "a%2Fb.json"
    assert record_filename("..") == "%2E..json"
    assert record_filename(".hidden") == "%2Ehidden.json"
    assert record_filename("50%") == "50%25.json"
    assert record_filename("é") == "%C3%A9.json"
    with pytest.raises(InputError):
        record_filename("")


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=20), st.text(min_size=1, max_size=20))
def test_record_filename_is_injective_and_safe(a, b):
    fa, fb = record_filename(a), record_filename(b)
    assert (fa == fb) == (a == b)
    assert "/" not in fa and "\0" not in fa and not fa.startswith(".")


def _candidate(tmp_path: Path) -> Path:
    d = tmp_path / "cand"
    (d / "src").mkdir(parents=True)
    (d / "solver.yaml").write_text('command: ["python3", "solve.py"]\n')
    (d / "solve.py").write_text("print(1)\n")
    (d / "src" / "lib.py").write_text("X = 1\n")
    return d


def test_candidate_hash_sees_content_names_new_files_and_exec_bit(tmp_path):
    d = _candidate(tmp_path)
    base = hash_candidate(d)
    assert hash_candidate(d) == base
    # caches are not part of the candidate
    (d / "__pycache__").mkdir()
    (d / "__pycache__" / "solve.cpython-311.pyc").write_bytes(b"\0\1")
    (d / "src" / "lib.pyc").write_bytes(b"\0")
    assert hash_candidate(d) == base
    (d / "src" / "lib.py").write_text("X = 2\n")
    changed = hash_candidate(d)
    assert changed != base
    (d / "src" / "lib.py").write_text("X = 1\n")
    assert hash_candidate(d) == base
    (d / "src" / "lib.py").rename(d / "src" / "lib2.py")
    assert hash_candidate(d) != base
    (d / "src" / "lib2.py").rename(d / "src" / "lib.py")
    (d / "extra.txt").write_text("")
    assert hash_candidate(d) != base
    (d / "extra.txt").unlink()
    assert hash_candidate(d) == base
    os.chmod(d / "solve.py", 0o755)
    assert hash_candidate(d) != base


def test_hash_file_and_unreadable_instance(tmp_path):
    f = tmp_path / "inst.txt"
    f.write_bytes(b"x" * (3 << 20))
    import hashlib

    assert hash_file(f) == hashlib.sha256(b"x" * (3 << 20)).hexdigest()
    with pytest.raises(InputError, match="missing.txt"):
        hash_file(tmp_path / "missing.txt")


KEY_ARGS = dict(
    candidate_hash="c" * 64,
    instance_hash="i" * 64,
    limits={"wall_s": 2, "cpu_s": None, "mem_mb": 1024, "output_mb": 64, "nproc": 64, "threads": 1},
    sandbox="local",
    seed=0,
    meta={"best_known": 10},
    problem="maxcut",
)


@pytest.mark.parametrize(
    "change",
    [
        {"candidate_hash": "d" * 64},
        {"instance_hash": "j" * 64},
        {"limits": dict(KEY_ARGS["limits"], wall_s=3)},
        {"limits": dict(KEY_ARGS["limits"], mem_mb=2048)},
        {"limits": dict(KEY_ARGS["limits"], threads=2)},
        {"sandbox": "bwrap"},
        {"seed": 1},
        {"meta": {"best_known": 11}},
        {"harness_version": "0.0.0-other"},
    ],
)
def test_record_key_changes_with_every_component(change):
    base = record_key(**KEY_ARGS)
    assert base.startswith("sha256:") and base == record_key(**KEY_ARGS)
    assert record_key(**{**KEY_ARGS, **change}) != base


def test_record_key_ignores_dict_order():
    limits = dict(reversed(list(KEY_ARGS["limits"].items())))
    assert record_key(**{**KEY_ARGS, "limits": limits}) == record_key(**KEY_ARGS)


def _rec(name, status="ok", key="k1", **kw):
    return InstanceRecord(instance=name, status=status, key=key, **kw)


def test_store_lookup_rules(tmp_path):
    store = RecordStore(tmp_path / "records")
    store.prepare()
    assert store.lookup("a", "k1").reason == "missing"
    store.write(_rec("a", A=5.0))
    hit = store.lookup("a", "k1")
    assert hit.reason == "reused" and hit.reused.A == 5.0
    assert store.lookup("a", "k2").reason == "key-changed"
    store.write(_rec("b", status="infrastructure_error"))
    assert store.lookup("b", "k1").reason == "infrastructure_error"
    for status in ("timeout", "memout", "crash", "invalid", "certificate_failed"):
        store.write(_rec("c", status=status))
        assert store.lookup("c", "k1").reason == "reused"
    # a broken file (not written by the store) is re-run, not trusted
    store.path_for("d").write_text("{not json")
    assert store.lookup("d", "k1").reason == "unreadable"
    store.path_for("e").write_text(json.dumps({"instance": "other", "status": "ok"}))
    assert store.lookup("e", "k1").reason == "digest-mismatch"  # no digest: not written by the store
    sealed = _rec("other").to_dict(store.key)
    store.path_for("e").write_text(json.dumps(sealed))
    with pytest.raises(InputError, match="other"):
        store.load("e")
    assert store.lookup("e", "k1").reason == "wrong-instance"
    # every record that is not reused was set aside: kept, with its reason, never deleted
    aside = store.set_aside_dir
    assert sorted(p.name for p in aside.glob("*.json*")) == ["a.json", "d.json", "e.json", "e.json.2"]
    reasons = (aside / "reasons.txt").read_text()
    assert "a.json: key-changed" in reasons and "d.json: unreadable" in reasons and "wrong-instance" in reasons
    assert [r for _, r, _ in store.set_aside] == ["key-changed", "unreadable", "digest-mismatch", "wrong-instance"]


def test_an_edited_record_is_set_aside_and_never_reused(tmp_path):
    store = RecordStore(tmp_path / "records")
    store.prepare()
    path = store.write(_rec("a", A=5.0))
    data = json.loads(path.read_text())
    data["A"] = 6.0  # edited, digest kept
    path.write_text(json.dumps(data))
    found = store.lookup("a", "k1")
    assert found.reused is None and found.reason == "digest-mismatch"
    assert not path.exists() and json.loads((store.set_aside_dir / "a.json").read_text())["A"] == 6.0
    path.write_text('{"instance": "a", "status": "ok", "A": 5.0, "key": "k1", "dig')  # truncated
    assert store.lookup("a", "k1").reason == "unreadable"


def test_store_write_is_atomic_and_prepare_cleans_leftovers(tmp_path):
    store = RecordStore(tmp_path / "r")
    store.prepare()
    path = store.write(_rec("x/y"))
    assert path.name == "x%2Fy.json"
    assert json.loads(path.read_text())["instance"] == "x/y"
    leftover = store.dir / ".x%2Fy.json.abc123.tmp"
    leftover.write_text("{")
    store.prepare()
    assert not leftover.exists() and path.exists()
    assert [p.name for p in store.dir.iterdir()] == ["x%2Fy.json"]


def test_prepare_rejects_a_file_in_the_way(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="records folder"):
        RecordStore(tmp_path / "f").prepare()


def _filled(tmp_path) -> RecordStore:
    store = RecordStore(tmp_path / "records")
    store.prepare()
    store.write(_rec("a"))
    store.write(_rec("b", status="infrastructure_error"))
    store.write(_rec("c", status="timeout"))
    store.write(_rec("d", status="infrastructure_error"))
    return store


def test_repair_defaults_to_infrastructure_errors_and_keeps_them(tmp_path):
    store = _filled(tmp_path)
    result = repair(store.dir)
    assert sorted(result.moved) == [("b", "infrastructure_error"), ("d", "infrastructure_error")]
    assert result.kept == 2
    assert sorted(p.name for p in store.dir.glob("*.json")) == ["a.json", "c.json"]
    assert sorted(p.name for p in result.destination.glob("*.json")) == ["b.json", "d.json"]
    assert result.destination.parent == store.dir / ".repaired"
    assert [r.instance for _, r in store.records()] == ["a", "c"]  # .repaired is not read back
    again = repair(store.dir)
    assert again.moved == [] and again.destination is None


def test_repair_by_status_and_instances(tmp_path):
    store = _filled(tmp_path)
    assert [m for m in repair(store.dir, statuses=["timeout"], dry_run=True).moved] == [("c", "timeout")]
    assert store.path_for("c").exists()  # dry run moves nothing
    # instances without a status: those instances whatever their status
    result = repair(store.dir, instances=["a", "zz"])
    assert result.moved == [("a", "ok")] and result.unknown_instances == ["zz"]
    # both filters together
    assert repair(store.dir, statuses=["timeout"], instances=["b"]).moved == []
    assert sorted(repair(store.dir, statuses=["any"]).moved) == [
        ("b", "infrastructure_error"),
        ("c", "timeout"),
        ("d", "infrastructure_error"),
    ]
    assert list(store.dir.glob("*.json")) == []
    with pytest.raises(InputError, match="unknown status"):
        repair(store.dir, statuses=["bogus"])


def test_repair_cli(tmp_path, capsys):
    store = _filled(tmp_path)
    out = tmp_path / "records.json"
    out.write_text("[]")
    assert main(["repair", "--records-dir", str(store.dir), "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "moved 2 record(s)" in text and "b (infrastructure_error)" in text
    assert not out.exists()
    assert main(["repair", "--records-dir", str(store.dir)]) == 0
    assert "nothing to repair" in capsys.readouterr().out
    assert main(["repair", "--records-dir", str(tmp_path / "nope")]) == 1
    assert "records folder not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["repair", "--records-dir", str(store.dir), "--status", "bogus"])
    assert exc.value.code == 2
    store.path_for("junk").write_text("[1, 2]")  # a damaged record file is always moved aside
    assert main(["repair", "--records-dir", str(store.dir)]) == 0
    assert "junk.json (not an instance record" in capsys.readouterr().out
    assert not store.path_for("junk").exists()


def test_repair_sets_aside_a_damaged_records_json(tmp_path, capsys):
    store = _filled(tmp_path)
    out = tmp_path / "records.json"
    good = [r.to_dict(store.key) for _, r in store.records() if r.status != "infrastructure_error"]
    out.write_text(json.dumps(good))
    repair(store.dir)  # the infrastructure_error records out of the way
    assert main(["repair", "--records-dir", str(store.dir), "--output", str(out)]) == 0
    assert "nothing to repair" in capsys.readouterr().out and out.exists()  # sound: kept
    out.write_text(json.dumps(good)[:40])  # truncated
    assert main(["repair", "--records-dir", str(store.dir), "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "set aside stale" in text and not out.exists()
    assert len(list((store.dir / ".repaired").glob("*/records.json"))) == 1
    edited = [dict(good[0], A=123456.0), *good[1:]]
    out.write_text(json.dumps(edited))
    assert main(["repair", "--records-dir", str(store.dir), "--output", str(out)]) == 0
    assert "digest mismatch" in capsys.readouterr().out and not out.exists()
