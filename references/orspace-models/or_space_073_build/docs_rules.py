"""Item 73: Bob always, two or three children, the four rules the docs state (Diana needs Ella, not the converse); minimise cost."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _trip import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the four rules the docs state (Diana needs Ella, not the converse)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, ella_needs_diana=False))
