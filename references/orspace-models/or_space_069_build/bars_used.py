"""Item 69: the number of raw bars used."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _cutting import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the number of raw bars used"
#: a probe: the requirements minimise waste, not bars; kept to show that 53 (the other cleaning's answer) is the bar count of the least-waste plan
EVIDENCE = False

if __name__ == "__main__":
    main(lambda workspace: build(workspace, measure="bars"))
