"""Item 11: the cost-weighted idle time of that plan (the last goal's value), whole units."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _goal import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the cost-weighted idle time of that plan (the last goal's value), whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=True, report="idle"))
