"""`tcsexam view --serve PORT`: serve the site's folder on 127.0.0.1 (optional: the site works from
file:// as well) until interrupted (Ctrl-C, SIGINT or SIGTERM: whatever the process inherited for
them, e.g. SIGINT ignored by a shell that started it in the background)."""

from __future__ import annotations

import functools
import http.server
import signal
from pathlib import Path


def serve(folder: str | Path, port: int) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        host, real_port = server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host  # an AF_INET server's is a str
        print(f"serving {folder} at http://{host}:{real_port}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
