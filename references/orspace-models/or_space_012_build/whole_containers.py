"""Item 12: a demand met by its own or any larger type; setup cost per type produced; whole containers."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _containers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "a demand met by its own or any larger type; setup cost per type produced; whole containers"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=True))
