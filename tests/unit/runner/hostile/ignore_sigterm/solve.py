"""Ignores SIGTERM and sleeps: only the harness's SIGKILL after the grace stops it."""

import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(0.05)
