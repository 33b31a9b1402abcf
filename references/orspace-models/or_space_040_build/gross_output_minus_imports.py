"""Item 40: GDP = gross output at world prices minus imported inputs; net output >= 0."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _economy import build  # noqa: E402

from tcsexam.orspace.refmodel import main  # noqa: E402

READING = "GDP = gross output at world prices minus imported inputs; net output >= 0"

if __name__ == "__main__":
    main(lambda workspace: build(workspace, gdp="gross"))
