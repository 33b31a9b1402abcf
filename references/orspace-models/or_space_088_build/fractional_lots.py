"""Item 88: fractional lots, as the workspace allows."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _fertiliser import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "fractional lots, as the workspace allows"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=False))
