"""Item 57: waste = roll area used minus the ordered area (surplus strips are waste)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _rolls import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "waste = roll area used minus the ordered area (surplus strips are waste)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, waste="with_surplus"))
