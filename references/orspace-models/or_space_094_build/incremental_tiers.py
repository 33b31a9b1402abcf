"""Item 94: blend crude A and B into gasoline I and II within the proportions and stocks, buy
crude A; maximise revenue minus purchase cost; incremental tiers (each tier's price for the tonnes within it)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _blend import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "blend within proportions and stocks; revenue minus purchase cost; incremental tiers (each tier's price for the tonnes within it)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, incremental=True))
