"""Item 22: all three lines run, so all activation costs are paid."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _lines import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "all three lines run, so all activation costs are paid"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, all_active=True))
