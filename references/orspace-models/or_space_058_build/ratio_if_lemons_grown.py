"""Item 58: oranges = 2 x lemons holds only when lemons are grown."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _farm import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "oranges = 2 x lemons holds only when lemons are grown"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, ratio_always=False))
