"""Fixtures of the OR-Space tests: the real release (skipped when absent), the bundled demo, and a
scripted OpenAI-compatible HTTP server on 127.0.0.1 for the judge client."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def release(shared_data) -> Path:
    root = shared_data / "orspace"
    if not (root / "evaluation").is_dir():
        pytest.skip(f"OR-Space release not found at {root}")
    return root


@pytest.fixture(scope="session")
def demo(project_root) -> dict[str, Path]:
    return {"workspaces": project_root / "solvers" / "orspace-demo", "release": project_root / "references" / "orspace"}


def chat_body(content: str) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        }
    ).encode()


class ScriptedServer:
    """Answers POST /v1/chat/completions with the scripted responses in order (the last repeats).
    Each response: (status, headers, body bytes, delay seconds)."""

    def __init__(self):
        self.script: list[tuple[int, dict, bytes, float]] = []
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length))}
                )
                index = min(len(server.requests) - 1, len(server.script) - 1)
                status, headers, body, delay = server.script[index]
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    chat = staticmethod(chat_body)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def judge_server():
    server = ScriptedServer()
    yield server
    server.close()
