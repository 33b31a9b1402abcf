"""Item 71: quadratic assignment of factories to locations; cost summed over every pair (i, j), the diagonal d_ii c_pp included."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _qap import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "quadratic assignment, cost summed over every pair (i, j), the diagonal d_ii c_pp included"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, same_factory=True))
