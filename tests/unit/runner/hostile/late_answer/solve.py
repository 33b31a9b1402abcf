"""Waits past the limit and writes a correct answer when told to stop, then exits 0."""

import signal
import sys
import time

n = int(open(sys.argv[1]).read().split()[0])


def answer(*_):
    open(sys.argv[2], "w").write(" ".join(str(i % 2) for i in range(n)) + "\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, answer)
time.sleep(120)
