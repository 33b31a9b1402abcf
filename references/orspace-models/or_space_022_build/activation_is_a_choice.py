"""Item 22: activating a line is a choice; its cost and minimum batch apply only to active lines."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _lines import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "activating a line is a choice; its cost and minimum batch apply only to active lines"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, all_active=False))
