"""Item 49: every contract starts in month 1; each month covered at least; at most three distinct lengths."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _contracts import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "every contract starts in month 1; each month covered at least; at most three distinct lengths"
#: a probe: relaxes the stated "without shortage or excess" to covering at least; shows where 240000 comes from
EVIDENCE = False

if __name__ == "__main__":
    main(lambda workspace: build(workspace, starts="first", exact=False, distinct="lengths"))
