"""Demo item 101: whole batches."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _bakery import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "whole batches"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=True))
