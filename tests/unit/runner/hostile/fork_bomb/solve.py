"""Forks without bound (every process keeps forking; failed forks are retried)."""

import os
import time

while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.001)
