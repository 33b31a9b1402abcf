"""Item 11: the profit of the goal-programming plan, continuous quantities."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _goal import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the profit of the goal-programming plan, continuous quantities"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=False, report="profit"))
