"""Item 7: the cost per km is paid per truck; whole trucks of at most two containers."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _containers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the cost per km is paid per truck; whole trucks of at most two containers"
#: a probe: the data say the cost is per container per km; kept to show what the truck reading gives
EVIDENCE = False

if __name__ == "__main__":
    main(lambda workspace: build(workspace, per="truck"))
