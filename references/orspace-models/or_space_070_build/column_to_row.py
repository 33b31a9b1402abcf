"""Item 70: distance from the column city to the row city."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _tour import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "distance from the column city to the row city"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, transpose=True))
