"""Starts 200 sleeping children (over the process limit, but bounded: safe for the light limiter)."""

import os
import time

for _ in range(200):
    if os.fork() == 0:
        time.sleep(120)
        os._exit(0)
time.sleep(120)
