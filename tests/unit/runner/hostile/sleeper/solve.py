"""Sleeps far past the wall limit without writing anything."""

import time

time.sleep(120)
