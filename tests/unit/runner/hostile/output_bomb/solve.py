"""Prints a gigabyte to stdout."""

import sys

chunk = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(chunk)
