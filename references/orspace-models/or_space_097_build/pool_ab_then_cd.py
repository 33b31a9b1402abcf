"""Item 97: A and B are pooled first (Haverly's layout), C and D blended directly; one price 9.15; best fixed-sulphur LP over a 0.01 % grid."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _pooling import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "A and B are pooled first (Haverly's layout), C and D blended directly; one price 9.15; best fixed-sulphur LP over a 0.01 % grid"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, pooled=("A", "B")))
