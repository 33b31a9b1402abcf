"""Item 6: quarterly production within hours, late delivery compensated, stock charged per quarter,
the required end stock; the required end-of-year stock charged a quarter's inventory cost."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _schedule import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "backlog compensation and holding cost per quarter; the required end-of-year stock charged a quarter's inventory cost"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, charge_final_stock=True))
