"""Item 15: a repair taking d stages after stage j is ready for stage j+d+1."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _tools import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "a repair taking d stages after stage j is ready for stage j+d+1; tools may wait clean or unrepaired for later stages"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, shift=1))
