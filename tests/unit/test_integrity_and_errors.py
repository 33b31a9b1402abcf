"""Self-checking files and one-line errors (issue 11).

- records and derived files carry a digest (and their inputs' sha256); an edit is detected;
- `tcsexam score` says whether the reference label was verified;
- the workflow's heal step sets aside damaged or stale derived files (never the user's files);
- bad task limits, a full or read-only disk and a refused input are one line, exit 1, no partial
  or stale output. A full disk and a read-only folder are real tmpfs mounts when this runs as
  root (skipped otherwise), and an injected OSError at the write layer everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tcsexam import fileio
from tcsexam.cli import main
from tcsexam.errors import InputError
from tcsexam.records import InstanceRecord
from tcsexam.records.digest import digest_problem, record_digest
from tcsexam.records.integrity import file_sha256, seal, seal_problem
from tcsexam.records.key import KEY_FILE, ensure_key

ROOT = Path(__file__).resolve().parents[2]
TEST_REF = ROOT / "config" / "test" / "reference.json"


# ---------------------------------------------------------------------------------------------
# digests


def test_record_digest_detects_any_edit_and_survives_a_round_trip(tmp_path):
    key = ensure_key(tmp_path)
    data = InstanceRecord(instance="G1", status="ok", A=11624.0, wall_s=0.1, key="sha256:k").to_dict(key)
    assert data["digest"].startswith(f"hmac-sha256:{key.id}:")
    assert digest_problem(data, key) is None
    assert digest_problem(json.loads(json.dumps(data, indent=2)), key) is None  # as written and read back
    for field, value in (("A", 11625.0), ("status", "timeout"), ("key", "sha256:other"), ("instance", "G2")):
        assert digest_problem({**data, field: value}, key) == "digest mismatch (edited after it was written)"
    assert digest_problem({k: v for k, v in data.items() if k != "digest"}, key) == "no digest"
    assert record_digest(data, key) == data["digest"]
    assert "no record key" in digest_problem(data, None)


def test_a_record_edited_with_a_recomputed_plain_or_foreign_digest_is_refused(tmp_path):
    """The attack of issue 19: A 0 -> 30 with the digest recomputed, as plain sha256 (what the
    digest used to be) and as an HMAC under a key the editor made up."""
    key = ensure_key(tmp_path / "tree")
    data = InstanceRecord(instance="G1", status="ok", A=0.0, key="sha256:k").to_dict(key)
    edited = {**data, "A": 30.0}
    body = json.dumps({k: v for k, v in edited.items() if k != "digest"}, sort_keys=True, separators=(",", ":"))
    plain = {**edited, "digest": "sha256:" + hashlib.sha256(body.encode()).hexdigest()}
    assert "unkeyed digest" in digest_problem(plain, key)
    forged_key = ensure_key(tmp_path / "elsewhere")
    forged = {**edited, "digest": record_digest(edited, forged_key)}
    assert "another record key" in digest_problem(forged, key)
    same_id = {**edited, "digest": f"hmac-sha256:{key.id}:" + "0" * 64}
    assert digest_problem(same_id, key) == "digest mismatch (edited after it was written)"
    assert (tmp_path / "tree" / KEY_FILE).stat().st_mode & 0o777 == 0o600


def test_seal_records_inputs_and_detects_stale_ones(tmp_path):
    src = tmp_path / "records.json"
    src.write_text("[]")
    out = tmp_path / "relative.json"
    sealed = seal({"relative_score": 0.5}, {"records": src}, at=out)
    assert sealed["inputs_sha256"] == {"records": file_sha256(src)}
    assert seal_problem(sealed, {"records": src}, at=out) is None
    src.write_text("[ ]")
    assert "stale" in seal_problem(sealed, {"records": src}, at=out)
    src.unlink()
    assert "missing" in seal_problem(sealed, {"records": src}, at=out)
    assert "digest mismatch" in seal_problem({**sealed, "relative_score": 0.6}, at=out)


# ---------------------------------------------------------------------------------------------
# tcsexam score: the reference label


def _score_inputs(tmp_path):
    """A real attempts.csv, cohort.json and solver-score tree from the records of a tiny run."""
    from tcsexam.attempts.rows import failed_row, solver_row, write_table
    from tcsexam.suites import load_suite

    suite = load_suite("lite")
    ref = json.loads(TEST_REF.read_text())
    rows = []
    for track, items in suite.tracks.items():
        for item in items:
            if track != "solver":
                rows.append(failed_row("m", track, item, "1", "missing", "x"))
                continue
            recs = []
            for name, inst in ref["tasks"][item]["instances"].items():
                rec = {"instance": name, "status": "ok"}
                if ref["tasks"][item]["kind"] == "objective":
                    rec["A"] = float(inst[0])
                else:
                    rec["solved"] = True
                recs.append(InstanceRecord.from_dict({**rec, "harness_version": "test"}).to_dict(ensure_key(tmp_path)))
            base = tmp_path / "solver" / "m" / item / "1"
            base.mkdir(parents=True)
            (base / "records.json").write_text(json.dumps(recs))
            row, _ = solver_row(
                model="m",
                task=item,
                attempt="1",
                protocol="offline",
                records=base / "records.json",
                reference=TEST_REF,
                relative_output=base / "relative.json",
            )
            assert row.score_status == "valid", row.note
            rows.append(row)
    table = tmp_path / "attempts.csv"
    for k, row in enumerate(rows):
        path = tmp_path / "rows" / f"{k:03d}.json"
        fileio.atomic_write_json(path, row.to_dict(at=path))
    write_table(sorted((tmp_path / "rows").glob("*.json")), table)
    cohort = tmp_path / "cohort.json"
    cohort.write_text(
        json.dumps(
            {
                "suite": "lite",
                "solver_protocol": "offline",
                "solver_reference_id": ref["reference_id"],
                "models": {"m": {"attempts_per_task": 1}},
            }
        )
    )
    return table, cohort


def test_score_says_whether_the_reference_label_was_verified(tmp_path, capsys):
    table, cohort = _score_inputs(tmp_path)
    out = tmp_path / "index.json"
    args = ["score", "--suite", "lite", "--attempts", str(table), "--cohort", str(cohort), "--output", str(out)]
    assert main(args) == 0
    unverified = json.loads(out.read_text())
    assert unverified["solver_reference_verified"] is False
    assert [i["reason"] for i in unverified["issues"]] == ["reference_unverified"]
    assert "not verified" in capsys.readouterr().err
    assert main([*args, "--solver-scores", str(tmp_path / "solver")]) == 0
    verified = json.loads(out.read_text())
    assert verified["solver_reference_verified"] is True and verified["issues"] == []
    # every field of the spec is unchanged; only fields were added
    spec = ("schema_version", "metric_id", "suite", "solver_protocol", "solver_reference_id", "weights", "status")
    for key in spec:
        assert verified[key] == unverified[key], key
    for key in ("status", "index", "track_means", "coverage", "issues", "task_means", "attempts"):
        assert verified["models"]["m"][key] == unverified["models"]["m"][key], key
    # a cohort that claims another reference: an error naming the task, with the solver-score outputs
    data = json.loads(cohort.read_text())
    data["solver_reference_id"] = "someone-elses-reference"
    cohort.write_text(json.dumps(data))
    capsys.readouterr()  # the runs above log their progress on stderr (time-stamped INFO lines)
    assert main([*args, "--solver-scores", str(tmp_path / "solver")]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if " INFO " not in line]
    assert len(errors) == 1 and "maxcut-mqlib" in errors[0] and "someone-elses-reference" in errors[0]
    assert not out.exists() and (tmp_path / "index.json.stale").exists()  # the older output moved aside


def test_an_edited_record_is_never_scored(tmp_path):
    from tcsexam.attempts.rows import solver_row

    table, cohort = _score_inputs(tmp_path)
    base = tmp_path / "solver" / "m" / "maxcut-mqlib" / "1"
    recs = json.loads((base / "records.json").read_text())
    recs[0]["A"] = recs[0]["A"] + 1000  # digest kept
    (base / "records.json").write_text(json.dumps(recs))
    row, _ = solver_row(
        model="m",
        task="maxcut-mqlib",
        attempt="1",
        protocol="offline",
        records=base / "records.json",
        reference=TEST_REF,
        relative_output=base / "relative.json",
    )
    assert row.score_status == "judge_failed" and "digest mismatch" in row.note
    assert json.loads((base / "relative.json").read_text())["relative_score"] is None  # a refusal, no score


# ---------------------------------------------------------------------------------------------
# one-line errors


def _task_file(tmp_path, limits: str) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(
        "id: maxcut-mqlib\nproblem: maxcut\nkind: objective\ndirection: maximize\n"
        f"limits: {limits}\n"
        f"instance_dir: {ROOT / 'references/instances/maxcut-mqlib'}\n"
        "instances:\n  - {name: G11, file: G11.txt}\n"
    )
    return path


@pytest.mark.parametrize(
    "limits, expected",
    [
        ("{wall_s: 5, mem_mb: lots}", "limits.mem_mb must be a number of megabytes, not 'lots'"),
        ("{wall_s: 5, cpu_s: ten}", "limits.cpu_s must be a number of CPU seconds, not 'ten'"),
        ("{wall_s: 5, nproc: many}", "limits.nproc must be a number of processes"),
        ("{wall_s: .inf}", "limits.wall_s must be a finite positive number of wall-clock seconds, not inf"),
        ("{wall_s: 0}", "limits.wall_s must be a finite positive number"),
        ("{wall_s: 5, mem_mb: 1.5}", "limits.mem_mb must be a whole number"),
        ("{wall_s: 5, memory: 3}", "limits: unknown key(s) memory; known: cpu_s, disk_mb, mem_mb,"),
        ("{cpu_s: 5}", "limits: missing key 'wall_s'"),
    ],
)
def test_bad_task_limits_are_one_line_naming_the_file(tmp_path, capsys, limits, expected):
    task = _task_file(tmp_path, limits)
    out = tmp_path / "records.json"
    out.write_text("[]")  # an older result
    rc = main(
        [
            "run",
            "--task",
            str(task),
            "--candidate",
            str(ROOT / "solvers/demo-fast/maxcut-mqlib/1"),
            "--output",
            str(out),
            "--no-ray",
            "--no-progress",
            "--sandbox",
            "local",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error" in line]) == 1
    assert str(task) in err and expected in err
    # the older output cannot pass for this run's result; the task file (an input) is untouched
    assert not out.exists() and (tmp_path / "records.json.stale").read_text() == "[]"
    assert "moved to" in err and task.exists()


def test_a_refusal_never_moves_an_input_given_as_output(tmp_path, capsys):
    rows = tmp_path / "row.json"
    rows.write_text("{not json")
    assert main(["attempts", "table", "--rows", str(rows), "--output", str(rows)]) == 1
    assert rows.read_text() == "{not json" and not (tmp_path / "row.json.stale").exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_write_layer_errors_are_one_line_and_leave_no_partial_file(tmp_path, monkeypatch, code):
    real_fsync = os.fsync

    def failing_fsync(fd):
        real_fsync(fd)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(fileio.os, "fsync", failing_fsync)
    with pytest.raises(InputError) as err:
        fileio.atomic_write_json(tmp_path / "out.json", {"a": 1})
    text = str(err.value)
    assert str(tmp_path / "out.json") in text and ("full" in text if code == errno.ENOSPC else "read-only" in text)
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temp file


@contextlib.contextmanager
def _mount(tmp_path: Path, options: str):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root and mount(8) for a real tmpfs")
    target = tmp_path / "mnt"
    target.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _run_args(out: Path) -> list[str]:
    return [
        "run",
        "--task",
        "maxcut-mqlib",
        "--instances",
        "G11",
        "--candidate",
        str(ROOT / "solvers/demo-fast/maxcut-mqlib/1"),
        "--output",
        str(out),
        "--no-ray",
        "--no-progress",
        "--sandbox",
        "local",
    ]


def test_a_full_disk_in_tcsexam_run_is_one_line(tmp_path, capsys):
    with _mount(tmp_path, "size=8k") as mnt:
        (mnt / "out" / "records").mkdir(parents=True)
        with open(mnt / "fill", "wb") as fh:
            with contextlib.suppress(OSError):
                fh.write(b"\0" * 65536)
        assert main(_run_args(mnt / "out" / "records.json")) == 1
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert "No space left on device" in err and "full" in err and str(mnt / "out") in err
        assert sorted(p.name for p in (mnt / "out").rglob("*")) == ["records"]  # no partial file (no key)


def test_a_read_only_results_folder_is_one_line(tmp_path, capsys):
    with _mount(tmp_path, "size=1m,ro") as mnt:
        assert main(_run_args(mnt / "out" / "records.json")) == 1
        err = capsys.readouterr().err
        errors = [line for line in err.splitlines() if "error" in line]
        assert len(errors) == 1 and "Traceback" not in err
        assert "Read-only file system" in errors[0] and str(mnt / "out") in errors[0]
        assert main(["runner", "ray-head", "start", "--no-wait", "--state-dir", str(mnt / ".ray-head")]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "read-only" in err and str(mnt / ".ray-head") in err


def test_ray_head_on_a_full_disk_leaves_no_head(tmp_path, capsys):
    with _mount(tmp_path, "size=8k") as mnt:
        (mnt / ".ray-head").mkdir()
        with open(mnt / "fill", "wb") as fh:
            with contextlib.suppress(OSError):
                fh.write(b"\0" * 65536)
        rc = main(
            ["runner", "ray-head", "start", "--no-wait", "--num-cpus", "1", "--state-dir", str(mnt / ".ray-head")]
        )
        err = capsys.readouterr().err
        assert rc == 1 and err.count("\n") == 1 and "full" in err
        assert not (mnt / ".ray-head" / "pid").exists()


def test_a_broken_solver_yaml_makes_every_instance_invalid_loudly_and_exits_0(tmp_path, capsys):
    cand = tmp_path / "cand"
    cand.mkdir()
    (cand / "solver.yaml").write_text("command: [python3, solve.py\n")  # malformed YAML
    out = tmp_path / "out" / "records.json"
    args = _run_args(out)
    args[args.index("--candidate") + 1] = str(cand)
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "WARNING" in err and "EVERY instance is recorded invalid" in err
    assert "WARNING: all 1 instances are invalid because the candidate cannot start" in err
    assert {r["status"] for r in json.loads(out.read_text())} == {"invalid"}
