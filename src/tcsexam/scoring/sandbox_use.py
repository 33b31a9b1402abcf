"""Which sandboxes the Solver records of each model ran under, for index.json.

Every instance record names its sandbox. `sandbox_use(solver_dir, models)` reads
`<solver_dir>/<model>/<task>/<attempt>/records.json` and returns, per model, the sorted sandboxes
of its records, plus one warning per model whose candidates ran (even partly) under ``local``:
there the candidate is contained by the limits only (it could read the network and anything the
harness's user can read; the inputs are checked after each run, see docs/runner.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from tcsexam.fileio import JsonObject

UNCONTAINED = "local"


def sandbox_use(solver_dir: str | Path | None, models: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """({model: sorted sandbox names}, [warnings]) over the Solver records under `solver_dir`."""
    used: dict[str, dict[str, int]] = {m: {} for m in models}
    root = Path(solver_dir) if solver_dir else None
    for model in models:
        if root is None or not (root / model).is_dir():
            continue
        for path in sorted((root / model).glob("*/*/records.json")):
            try:
                records = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            for record in records if isinstance(records, list) else []:
                box = record.get("sandbox") if isinstance(record, dict) else None
                if isinstance(box, str) and box:
                    used[model][box] = used[model].get(box, 0) + 1
    warnings = []
    for model, counts in used.items():
        if counts.get(UNCONTAINED):
            warnings.append(
                f"model {model}: {counts[UNCONTAINED]} Solver record(s) ran under sandbox local (limits only, "
                "no isolation: network and file system were open to the candidate); use --sandbox auto, bwrap, "
                "docker or apptainer for untrusted candidates"
            )
    return {m: sorted(c) for m, c in used.items()}, warnings


def add_sandbox_use(result: JsonObject, solver_dir: str | Path | None) -> None:
    """Set `models.<m>.solver_sandboxes` and the top-level `warnings` of an index.json result."""
    per_model, warnings = sandbox_use(solver_dir, list(result.get("models", {})))
    for model, boxes in per_model.items():
        result["models"][model]["solver_sandboxes"] = boxes
    result["warnings"] = list(result.get("warnings", [])) + warnings
