"""Item 49: every contract starts in month 1; each month covered exactly."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _contracts import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "every contract starts in month 1; each month covered exactly"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, starts="first", exact=True, distinct="lengths"))
