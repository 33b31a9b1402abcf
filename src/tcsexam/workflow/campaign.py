"""The campaign part of the workflow's plan (`tcsexam.workflow.plan.Plan` inherits it): the online
Solver protocol's judged records and the adoption file.

- `protocol: online` with `online_records_dir: DIR`: each Solver attempt's rows come from
  `DIR/<model>/<task>/<attempt>/records.json` (rule `ingest_online`, `tcsexam attempts
  ingest-online`); no candidate runs. Offline with an `online_records_dir` is refused, as is
  online without one.
- `adoption: FILE` (`tcsexam.attempts.adoption`): the attempts it names are planned like the
  config's (their own jobs and rows), and the attempt table applies its decisions.
"""

from __future__ import annotations

import os
import shlex
from functools import cached_property
from pathlib import Path

from tcsexam.attempts.adoption import load_adoption
from tcsexam.attempts.online import PROVENANCE, check_online_file
from tcsexam.errors import InputError
from tcsexam.fileio import read_json
from tcsexam.scoring.vocabulary import Protocol
from tcsexam.suites import Track
from tcsexam.workflow.plan_base import PlanBase


class CampaignPlan(PlanBase):
    """Mixed into `Plan`; uses its root, config, models, suite, layout and task files."""

    # ---- campaign: the online protocol's judged records, the adoption file ----------------------

    @property
    def online(self) -> bool:
        """The online Solver protocol: Solver rows come from judged records, no candidate runs."""
        return self.protocol == Protocol.ONLINE

    def online_input(self, model: str, task: str, attempt: str) -> str:
        return f"{self.online_dir}/{model}/{task}/{attempt}/records.json"

    def online_inputs(self, wildcards) -> list[str]:
        """ingest_online's inputs: the judged records, provenance.json where it exists, the task
        file (its instances). Offline: a path no rule makes, so the `run` rule makes records.json."""
        if not self.online:
            return [f"{self.out}/.offline-protocol-has-no-online-input"]
        records = self.online_input(wildcards.model, wildcards.task, wildcards.attempt)
        provenance = os.path.join(os.path.dirname(records), "provenance.json")
        extra = [provenance] if (self.root / provenance).is_file() else []
        return [records, *extra, self.task_file(wildcards.task)]

    def online_provenance_arg(self, wildcards) -> str:
        records = self.online_input(wildcards.model, wildcards.task, wildcards.attempt)
        provenance = os.path.join(os.path.dirname(records), "provenance.json")
        return f"--provenance {shlex.quote(provenance)}" if (self.root / provenance).is_file() else ""

    def has_solver_input(self, model: str, task: str, attempt: str) -> bool:
        """A submission (offline) or judged records (online) for this Solver attempt."""
        if self.online:
            return (self.root / self.online_input(model, task, attempt)).is_file()
        return self.has_candidate(model, task, attempt)

    def solver_input_path(self, model: str, task: str, attempt: str) -> str:
        if self.online:
            return self.online_input(model, task, attempt)
        return f"{self.candidate(model, task, attempt)}/solver.yaml"

    @cached_property
    def adoption(self):
        """The adoption file's decisions ((model, item) -> attempt -> Decision), None without one."""
        if not self.adoption_file:
            return None

        path = self.root / self.adoption_file
        if not path.is_file():  # read by whatever plans first (construction jobs, check_campaign)
            raise InputError(f"config adoption: adoption file {self.adoption_file} not found")
        return load_adoption(path, self.suite, self.models)

    def item_attempts(self, model: str, item: str) -> list[str]:
        """The attempts of one model and item: the planned ones, then those the adoption file adds."""
        planned = self.models[model]
        named = (self.adoption or {}).get((model, item), {})
        return [*planned, *(a for a in named if a not in planned)]

    def table_args(self, wildcards=None) -> str:
        """`--adoption FILE --suite S --planned M=IDS ...` for `tcsexam attempts table`, or ''."""
        if not self.adoption_file:
            return ""
        planned = " ".join(shlex.quote(f"{m}={','.join(a)}") for m, a in self.models.items())
        return (
            f"--adoption {shlex.quote(self.adoption_file)} --suite {shlex.quote(self.config['suite'])} "
            f"--planned {planned}"
        )

    def table_inputs(self, wildcards=None) -> list[str]:
        """The adoption file, and every agents' generation (`agent_tracks`): asked for here all at
        once, so that they run side by side before the table's rows are planned."""
        return [*([self.adoption_file] if self.adoption_file else []), *self.agent_summaries()]

    def check_campaign(self) -> None:
        """The protocol's inputs and the adoption file, checked at DAG time (one line each):
        online needs `online_records_dir` (and offline must not name one: a harness run is never
        labelled online, judged records are never scored offline); every judged records file is
        valid, and so is the JSON of the provenance.json beside it; the adoption file's rows name
        known models, items and planned attempts."""
        if self.online and not self.online_dir:
            raise InputError(
                "config protocol: online takes the Solver rows from judged records: set "
                "online_records_dir: DIR holding DIR/<model>/<task>/<attempt>/records.json"
            )
        if not self.online and self.online_dir:
            raise InputError(
                f"config online_records_dir: {self.online_dir} is read only with protocol: online "
                "(this config's protocol is offline: its Solver rows come from the harness)"
            )
        self.adoption  # noqa: B018 (reads and checks the file: one line on a bad row)
        if self.online and self.online_dir and (self.root / self.online_dir).is_dir():
            for p in self.planned:
                if p.track == Track.SOLVER and self.has_solver_input(p.model, p.item, p.attempt):
                    rel = self.online_input(p.model, p.item, p.attempt)
                    path = rel if os.path.isfile(rel) else self.root / rel  # messages name it as configured
                    check_online_file(path, self.task(p.item))
                    provenance = Path(path).parent / PROVENANCE
                    if provenance.is_file():  # free-form, but JSON: ingest_online records it
                        read_json(provenance, "provenance file")
