"""Item 98: no overtime, whole units."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _overtime import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "no overtime, whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, overtime=False, integer=True))
