"""TCSExam suites: the planned task ids per track, `config/suites/<suite>.yaml`.

```yaml
id: lite
tracks:
  theorem: [theorem-sum-odds-square, ...]
  solver: [maxcut-mqlib, sat-satlib, tsp-tsplib, coloring-dimacs, maxsat-wcnf]
  construction: [...]
  open_conjecture: [...]
```

All four tracks are required and non-empty; a task id appears once in the whole suite.
Track names are read case-insensitively with `-` or a space standing for `_`
(`Open-Conjecture` -> `open_conjecture`); no other aliases.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import read_yaml
from tcsexam.paths import config_file
from tcsexam.schemas import check


class Track(StrEnum):
    """The four tracks, in the Index's order: the one definition (workflow, rows, scoring, plots)."""

    THEOREM = "theorem"
    SOLVER = "solver"
    CONSTRUCTION = "construction"
    OPEN_CONJECTURE = "open_conjecture"


TRACKS = tuple(t.value for t in Track)
#: the tracks judged from checker verdicts (every track but the Solver track, which runs candidates)
VERDICT_TRACKS = tuple(t for t in TRACKS if t != Track.SOLVER)
#: a regular expression matching exactly a track name (the workflow's `{track}` wildcard)
TRACK_PATTERN = "|".join(TRACKS)
#: the tracks whose attempt scores are 0 or 1 (a proof verdict)
BINARY_TRACKS = (Track.THEOREM.value, Track.OPEN_CONJECTURE.value)
WEIGHTS = dict(zip(TRACKS, (30, 30, 30, 10), strict=True))


def normalize_track(name: str) -> str | None:
    """The canonical track for a spelling, or None when it is no track."""
    canon = name.strip().lower().replace("-", "_").replace(" ", "_")
    return canon if canon in TRACKS else None


@dataclass(frozen=True)
class Suite:
    id: str
    tracks: dict[str, tuple[str, ...]]
    source: str = "<suite>"

    @cached_property
    def track_of(self) -> dict[str, str]:
        return {item: track for track, items in self.tracks.items() for item in items}

    @cached_property
    def items(self) -> list[str]:
        return [item for track in TRACKS for item in self.tracks[track]]


def load_suite(suite: str | Path) -> Suite:
    path = config_file(suite, "suites")
    data = read_yaml(path, "suite file")
    check(data, "suite", path)
    suite_id, raw = data["id"], data["tracks"]
    tracks: dict[str, tuple[str, ...]] = {}
    seen: dict[str, str] = {}
    for key, items in raw.items():
        track = normalize_track(str(key))
        if track is None:
            raise InputError(f"{path}: unknown track {key!r} (tracks: {', '.join(TRACKS)})")
        if track in tracks:
            raise InputError(f"{path}: track {track!r} is given twice")
        for item in items:
            if item in seen:
                raise InputError(f"{path}: task {item!r} is listed twice (tracks {seen[item]} and {track})")
            seen[item] = track
        tracks[track] = tuple(items)
    for track in TRACKS:
        if track not in tracks:
            raise InputError(f"{path}: track {track!r} is missing")
    return Suite(suite_id, {t: tracks[t] for t in TRACKS}, str(path))
