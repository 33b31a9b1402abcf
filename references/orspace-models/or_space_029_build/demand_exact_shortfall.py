"""Item 29: demands met, then preferred specialty, then preferred city (pre-emptive goals); each demand met exactly;
the answer is priority 3's shortfall below its target."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _goals import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = (
    "pre-emptive goals, whole people; each demand met exactly; the answer is priority 3's shortfall below its target"
)

if __name__ == "__main__":
    main(lambda workspace: build(workspace, report="shortfall", exact=True))
