"""Item 73: Bob always, two or three children, the docs' four rules plus the table's 'Ella must be taken with Diana'; minimise cost."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _trip import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the docs' four rules plus the table's 'Ella must be taken with Diana'"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, ella_needs_diana=True))
