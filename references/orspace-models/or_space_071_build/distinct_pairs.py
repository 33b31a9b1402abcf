"""Item 71: quadratic assignment of factories to locations; cost summed over pairs of two different factories only (i != j)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _qap import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "quadratic assignment, cost summed over pairs of two different factories only (i != j)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, same_factory=False))
