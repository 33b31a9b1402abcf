"""Item 82: with k shops of a type, each earns the table's profit for k stores; rent = 20% of the profit."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _mall import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "with k shops of a type, each earns the table's profit for k stores; rent = 20% of the profit"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scheme="each_store"))
