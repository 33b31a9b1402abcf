"""Proof task files: `config/tasks/<task>.yaml` with `track: theorem` or `track: open_conjecture`.

```yaml
id: theorem-sum-odds-square
track: theorem                    # or open_conjecture
checker: coq
description: the sum of the first n odd numbers is n^2
statement_file: proofs/theorem-sum-odds-square.v   # relative to this file's folder
statement: statement              # a Definition of the .v file, of type Prop: what must be proved
theorem: sum_odds_square          # the name the submission proves it under
coq:
  version: "8.16"                 # the Coq release the statement is written for (prefix of coqc's version)
  libraries: [Coq]                # logical roots a proof may Require (default: the standard library)
  axioms: []                      # axioms a complete proof may use, fully qualified names
limits: {wall_s: 20, mem_mb: 2048, output_mb: 16}   # per checker step (compile, check, coqchk)
```

An open-conjecture task also names the negation and the name a refutation uses:
`negation: negation` (a Definition of the same file, usually `~ statement`) and
`refutation: refutation`. A complete proof of either resolves the conjecture.

The schema is task.schema.yaml (its `then:` branch for these tracks); what a schema cannot say is
checked here: the statement file exists inside the task's folder, names are Coq identifiers.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tcsexam.errors import InputError
from tcsexam.fileio import read_yaml
from tcsexam.limits import Limits
from tcsexam.paths import config_file
from tcsexam.schemas import check
from tcsexam.suites import BINARY_TRACKS, Track
from tcsexam.tasks import parse_limits

PROOF_TRACKS = BINARY_TRACKS
CHECKERS = ("coq",)
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_']*$")
#: a statement file larger than this is refused (it is the task author's, but still read whole)
STATEMENT_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class ProofTask:
    id: str
    track: str
    checker: str
    statement_file: Path
    statement: str
    theorem: str
    limits: Limits
    coq_version: str
    libraries: tuple[str, ...]
    axioms: tuple[str, ...]
    negation: str | None = None
    refutation: str | None = None
    source: Path | None = None
    description: str = ""

    @property
    def statement_bytes(self) -> bytes:
        return self.statement_file.read_bytes()

    @property
    def statement_sha256(self) -> str:
        return hashlib.sha256(self.statement_bytes).hexdigest()

    def sides(self) -> list[tuple[str, str, str]]:
        """(resolution, statement definition, submission's name): what a complete proof may be."""
        out = [("proof", self.statement, self.theorem)]
        if self.negation is not None and self.refutation is not None:
            out.append(("refutation", self.negation, self.refutation))
        return out


def is_proof_task_data(data) -> bool:
    return isinstance(data, dict) and data.get("track") in PROOF_TRACKS


def load_proof_task(task: str | Path) -> ProofTask:
    """Read a proof task file (one line naming the file and field on bad input)."""
    path = config_file(task, "tasks")
    data = read_yaml(path, "task file")
    check(data, "task", path)
    if not is_proof_task_data(data):
        raise InputError(f"{path}: task {data.get('id')!r} is not a proof task (track {data.get('track')!r})")
    for key in ("statement", "theorem", "negation", "refutation"):
        value = data.get(key)
        if value is not None and not IDENT.match(str(value)):
            raise InputError(f"{path}: {key}: {value!r} is not a Coq identifier")
    if data["track"] == Track.OPEN_CONJECTURE and not (data.get("negation") and data.get("refutation")):
        raise InputError(
            f"{path}: an open_conjecture task names its negation and refutation (the name a refutation uses)"
        )
    if data["track"] == Track.THEOREM and (data.get("negation") or data.get("refutation")):
        raise InputError(f"{path}: a theorem task has no negation/refutation (that is an open_conjecture task)")
    base = Path(path).resolve().parent
    statement_file = Path(os.path.normpath(base / str(data["statement_file"])))
    if not str(statement_file).startswith(str(base) + os.sep):
        raise InputError(f"{path}: statement_file {data['statement_file']!r} is outside the task's folder {base}")
    if not statement_file.is_file():
        raise InputError(f"{path}: statement_file {data['statement_file']!r} not found ({statement_file})")
    if statement_file.suffix != ".v":
        raise InputError(f"{path}: statement_file {data['statement_file']!r} is not a Coq .v file")
    if statement_file.stat().st_size > STATEMENT_MAX_BYTES:
        raise InputError(f"{path}: statement_file {data['statement_file']!r} is over {STATEMENT_MAX_BYTES} bytes")
    coq = data.get("coq") or {}
    return ProofTask(
        id=data["id"],
        track=data["track"],
        checker=data["checker"],
        statement_file=statement_file,
        statement=data["statement"],
        theorem=data["theorem"],
        limits=parse_limits(data["limits"]),
        coq_version=str(coq.get("version", "")),
        libraries=tuple(coq.get("libraries", ["Coq"])),
        axioms=tuple(coq.get("axioms", [])),
        negation=data.get("negation"),
        refutation=data.get("refutation"),
        source=Path(path),
        description=data.get("description", ""),
    )
