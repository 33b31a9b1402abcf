"""Item 56: sell from the start-of-month stock, buy for the next month paying from cash in hand,
end the quarter at the target stock; maximise profit; start stock plus the month's purchase within capacity."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _grain import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = (
    "sell from start stock, buy paid from cash, end stock target; start stock plus the month's purchase within capacity"
)

if __name__ == "__main__":
    main(lambda workspace: build(workspace, sell_first=False))
