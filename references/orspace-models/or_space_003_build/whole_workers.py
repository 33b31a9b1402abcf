"""Item 3: six-month production, outsourcing and workforce plan with overtime, inventory and
backorders; revenue of all demand minus costs; whole workers hired and fired (units continuous)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _plan import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "aggregate plan, every unit demanded sold (no backorders left in June), all costs; whole workers hired and fired (units continuous)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, whole_workers=True))
