"""Writes something that is not a certificate."""

import sys

open(sys.argv[2], "wb").write(b"\x00\xffnot a partition at all\n")
