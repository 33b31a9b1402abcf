"""Item 7: the cost per km is paid per container carried."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _containers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the cost per km is paid per container carried"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, per="container"))
