"""Item 49: any start month; each month covered at least; at most three distinct (length, start) contracts."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _contracts import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "any start month; each month covered at least; at most three distinct (length, start) contracts"
#: a probe: relaxes the stated exact cover to at least; shows where 212500 comes from
EVIDENCE = False

if __name__ == "__main__":
    main(lambda workspace: build(workspace, starts="any", exact=False, distinct="length_start"))
