"""Item 89: one storage space 4A + B <= 16, whole kg."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _liquid import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "one storage space 4A + B <= 16, whole kg"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, storage="shared", integer=True))
