"""Item 89: storage limits only A (A <= 4 kg), continuous kg."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _liquid import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "storage limits only A (A <= 4 kg), continuous kg"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, storage="a_only", integer=False))
