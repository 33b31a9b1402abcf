"""Item 47: crops, cows, chickens and external work within land, funds, seasonal labour and the
animal housing; maximise net income; fractional cows and chickens (an LP)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _farm import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "crops, animals and external work within land, funds, seasonal labour, housing; fractional cows and chickens (an LP)"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, whole_animals=False))
