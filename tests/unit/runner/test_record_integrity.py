"""Integrity against writers (issue 19.6): keyed record digests, one run per output, instance
paths inside `instance_dir`.

- A record edited with its digest recomputed (as plain sha256, as the digest used to be, or as
  an HMAC under a key the editor made up) is set aside and rerun by `tcsexam run`, moved aside by
  `repair` and refused by the scorer; the rerun restores the true value.
- The key is a 0600 file at the tree's root; a candidate under bwrap or docker cannot read it
  (its text appears in no record); a tree copied with its key keeps its records, one copied
  without it reruns them.
- A second `tcsexam run` on an output (or records folder) that a run is writing stops with one
  line; a `file: ../../../../etc/passwd` in a task file is refused naming the file and instance.

Nothing here needs root: run it as root and as an unprivileged user.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import threading
from pathlib import Path

import pytest

from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.records.digest import record_digest
from tcsexam.records.key import KEY_FILE, ensure_key, find_key
from tcsexam.runner.engine.batch import PoolOptions, RunOptions
from tcsexam.runner.solver.orchestrate import RunHooks, TaskJob, run_job
from tcsexam.scoring.outcomes import parse_outcomes
from tcsexam.tasks import load_task

pytestmark = pytest.mark.hostile  # CI runs these as root and as an unprivileged user

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_support import sandbox_or_skip  # noqa: E402
from test_run_cli import write_task  # noqa: E402

STALL_S = 300

SOLVE = """\
import os, sys, time

inst, sol, wait_for, steal = sys.argv[1:5]
while wait_for != "-" and not os.path.exists(wait_for):
    time.sleep(0.05)
stolen = ""
if steal != "-":
    try:
        stolen = open(steal).read()
    except OSError as exc:
        stolen = f"cannot: {exc.strerror}"
    print("stolen:", stolen.replace("\\n", " "), file=sys.stderr)
    sys.exit(3)  # a crash: the record's message carries the end of stderr
n = int(open(inst).readline().split()[0])
with open(sol, "w") as fh:
    fh.write(" ".join(str(v % 2) for v in range(n)) + "\\n" + stolen.replace("\\n", " ")[:200] + "\\n")
"""


def candidate(root: Path, wait_for: str = "-", steal: str = "-") -> Path:
    cand = root / "cand"
    cand.mkdir(exist_ok=True)
    (cand / "solve.py").write_text(SOLVE)
    cmd = ["python3", "solve.py", "{instance}", "{solution}", wait_for, steal]
    (cand / "solver.yaml").write_text(f"command: {json.dumps(cmd)}\n")
    return cand


def run(task: Path, cand: Path, out: Path, *extra: str) -> int:
    args = ["run", "--task", str(task), "--candidate", str(cand), "--attempt", "1", "--output", str(out)]
    return main([*args, "--no-ray", "--no-progress", "--sandbox", "local", *extra])


def plain_sha256(rec: dict) -> str:
    body = json.dumps({k: v for k, v in rec.items() if k != "digest"}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()


@pytest.fixture
def tree(tmp_path):
    task = write_task(tmp_path, names=("a", "b"))
    cand = candidate(tmp_path)
    out = tmp_path / "results" / "records.json"
    assert run(task, cand, out) == 0
    return task, cand, out


@pytest.mark.parametrize("forge", ["plain-sha256", "other-key"])
def test_an_edited_record_with_a_recomputed_digest_is_set_aside_rerun_and_never_scored(tree, tmp_path, forge, capsys):
    task, cand, out = tree
    key = find_key(out)
    assert key.path == out.parent / KEY_FILE and key.path.stat().st_mode & 0o777 == 0o600
    victim = out.parent / "records" / "a.json"
    rec = json.loads(victim.read_text())
    true_a = rec["A"]
    rec["A"] = true_a + 30
    if forge == "plain-sha256":
        rec["digest"] = plain_sha256(rec)
    else:
        rec["digest"] = record_digest(rec, ensure_key(tmp_path / "forger"))  # a key the editor made
    victim.write_text(json.dumps(rec))
    records = [rec if r["instance"] == "a" else r for r in json.loads(out.read_text())]
    out.write_text(json.dumps(records))
    # the scorer refuses the edited records.json
    with pytest.raises(InputError, match="fails its integrity check"):
        parse_outcomes(records, "objective", str(out), require_digest=True)
    # repair chooses it as damaged (dry run: nothing moves)
    assert main(["repair", "--records-dir", str(victim.parent), "--dry-run"]) == 0
    assert "a.json" in capsys.readouterr().out
    # the next run sets it aside and runs the instance again: the true value is back
    capsys.readouterr()
    assert run(task, cand, out) == 0
    err = capsys.readouterr().err
    assert "1 set aside (1 digest-mismatch)" in err
    assert json.loads(victim.read_text())["A"] == true_a
    assert [r["A"] for r in json.loads(out.read_text()) if r["instance"] == "a"] == [true_a]
    parse_outcomes(json.loads(out.read_text()), "objective", str(out), require_digest=True)


def test_a_tree_copied_with_its_key_keeps_its_records_and_one_copied_without_reruns(tree, tmp_path, capsys):
    task, cand, out = tree
    with_key = tmp_path / "copy-with-key"
    shutil.copytree(out.parent, with_key)  # the whole tree, key included (cp -a)
    capsys.readouterr()
    assert run(task, cand, with_key / "records.json") == 0
    assert "(2 reused, 0 run)" in capsys.readouterr().err
    without = tmp_path / "copy-without-key"
    shutil.copytree(out.parent, without, ignore=shutil.ignore_patterns(KEY_FILE))
    assert run(task, cand, without / "records.json") == 0
    err = capsys.readouterr().err
    assert "(0 reused, 2 run, 2 set aside (2 digest-mismatch))" in err and "another record key" in err
    assert find_key(without).id != find_key(out).id


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_the_candidate_cannot_read_the_record_key(tmp_path, sandbox, capsys):
    sandbox_or_skip(sandbox)
    task = write_task(tmp_path, names=("a",))
    out = tmp_path / "results" / "records.json"
    cand = candidate(tmp_path, steal=str(out.parent / KEY_FILE))
    assert (
        main(
            ["run", "--task", str(task), "--candidate", str(cand), "--output", str(out), "--no-ray"]
            + ["--no-progress", "--sandbox", sandbox]
        )
        == 0
    )
    secret = find_key(out).secret.hex()
    record = json.loads((out.parent / "records" / "a.json").read_text())
    assert record["status"] == "crash" and "stolen: cannot: No such file" in record["message"], record["message"]
    assert secret not in json.dumps(record)
    assert secret not in out.read_text() and secret not in capsys.readouterr().err


def test_a_second_run_on_the_same_output_or_records_folder_stops_with_one_line(tmp_path, capsys, harness_uid):
    task = write_task(tmp_path, names=("a",))
    go = tmp_path / "go"
    cand = candidate(tmp_path, wait_for=str(go))
    out = tmp_path / "results" / "records.json"
    first: list = []

    def first_run():  # run_job itself: the CLI's SIGTERM handler needs the main thread
        first.append(
            run_job(
                TaskJob(task=task, candidate_dir=cand, output=out),
                RunOptions(sandbox="local", progress=False, pool=PoolOptions(use_ray=False)),
                RunHooks(log=lambda line: None),
            )
        )

    worker = threading.Thread(target=first_run, daemon=True)
    worker.start()
    try:
        lock = out.parent / f".{out.name}.tcsexam-run.lock"
        for _ in range(STALL_S * 20):  # until the first run holds its lock (it wrote its pid there)
            if lock.exists() and lock.read_text().startswith("pid "):
                break
            worker.join(0.05)
        capsys.readouterr()
        assert run(task, cand, out) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "another tcsexam run is writing it" in err[0] and str(out) in err[0]
        other_out = tmp_path / "elsewhere" / "records.json"  # another output, the same records folder
        assert run(task, cand, other_out, "--records-dir", str(out.parent / "records")) == 1
        assert "another tcsexam run is writing it" in capsys.readouterr().err
        # nor can `repair` move records from under it
        assert main(["repair", "--records-dir", str(out.parent / "records"), "--status", "any"]) == 1
        assert "another tcsexam run is writing it" in capsys.readouterr().err
    finally:
        go.write_text("")
        worker.join(STALL_S)
    assert [r.status for r in first[0].records] == ["ok"]
    assert run(task, cand, out) == 0  # released when the run ended


@pytest.mark.parametrize("file", ["../../../../etc/passwd", "/etc/passwd", "sub/../../x.txt"])
def test_an_instance_file_outside_instance_dir_is_refused(tmp_path, file):
    inst = tmp_path / "inst"
    (inst / "sub").mkdir(parents=True)
    (tmp_path / "x.txt").write_text("2 1\n1 2 1\n")
    head = (
        f"id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {{wall_s: 1}}\ninstance_dir: {inst}\n"
    )
    task = tmp_path / "task.yaml"
    task.write_text(head + f"instances:\n  - {{name: evil, file: {json.dumps(file)}}}\n")
    with pytest.raises(InputError) as exc:
        load_task(task)
    text = str(exc.value)
    assert str(task) in text and "'evil'" in text and "outside instance_dir" in text and "\n" not in text
    task.write_text(head + f"instances_outside_dir: true\ninstances:\n  - {{name: evil, file: {json.dumps(file)}}}\n")
    assert load_task(task).instances[0].name == "evil"  # said explicitly: accepted
    task.write_text(head + "instances:\n  - {name: ok, file: sub/../sub/g.txt}\n")
    assert load_task(task).instances[0].path == inst / "sub/../sub/g.txt"  # stays inside: fine


def test_a_run_refused_for_bad_input_leaves_no_output_folder(tmp_path, capsys):
    """The lock's folders are made before the task is read: a run that stops on a task file
    naming an instance outside instance_dir leaves nothing behind (no empty records folder)."""
    inst = tmp_path / "inst"
    inst.mkdir()
    task = tmp_path / "task.yaml"
    task.write_text(
        f"id: t\nproblem: maxcut\nkind: objective\ndirection: maximize\nlimits: {{wall_s: 1}}\ninstance_dir: {inst}\n"
        "instances:\n  - {name: evil, file: ../../../../etc/passwd}\n"
    )
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "solver.yaml").write_text("command: [sh, -c, 'true']\n")
    out = tmp_path / "out" / "deeper" / "records.json"
    assert run(task, cand, out) == 1
    assert "outside instance_dir" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    (tmp_path / "kept").mkdir()  # a folder that was there before stays
    assert run(task, cand, tmp_path / "kept" / "records.json") == 1
    assert (tmp_path / "kept").is_dir() and list((tmp_path / "kept").iterdir()) == []


def test_a_key_of_another_user_is_ignored_and_a_readable_one_refused(tmp_path):
    import os

    key = ensure_key(tmp_path / "tree")
    assert find_key(tmp_path / "tree" / "a" / "b").id == key.id
    key.path.chmod(0o644)
    with pytest.raises(InputError, match="may be read by others.*chmod 600"):
        find_key(tmp_path / "tree" / "x")
    key.path.chmod(0o600)
    if os.geteuid() != 0:
        pytest.skip("planting a key file owned by another user needs root")
    planted = tmp_path / "tree" / "sub" / KEY_FILE  # e.g. made by a candidate running as another uid
    planted.parent.mkdir()
    shutil.copy(key.path, planted)
    planted.write_text("tcsexam record key v1\n" + "ab" * 32 + "\n")
    os.chown(planted, 65534, 65534)
    assert find_key(planted.parent).path == key.path  # not the planted one: its owner is not us
