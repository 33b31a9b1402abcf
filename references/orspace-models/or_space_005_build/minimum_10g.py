"""Item 5 with a least portion of 10 g for each chosen food."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _diet import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = (
    "one protein, at least two vegetables, budget and exact total grams, max fibre; each chosen food at least 10 g"
)

if __name__ == "__main__":
    main(lambda workspace: build(workspace, minimum_g=10))
