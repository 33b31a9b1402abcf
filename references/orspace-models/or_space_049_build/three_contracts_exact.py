"""Item 49: any start month; each month covered exactly; at most three distinct (length, start) contracts."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _contracts import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "any start month; each month covered exactly; at most three distinct (length, start) contracts"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, starts="any", exact=True, distinct="length_start"))
