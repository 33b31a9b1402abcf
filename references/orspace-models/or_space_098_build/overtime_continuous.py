"""Item 98: overtime allowed at the overtime rate, continuous quantities."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _overtime import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "overtime allowed at the overtime rate, continuous quantities"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, overtime=True, integer=False))
