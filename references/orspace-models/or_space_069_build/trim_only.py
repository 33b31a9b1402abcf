"""Item 69: waste = the patterns' offcuts only (surplus pieces not waste)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _cutting import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "waste = the patterns' offcuts only (surplus pieces not waste)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, measure="trim_only"))
