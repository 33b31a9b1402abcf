"""Item 27: products routed through stages A and B on the machines able to process them,
machine hours within capacity, machine costs by hours used; maximise profit; whole units."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _plan import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "two-stage routing on capable machines, machine cost per hour used; whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, integer=True))
