"""The batch engine (`tcsexam.runner.engine.batch`): reuse by key, each record written as it arrives,
retries through the pool, the one watchdog formula, and the contexts of every track satisfying
its `BatchContext` Protocol. The real runs through it are in test_run_cli.py (Solver),
tests/unit/orspace/test_execute*.py (OR-Space) and tests/unit/constructions (construction.txt)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tcsexam.errors import UsageError
from tcsexam.records import InstanceRecord
from tcsexam.records.store import RecordStore
from tcsexam.runner.engine import batch as engine
from tcsexam.runner.engine.batch import BatchHooks, KeyedBatch, PoolOptions, run_batch, watchdog_s
from tcsexam.runner.engine.contract import BatchContext, BatchRecord
from tcsexam.runner.sandboxes import get_sandbox


@dataclass
class _Context:
    """A context whose runs answer from `script` (a list of statuses per name, one per try)."""

    script: dict[str, list[str]]
    calls: list[str] = field(default_factory=list)
    limits: None = None
    scratch_root: str | None = None

    def blank_record(self, name: str, status: str, message: str = "", **fields) -> InstanceRecord:
        return InstanceRecord(instance=name, status=status, message=message, key=f"k-{name}", **fields)

    def infrastructure_record(self, name: str, message: str) -> InstanceRecord:
        return self.blank_record(name, "infrastructure_error", message)

    def execute(self, name: str) -> InstanceRecord:
        self.calls.append(name)
        status = self.script[name].pop(0)
        return self.blank_record(name, status, "lost" if status == "infrastructure_error" else "")

    def __getstate__(self):
        return dict(self.__dict__)


def _open(tmp_path: Path, names) -> KeyedBatch:
    return KeyedBatch.open(RecordStore(tmp_path / "records"), {n: f"k-{n}" for n in names})


def test_the_watchdog_is_three_walls_and_two_minutes():
    assert watchdog_s(10) == 150.0
    assert watchdog_s(0.5) == 121.5


def test_a_batch_writes_each_record_reuses_it_and_retries_infrastructure_failures(tmp_path):
    ctx = _Context({"a": ["ok"], "b": ["infrastructure_error", "timeout"], "c": ["infrastructure_error"] * 3})
    batch = _open(tmp_path, ["a", "b", "c"])
    assert batch.pending == ["a", "b", "c"] and batch.reused == 0
    seen = []
    batch.on_write = lambda name, record: seen.append((name, record.status))
    report = run_batch(ctx, batch, PoolOptions(use_ray=False, max_retries=1), BatchHooks(label="t"))
    assert report.workers == 1 and report.ray_startup_s is None
    assert sorted(seen) == [("a", "ok"), ("b", "timeout"), ("c", "infrastructure_error")]
    assert [r.instance for r in batch.ordered()] == ["a", "b", "c"]  # key order, not completion order
    assert batch.results["c"].message == "lost (after 2 tries)"
    assert (tmp_path / "records").is_dir() and batch.executed == 3

    again = _open(tmp_path, ["a", "b", "c"])  # a rerun: the infrastructure_error runs again, nothing else
    assert again.pending == ["c"] and again.reused == 2
    rerun = _Context({"c": ["ok"]})
    run_batch(rerun, again, PoolOptions(use_ray=False), BatchHooks(label="t"))
    assert rerun.calls == ["c"] and again.results["c"].status == "ok"

    changed = KeyedBatch.open(RecordStore(tmp_path / "records"), {"a": "other-key", "b": "k-b"})
    assert changed.pending == ["a"] and [name for name, _, _ in changed.set_aside] == ["a"]


def test_settle_records_every_pending_name_without_running_it(tmp_path):
    ctx = _Context({})
    batch = _open(tmp_path, ["a", "b"])
    batch.settle(lambda name: ctx.blank_record(name, "invalid", "cannot start"))
    assert batch.pending == [] and ctx.calls == []
    assert run_batch(ctx, batch, PoolOptions(use_ray=False), BatchHooks(label="t")).workers is None  # no pool
    assert {r.status for r in batch.ordered()} == {"invalid"}


@pytest.mark.parametrize(
    "options, message",
    [
        (PoolOptions(workers=0), "at least 1"),
        (PoolOptions(max_retries=-1), "0 or more"),
        (PoolOptions(use_ray=False, workers=2), "--workers 1"),
        (PoolOptions(use_ray=False, ray_head="/x"), "exclude each other"),
        (PoolOptions(ray_address="a:1", ray_head="/x"), "exclude each other"),
    ],
)
def test_pool_options_that_cannot_go_together_are_usage_errors(options, message):
    with pytest.raises(UsageError, match=message):
        options.check()


def test_every_tracks_context_satisfies_the_protocol(tmp_path):
    from tcsexam.orspace.execute import ExecuteSettings, WorkspaceContext
    from tcsexam.runner.construction import ObjectCheck
    from tcsexam.runner.solver.attempt import RunContext

    run = RunContext(task=None, candidate=None, sandbox=get_sandbox("local"), limits=None)
    workspace = WorkspaceContext(ExecuteSettings(), {}, {}, {}, get_sandbox("local"))
    check = ObjectCheck(task=None, folder=tmp_path, key="k", candidate_hash="h")
    for ctx in (run, workspace, check, _Context({})):
        assert isinstance(ctx, BatchContext), type(ctx)
    assert isinstance(InstanceRecord(instance="a", status="ok"), BatchRecord)


def test_both_entry_points_run_through_the_one_engine():
    """`tcsexam run` (orchestrate) and `orspace execute` reach the pools only through batch.run_batch."""
    import tcsexam.orspace.execute as orspace_execute
    import tcsexam.runner.solver.orchestrate as orchestrate

    assert orchestrate.run_batch is engine.run_batch
    assert orspace_execute.run_batch is engine.run_batch
    for module in (orchestrate, orspace_execute):
        text = Path(module.__file__).read_text()
        assert "RayPool" not in text and "InProcessPool" not in text and "start_ray" not in text
