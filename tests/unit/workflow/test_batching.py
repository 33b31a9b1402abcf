"""Few, long cluster jobs: the workflow's batches (tcsexam.workflow.batching) and `tcsexam batch
run | take` (tcsexam.workflow.batch_cli), with real member processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tcsexam.campaign.planner import load_config
from tcsexam.cli import build_parser
from tcsexam.errors import InputError
from tcsexam.workflow import batching
from tcsexam.workflow.batching import Batches, JobKind, Member, pack
from tcsexam.workflow.configfix import coerce_config, load_config_schema, with_defaults
from tcsexam.workflow.plan import Plan
from tcsexam.workflow.startup import executor_is_local, prepare

ROOT = Path(__file__).resolve().parents[3]
TINY = ROOT / "config" / "test" / "config.yaml"
TCSEXAM = str(Path(sys.executable).with_name("tcsexam"))


def _member(key: str, work: float, threads: int = 1) -> Member:
    return Member(JobKind.PROOF, "m", key, "1", threads, work, 5, 1024)


def test_pack_balances_batches_of_the_target_and_honours_the_limits():
    members = [_member(f"i{n}", w) for n, w in enumerate([50, 40, 30, 30, 20, 20, 10])]
    cost = {m.key: m.work_s for m in members}
    # 200 s of work, 60 s batches on one thread: four batches, none over the longest member + target
    bins = pack(members, cost, threads=1, target_s=60, min_batches=1, max_members=10)
    assert len(bins) == 4
    assert sorted(m.key for b in bins for m in b) == sorted(cost)
    assert max(sum(cost[m.key] for m in b) for b in bins) <= 60
    # two threads hold twice the work; min_batches spreads a small campaign; max_members caps a batch
    assert len(pack(members, cost, threads=2, target_s=60, min_batches=1, max_members=10)) == 2
    assert len(pack(members, cost, threads=1, target_s=3600, min_batches=3, max_members=10)) == 3
    assert all(len(b) <= 2 for b in pack(members, cost, threads=1, target_s=3600, min_batches=1, max_members=2))
    # never more batches than members
    assert len(pack(members[:2], cost, threads=1, target_s=1, min_batches=5, max_members=10)) == 2


def _timings(tmp_path: Path, plan: Plan, wall_s: float) -> Path:
    """An earlier run's results tree: every Solver instance and proof item of the plan at wall_s."""
    tree = tmp_path / "earlier"
    for n, task in enumerate(plan.solver_tasks):
        recs = [{"task": task, "instance": i, "wall_s": wall_s} for i in plan.instances(task)]
        path = tree / f"solver/{n}/records.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(recs))
    return tree


def test_tiny_config_batches_cover_every_cluster_job_once_with_stable_names(tmp_path):
    plan = Plan(load_config(TINY, ROOT), ROOT)
    assert Batches(plan).batches == []  # off by default: every job under its own rule
    settings = {"enabled": True, "target_min": 1, "min_batches": 2, "timings": [str(_timings(tmp_path, plan, 2.0))]}
    batches = Batches(plan, settings).batches
    keys = [m.key for b in batches for m in b.members]
    solver = [p for p in plan.planned if p.track == "solver"]
    assert len(keys) == len(set(keys)) == len(solver) + len(plan.construction_runs()) + len(plan.proof_runs())
    assert len(batches) >= 2
    # the Snakemake inside a cluster job plans again and finds the same batches under the same names
    again = Batches(Plan(load_config(TINY, ROOT), ROOT), settings).batches
    assert [(b.name, [m.key for m in b.members]) for b in again] == [
        (b.name, [m.key for m in b.members]) for b in batches
    ]
    with pytest.raises(InputError, match="not among this plan's batches"):
        Batches(plan, settings).batch("b001-0000000000")
    # only the Solver runs batched: the others stay under their own rules
    solver_only = Batches(plan, {**settings, "kinds": ["solver"]}).batches
    assert {m.kind for b in solver_only for m in b.members} == {JobKind.SOLVER}


def test_every_members_command_is_one_the_cli_accepts(tmp_path):
    plan = Plan(load_config(TINY, ROOT), ROOT)
    batches = Batches(plan, {"enabled": True, "timings": [str(_timings(tmp_path, plan, 1.0))]})
    parser = build_parser()
    seen = set()
    for b in batches.batches:
        for m in b.members:
            argv = batches.argv(m, "out.json")
            assert argv[0] == "tcsexam"
            args = parser.parse_args(argv[1:])  # a typo in a flag exits 2 here
            assert args.output == "out.json"
            seen.add(m.kind)
    assert seen == set(JobKind)


def test_timings_from_this_runs_own_results_are_refused():
    plan = Plan(load_config(TINY, ROOT), ROOT)
    with pytest.raises(InputError, match="this run's own results"):
        Batches(plan, {"enabled": True, "timings": [plan.results]})
    with pytest.raises(InputError, match="this run.s own results"):
        Batches(plan, {"enabled": True, "timings": [plan.out + "/solver"]})


# ---- tcsexam batch run | take ----------------------------------------------------------------------

MEMBER = r"""
import os, sys, time
out, sleep, code = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
print("member", os.path.basename(os.path.dirname(out)), "starts", flush=True)
time.sleep(sleep)
if code:
    print("2026-12-06T10:00:00Z ERROR   the solver's machine broke", flush=True)
    sys.exit(code)
tmp = out + ".tmp"
open(tmp, "w").write("[]")
os.replace(tmp, out)
"""


def _spec(tmp_path: Path, name: str, sleep: float = 0.0, code: int = 0, threads: int = 1) -> dict:
    folder = tmp_path / "solver" / name  # the member's own folder: its output and log staged there
    out = folder / "records.json.staged"
    return {
        "key": f"solver/m/{name}/1",
        "argv": [sys.executable, "-c", MEMBER, str(out), str(sleep), str(code)],
        "threads": threads,
        "output": str(out),
        "log": str(folder / "run.log.staged"),
        "ray": False,
    }


def _batch(specs: list[dict], summary: Path, threads: int = 1) -> list[str]:
    argv = [TCSEXAM, "batch", "run", "--threads", str(threads), "--output", str(summary)]
    for s in specs:
        argv += ["--member", json.dumps(s)]
    return argv


def test_batch_runs_members_records_a_failure_and_keeps_the_rest(tmp_path):
    missing = {**_spec(tmp_path, "nocmd"), "argv": [str(tmp_path / "no-such-program")]}
    specs = [_spec(tmp_path, "a", 0.5), _spec(tmp_path, "b", 0.5), _spec(tmp_path, "bad", code=3), _spec(tmp_path, "c")]
    specs.append(missing)
    summary = tmp_path / "b001.json"
    proc = subprocess.run(_batch(specs, summary, threads=2), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr  # a member's failure is a record, not the batch's
    data = json.loads(summary.read_text())
    status = {m["key"]: (m["status"], m["code"]) for m in data["members"]}
    assert status == {
        "solver/m/a/1": ("ok", 0),
        "solver/m/b/1": ("ok", 0),
        "solver/m/bad/1": ("failed", 3),
        "solver/m/c/1": ("ok", 0),
        "solver/m/nocmd/1": ("failed", None),  # a program that cannot start is a record as well
    }
    assert "cannot be started" in Path(missing["log"]).read_text()
    bad = next(m for m in data["members"] if m["key"] == "solver/m/bad/1")
    assert bad["reason"] == "the solver's machine broke"
    # two threads: a and b ran side by side (their logs' lines show both started before either ended)
    assert "starts" in Path(specs[0]["log"]).read_text()
    assert not list(tmp_path.rglob("*.partial"))
    # run again: the staged members are not run again, the failed one is
    os.utime(specs[0]["output"], (1, 1))
    proc = subprocess.run(_batch(specs, summary, threads=2), capture_output=True, text=True, timeout=120)
    again = {m["key"]: m["status"] for m in json.loads(summary.read_text())["members"]}
    assert again["solver/m/a/1"] == "done_earlier" and again["solver/m/bad/1"] == "failed"
    assert os.stat(specs[0]["output"]).st_mtime == 1

    # take: the staged output and log renamed into place; the failed member's log says why, exit 1
    final = tmp_path / "solver" / "a"
    take = [TCSEXAM, "batch", "take", "--summary", str(summary), "--key", "solver/m/a/1"]
    take += ["--output", str(final / "records.json")]
    assert subprocess.run([*take, "--log", str(final / "run.log")], timeout=60).returncode == 0
    assert json.loads((final / "records.json").read_text()) == []
    assert "member a starts" in (final / "run.log").read_text()
    assert not Path(specs[0]["output"]).exists() and not Path(specs[0]["log"]).exists()
    final = tmp_path / "solver" / "bad"
    take = [TCSEXAM, "batch", "take", "--summary", str(summary), "--key", "solver/m/bad/1"]
    take += ["--output", str(final / "records.json")]
    proc = subprocess.run([*take, "--log", str(final / "run.log")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and not (final / "records.json").exists()
    log = (final / "run.log").read_text()
    assert "member bad starts" in log and log.splitlines()[-1].endswith("the solver's machine broke")


def test_batch_cut_off_leaves_finished_members_complete_and_the_rest_absent(tmp_path):
    specs = [_spec(tmp_path, "quick"), _spec(tmp_path, "slow", 60), _spec(tmp_path, "never")]
    summary = tmp_path / "b001.json"
    with subprocess.Popen(_batch(specs, summary), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        deadline = time.monotonic() + 60
        while not Path(specs[1]["log"] + ".partial").is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert json.loads(Path(specs[0]["output"]).read_text()) == []
    assert Path(specs[0]["log"]).is_file()
    for s in specs[1:]:
        assert not Path(s["output"]).exists() and not Path(s["log"]).exists()
    assert not summary.exists() and not list(tmp_path.rglob("*.partial"))


def test_batch_refuses_a_malformed_member(tmp_path):
    bad = {**_spec(tmp_path, "a"), "threads": "1"}
    proc = subprocess.run(_batch([bad], tmp_path / "s.json"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "threads must be of type int" in proc.stderr
    assert not (tmp_path / "s.json").exists()


def test_the_agents_tracks_are_never_batched(tmp_path, project_root):
    """What is planned for the tracks the agents generate changes once they have (the Snakemake
    inside a batch job would plan other batches): their jobs run under their own rules."""
    (tmp_path / "verdicts").mkdir()
    for model in ("m7", "other"):
        folder = tmp_path / "solvers" / model / "maxcut-mqlib" / "1"
        folder.mkdir(parents=True)
        (folder / "solver.yaml").write_text("command: [true]\n")
    config = {
        "suite": "lite",
        "protocol": "offline",
        "results_dir": "res",
        "solvers_dir": str(tmp_path / "solvers"),
        "verdicts_dir": str(tmp_path / "verdicts"),
        "allow_missing": True,
        "models": [{"name": "m7", "attempts": ["1"]}, {"name": "other", "attempts": ["1"]}],
        "run": {"instances": {}, "task_files": {"maxcut-mqlib": "config/test/tasks/maxcut-mqlib.yaml"}},
        "agents": {
            "tcsexam": {"tracks": ["solver"]},
            "models": {"m7": {"provider": "openai-compatible", "model": "m7", "base_url": "http://h:8000/v1"}},
        },
    }
    members = Batches(Plan(config, project_root), {"enabled": True}).members()
    assert [m.key for m in members] == ["solver/other/maxcut-mqlib/1"]


def test_a_batch_too_long_for_one_command_line_is_refused_in_one_line(tmp_path, monkeypatch):
    plan = Plan(load_config(TINY, ROOT), ROOT)
    batches = Batches(plan, {"enabled": True, "target_min": 10_000, "timings": [str(_timings(tmp_path, plan, 1.0))]})
    (only,) = batches.batches
    assert len(batches.members_arg(_Named(only.name))) < batching.MAX_COMMAND_BYTES
    monkeypatch.setattr(batching, "MAX_COMMAND_BYTES", 1000)
    with pytest.raises(InputError, match=r"lower batch.max_members \(now 100\)"):
        batches.members_arg(_Named(only.name))


class _Named:
    def __init__(self, batch: str):
        self.batch = batch


# ---- batch.enabled: auto, true, false (batching.decide; startup.prepare) ----------------------------


def _never() -> bool:
    raise AssertionError("the executor was asked where the answer does not depend on it")


def test_enabled_true_or_false_is_as_given_and_auto_follows_the_executor():
    for given in (True, False):  # never the executor, never the environment
        assert batching.decide(given, local_exec=_never, environ={batching.ENV: str(int(not given))}) is given
        assert batching.decide(given, local_exec=_never, main_process=False, environ={}) is given
    # auto, main process: batched where the jobs go to a cluster, whatever a stale environment says
    assert batching.decide("auto", local_exec=False, environ={batching.ENV: "0"}) is True
    assert batching.decide("auto", local_exec=True, environ={batching.ENV: "1"}) is False
    assert batching.decide("auto", local_exec=lambda: False, environ={}) is True


def test_a_jobs_snakemake_takes_its_main_processs_decision_on_auto():
    # inside a job (not the main process): what the main process handed down, never its own executor
    for batched in (True, False):
        env: dict[str, str] = {}
        batching.hand_down(batched, env)
        assert batching.decide("auto", local_exec=_never, main_process=False, environ=env) is batched
    # a job started without that environment: its own executor (SLURM's jobstep executor: not local)
    assert batching.decide("auto", local_exec=False, main_process=False, environ={}) is True
    assert batching.decide("auto", local_exec=True, main_process=False, environ={batching.ENV: "?"}) is False


def test_an_enabled_value_not_auto_true_or_false_is_one_line():
    with pytest.raises(InputError, match=r"^config batch.enabled: 'sometimes' is not one of auto, true, false$"):
        batching.decide("sometimes", local_exec=True)


def test_the_schema_takes_auto_true_false_from_a_file_or_the_command_line(capsys):
    schema = ROOT / "workflow" / "schemas" / "config.schema.yaml"
    config = load_config(TINY, ROOT)
    assert with_defaults(config, load_config_schema(ROOT))["batch"]["enabled"] == "auto"  # the default
    # a file's YAML gives Booleans; `--config batch={enabled: true}` gives the string
    for given, read in ((True, True), (False, False), ("auto", "auto"), ("true", True), ("False", False)):
        c = {**config, "batch": {"enabled": given}}
        assert coerce_config(c, str(schema))["batch"]["enabled"] == read
    for wrong in ("sometimes", 1, "1"):
        with pytest.raises(SystemExit) as exc:
            coerce_config({**config, "batch": {"enabled": wrong}}, str(schema))
        assert exc.value.code == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tcsexam: error: config batch.enabled: ")
        assert "'auto', True, False" in err


def test_snakemakes_own_arguments_and_profiles_say_whether_jobs_run_locally(monkeypatch):
    monkeypatch.chdir(ROOT)  # the profiles' paths, as Snakemake's
    assert executor_is_local(["snakemake", "--cores", "2"]) is True
    assert executor_is_local(["snakemake", "-n", "--configfile", str(TINY)]) is True
    # the SLURM profile names its executor in no argument; a dry run plans what it would submit
    assert executor_is_local(["snakemake", "--profile", "workflow/profiles/slurm", "-n"]) is False
    assert executor_is_local(["snakemake", "--executor", "slurm", "--jobs", "2"]) is False
    # the Snakemake inside a SLURM job
    job = ["python", "--executor", "slurm-jobstep", "--mode", "remote", "--target-jobs", "run_batch:batch=b001-x"]
    assert executor_is_local(job) is False
    # not Snakemake's arguments (e.g. run through its API): the caller's default
    assert executor_is_local(["pytest", "--no-such-option"], default=False) is False


def test_prepare_decides_auto_into_the_plan_and_hands_it_down(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(batching.ENV, "stale")  # restored after the test; the main process overwrites it
    config = load_config(TINY, ROOT)
    # the profile holds no workflow config, which a --config on the command line would replace whole
    assert "config" not in yaml.safe_load((ROOT / "workflow/profiles/slurm/config.yaml").read_text())
    for argv, batched in (
        (["snakemake", "--lint", "--profile", "workflow/profiles/slurm"], True),
        (["snakemake", "--lint", "--profile", "workflow/profiles/slurm", "--config", "run={threads: 1}"], True),
        (["snakemake", "--lint", "--cores", "2"], False),
    ):
        plan = prepare(config, str(ROOT), argv=argv)
        assert plan.config["batch"]["enabled"] is batched and Batches(plan).enabled is batched
        assert os.environ[batching.ENV] == str(int(batched))
        assert config.get("batch", {}).get("enabled", "auto") == "auto"  # Snakemake's own config is left alone
    # a job of a batched run: batched, whatever its arguments (the jobstep's are not local anyway)
    job = prepare(config, str(ROOT), main_process=False, argv=["snakemake", "--cores", "1"])
    assert Batches(job).enabled is False  # the last main process above handed down "0"
    monkeypatch.setenv(batching.ENV, "1")
    assert Batches(prepare(config, str(ROOT), main_process=False, argv=["snakemake", "--cores", "1"])).enabled
    # true and false are the config's, on any executor
    forced = {**config, "batch": {"enabled": False}}
    assert (
        prepare(forced, str(ROOT), argv=["snakemake", "--lint", "--profile", "workflow/profiles/slurm"]).config[
            "batch"
        ]["enabled"]
        is False
    )
