"""Item 1: train the goal number of new workers within eight weeks (trainers and trainees do not
produce), regular or overtime skilled work, delayed delivery compensated per kg per week; minimise
wages plus compensation; every order delivered by the end of week 8."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _training import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "two-week training batches, overtime skilled workers, weekly compensation; every order delivered by the end of week 8"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, clear_by_week_8=True))
