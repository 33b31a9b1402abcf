"""Item 45: incremental tiers, continuous quantities."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _tiers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "incremental tiers, continuous quantities"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scheme="incremental", integer=False))
