"""Item 66: continuous quantities within labour, inspection and demand."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _golf import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "continuous quantities within labour, inspection and demand"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=False))
