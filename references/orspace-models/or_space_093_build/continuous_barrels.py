"""Item 93: milk to A1 and A2 within supply, labour and Type A capacity; maximise profit; fractional barrels (an LP)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _dairy import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "milk, labour and Type A capacity; fractional barrels (an LP)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, whole_barrels=False))
