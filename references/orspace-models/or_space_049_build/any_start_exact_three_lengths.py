"""Item 49: contracts may start in any month; each month covered exactly; at most three distinct contract lengths."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _contracts import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "contracts may start in any month; each month covered exactly; at most three distinct contract lengths"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, starts="any", exact=True, distinct="lengths"))
