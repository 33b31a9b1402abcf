"""Tries a TCP connection to the port in port.txt (a listener on the host's loopback), reports the
result on stderr, then answers correctly."""

import socket
import sys
from pathlib import Path

port = int(Path("port.txt").read_text())
try:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        print("NETWORK: connected", file=sys.stderr)
except OSError as exc:
    print(f"NETWORK: failed {type(exc).__name__}", file=sys.stderr)
n = int(open(sys.argv[1]).read().split()[0])
open(sys.argv[2], "w").write(" ".join(str(i % 2) for i in range(n)) + "\n")
