"""Item 23: a fixed cost is paid only for equipment in use."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _plan import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "a fixed cost is paid only for equipment in use; whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, fixed_always=False))
