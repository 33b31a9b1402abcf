"""Item 45: incremental tiers (each tier's profit for the units inside it), whole units."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _tiers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "incremental tiers (each tier's profit for the units inside it), whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scheme="incremental", integer=True))
