"""Leaves a double-forked, setsid'd grandchild running, then answers correctly and exits 0."""

import os
import sys
import time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 3)
        time.sleep(120)
    os._exit(0)
os.wait()
n = int(open(sys.argv[1]).read().split()[0])
open(sys.argv[2], "w").write(" ".join(str(i % 2) for i in range(n)) + "\n")
