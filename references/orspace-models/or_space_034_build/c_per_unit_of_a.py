"""Item 34: every good loaded; container weight between its minimum and maximum, a minimum of D in
each; at least one C per unit of A in each container; minimise the containers used."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _containers import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "all goods loaded, weight bounds, D minimum per container; at least one C per unit of A in each container"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, per_unit=True))
