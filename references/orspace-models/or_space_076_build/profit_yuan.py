"""Item 76: profit in yuan."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _timber import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "profit in yuan"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scale=1e4))
