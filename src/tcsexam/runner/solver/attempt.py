"""One Solver attempt as a batch: `RunContext`, what every run of the attempt shares (task,
candidate, sandbox, limits, record identity), and `execute_instance`, what a pool runs for each
instance name (`run_instance` in a scratch folder of its own; never raises). It satisfies the
pools' contract (`tcsexam.runner.engine.contract.BatchContext`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from tcsexam import HARNESS_VERSION
from tcsexam.containment import Limiter
from tcsexam.limits import DEFAULT_SEED, MiB
from tcsexam.records import InstanceRecord, Status
from tcsexam.runner.ownership.scratch import make_scratch, release_scratch
from tcsexam.runner.solver.execute import InstanceOptions, RecordIdentity, run_instance
from tcsexam.runner.solver.run_outputs import KEEP_MAX_MB

if TYPE_CHECKING:
    from tcsexam.runner.limiter import Limits
    from tcsexam.runner.sandboxes.base import Sandbox
    from tcsexam.runner.solver.candidate import Candidate
    from tcsexam.tasks import Task, TaskInstance


class IdentityFields(TypedDict):
    """What `RunContext.identity` gives: the record fields `execute.RecordIdentity` names."""

    attempt: str | None
    key: str | None
    candidate_hash: str | None
    sandbox_image: str | None


@dataclass
class RunContext:
    """What every execution of one attempt shares; sent once to each actor. It carries what a
    record names besides the run's outcome (keys, candidate hash, image), so the executor returns
    the complete record."""

    task: Task
    candidate: Candidate | None  #: built, when it has a build step
    sandbox: Sandbox  #: the chosen one, checked to work here (it travels as its own small state)
    limits: Limits
    limiter: Limiter = Limiter.AUTO  #: the limiter that enforces `limits` (a run option)
    seed: int = DEFAULT_SEED
    attempt: str | None = None
    #: instance name -> its record key (`digest.record_key`); None for an instance not named here
    keys: dict[str, str] = field(default_factory=dict)
    candidate_hash: str | None = None  #: sha256 of the candidate's files, the one in the keys
    sandbox_image: str | None = None  #: the container image id (docker), part of the keys
    scratch_root: str | None = None  #: parent of the per-instance scratch dirs (None: $TMPDIR)
    #: instance name -> sha256 of its file (the one in the record key): checked after every run
    instance_hashes: dict[str, str] = field(default_factory=dict)
    #: paths a sandbox hides from the candidate (the results tree, the project folder)
    hidden_paths: tuple[str, ...] = ()
    #: where each run's final certificate is kept (<attempt>/certificates; None: not kept)
    certificates_dir: str | None = None
    #: where each checked UNSAT proof is kept (<attempt>/proofs; None: not kept)
    proofs_dir: str | None = None
    keep_max_bytes: int = KEEP_MAX_MB * MiB  #: the largest certificate or proof kept
    _instances: dict[str, TaskInstance] = field(default_factory=dict, repr=False, compare=False)

    def instance(self, name: str) -> TaskInstance:
        if not self._instances:
            self._instances = {inst.name: inst for inst in self.task.instances}
        return self._instances[name]

    def identity(self, name: str) -> IdentityFields:
        """The fields every record of instance `name` in this attempt carries besides its task (its
        identity)."""
        return {
            "attempt": self.attempt,
            "key": self.keys.get(name),
            "candidate_hash": self.candidate_hash,
            "sandbox_image": self.sandbox_image,
        }

    def blank_record(self, name: str, status: Status, message: str = "", **fields: Any) -> InstanceRecord:
        """A record of `name` decided without running it (an infrastructure failure, a candidate
        that cannot start), with the attempt's identity fields."""
        return InstanceRecord(
            instance=name,
            status=status,
            message=message,
            sandbox=self.sandbox.name,
            harness_version=HARNESS_VERSION,
            task=self.task.id,
            **self.identity(name),
            **fields,
        )

    def execute(self, name: str) -> InstanceRecord:
        """What a pool runs for each name (never raises)."""
        return execute_instance(self, name)

    def run_one(self, name: str, scratch: str) -> InstanceRecord:
        """Run instance `name` with `scratch` as its scratch folder: `run_instance` under the
        attempt's sandbox, limits, seed and record identity. May raise (`execute_instance` turns
        that into a record)."""
        if self.candidate is None:  # a batch has pending runs only once its candidate is built
            raise RuntimeError(f"{name}: no candidate to run (it could not start or build)")
        return run_instance(
            self.task,
            self.instance(name),
            self.candidate,
            sandbox=self.sandbox,
            limits=self.limits,
            seed=self.seed,
            scratch_dir=scratch,
            # the task: run_instance takes it from the task
            identity=RecordIdentity(instance_sha256=self.instance_hashes.get(name), **self.identity(name)),
            options=InstanceOptions(
                limiter=self.limiter,
                hidden_paths=self.hidden_paths,
                certificates_dir=self.certificates_dir,
                proofs_dir=self.proofs_dir,
                keep_max_bytes=self.keep_max_bytes,
            ),
        )

    def infrastructure_record(self, name: str, message: str) -> InstanceRecord:
        """The record of a name whose run the harness lost."""
        return infrastructure_record(self, name, message)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_instances"] = {}
        return state


def infrastructure_record(ctx: RunContext, instance: str, message: str) -> InstanceRecord:
    return ctx.blank_record(instance, Status.INFRASTRUCTURE_ERROR, message)


def execute_instance(ctx: RunContext, name: str) -> InstanceRecord:
    """Run one instance under the task's limits and return its complete record. Never raises."""
    scratch = None
    try:
        scratch = make_scratch(ctx.scratch_root)
        return ctx.run_one(name, scratch)
    except Exception as exc:  # a harness failure, never the solver's
        msg = " ".join(f"harness error: {type(exc).__name__}: {exc}".split())
        return infrastructure_record(ctx, name, msg[:500])
    finally:
        if scratch is not None:
            release_scratch(scratch)
