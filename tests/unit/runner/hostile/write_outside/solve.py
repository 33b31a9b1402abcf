"""Tries to write outside its scratch directory: its own folder, the instance, and the folder named
in target.txt; reports each attempt on stderr, then answers correctly."""

import sys
from pathlib import Path

targets = [Path("planted.txt"), Path(sys.argv[1]), Path(Path("target.txt").read_text().strip()) / "planted.txt"]
for target in targets:
    try:
        with open(target, "a") as fh:
            fh.write("planted\n")
        print(f"WRITE: ok {target}", file=sys.stderr)
    except OSError as exc:
        print(f"WRITE: failed {target} {type(exc).__name__}", file=sys.stderr)
n = int(open(sys.argv[1]).read().split()[0])
open(sys.argv[2], "w").write(" ".join(str(i % 2) for i in range(n)) + "\n")
