"""Item 97: A, B and D are pooled first, C blended directly; one price 9.15 for both products; best fixed-sulphur LP over a 0.01 % grid."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _pooling import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "A, B and D are pooled first, C blended directly; one price 9.15 for both products; best fixed-sulphur LP over a 0.01 % grid"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, pooled=("A", "B", "D")))
