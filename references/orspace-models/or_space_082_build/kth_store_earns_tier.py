"""Item 82: the k-th shop of a type earns the table's profit for k stores; rent = 20% of the profit."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _mall import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "the k-th shop of a type earns the table's profit for k stores; rent = 20% of the profit"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scheme="kth_store"))
