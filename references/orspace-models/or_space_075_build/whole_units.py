"""Item 75: A and B within process time, C sold up to its limit or disposed of; whole units of A and B."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _byproduct import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "A, B within process times; C sold up to the limit, the rest disposed of; whole units of A and B"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, whole=True))
