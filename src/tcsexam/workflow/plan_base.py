"""What the workflow plan's parts share: `PlanBase` declares the state and the methods that
`Plan` (plan.py) and its mixins (twins, campaign, reference builds, agent tracks) read from one
another, so that each mixin is type-checked against them rather than against nothing.

A mixin subclasses `PlanBase`; `Plan` subclasses every mixin and defines what is abstract here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcsexam.fileio import JsonObject
from tcsexam.layout import ResultsLayout
from tcsexam.scoring.vocabulary import Protocol
from tcsexam.suites import Suite
from tcsexam.tasks import Task


@dataclass(frozen=True)
class Planned:
    model: str
    track: str
    item: str
    attempt: str
    row: str  #: the row file the attempt table reads


class PlanBase(ABC):
    """The plan's state (set by `Plan.__init__`) and the methods its parts call on each other."""

    root: Path
    config: JsonObject  #: the validated workflow config (YAML: arbitrary JSON values)
    run: JsonObject  #: its `run:` mapping
    results: str
    solvers_dir: str
    verdicts_dir: str
    protocol: Protocol
    online_dir: str | None
    adoption_file: str | None
    reference: str
    models: dict[str, list[str]]  #: model -> its planned attempts

    # ---- Plan (plan.py) ------------------------------------------------------------------------

    @property
    @abstractmethod
    def suite(self) -> Suite: ...

    @property
    @abstractmethod
    def layout(self) -> ResultsLayout: ...

    @property
    @abstractmethod
    def out(self) -> str: ...

    @property
    @abstractmethod
    def solver_tasks(self) -> list[str]: ...

    @property
    @abstractmethod
    def planned(self) -> list[Planned]: ...

    @abstractmethod
    def task_file(self, task: str) -> str: ...

    @abstractmethod
    def task(self, task: str) -> Task: ...

    @abstractmethod
    def candidate(self, model: str, task: str, attempt: str) -> str: ...

    @abstractmethod
    def has_candidate(self, model: str, task: str, attempt: str) -> bool: ...

    @abstractmethod
    def candidate_files(self, candidate: str) -> list[str]: ...

    @abstractmethod
    def generated_inputs(self, task: str) -> list[str]: ...

    @abstractmethod
    def solver_runs(self) -> list[Planned]: ...

    @abstractmethod
    def relative_files(self, wildcards: Any = None) -> list[str]: ...

    # ---- CampaignPlan (campaign.py) ------------------------------------------------------------

    @property
    @abstractmethod
    def online(self) -> bool: ...

    # ---- AgentTracksPlan (agent_tracks.py) -----------------------------------------------------

    @abstractmethod
    def agent_summaries(self, wildcards: Any = None) -> list[str]: ...
