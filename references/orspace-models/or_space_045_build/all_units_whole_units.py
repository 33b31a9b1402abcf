"""Item 45: all-units tiers (the tier of the whole volume prices every unit; a boundary volume is in the lower tier), whole units."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _tiers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "all-units tiers (the tier of the whole volume prices every unit; a boundary volume is in the lower tier), whole units"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, scheme="all_units", integer=True))
