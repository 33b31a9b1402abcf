"""Item 46: one student on duty through each weekday's opening hours, a shift a day within the
student's availability, shift and per-day limits, weekly minimum hours; minimise wages; every student at the graduate minimum (the workspace names no student's level)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _duty import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "one on duty all opening hours, a shift per day, 2 shifts a week, 3 students a day; every student at the graduate minimum (the workspace names no student's level)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, minimum="min_grad_hours"))
