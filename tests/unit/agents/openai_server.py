"""A real scripted OpenAI-compatible HTTP server for the agent tests (stdlib http.server in a thread
on 127.0.0.1): `POST /v1/chat/completions` answers from a script, every request is kept (path,
headers with lower-case names, JSON body) and counted.

A script entry is a chat completion (`completion(...)`: text, tool calls, usage) or an HTTP error
(`error(429)`, `error(500)`); entries are served in request order. A `route` function, when given,
picks the entry from the request body instead (for concurrent samples whose order is not fixed):
it returns an entry or None (then the ordered script is used). A request past the end of the
script gets HTTP 400 ("script exhausted"), which no client retries, so an unexpected request fails
its test instead of hanging.

Import it in a test with `sys.path.insert(0, str(Path(__file__).parent))` (like hostile_support).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Entry:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  #: seconds the server holds the request before answering


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    return {
        "id": call_id or f"call_{uuid.uuid4().hex[:12]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def completion(
    content: str | None = "",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    model: str = "scripted",
    finish_reason: str | None = None,
    delay: float = 0.0,
) -> Entry:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body = {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Entry(200, body, delay=delay)


def error(status: int, message: str = "scripted failure", retry_after: str | None = "0") -> Entry:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Entry(status, {"error": {"message": message, "type": "scripted", "code": str(status)}}, headers)


class ScriptedOpenAI:
    def __init__(self, script: list[Entry] | None = None, route: Callable[[dict], Entry | None] | None = None):
        self.script: list[Entry] = list(script or [])
        self.route = route
        self.requests: list[dict[str, Any]] = []
        self.max_in_flight = 0  #: the most requests the server held at once
        self._now_in_flight = 0
        self._next = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                self._send(Entry(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]}))

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                with server._in_flight():
                    entry = server._answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    if entry.delay:
                        time.sleep(entry.delay)
                self._send(entry)

            def _send(self, entry: Entry) -> None:
                data = json.dumps(entry.body).encode()
                try:
                    self.send_response(entry.status)
                    self.send_header("Content-Type", "application/json")
                    for k, v in entry.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @contextlib.contextmanager
    def _in_flight(self):
        with self._lock:
            self._now_in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._now_in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._now_in_flight -= 1

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Entry:
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "body": body})
            if not path.rstrip("/").endswith("/chat/completions"):
                return Entry(404, {"error": {"message": f"no such path {path}"}})
            if self.route is not None:
                routed = self.route(body)
                if routed is not None:
                    return routed
            if self._next >= len(self.script):
                return Entry(400, {"error": {"message": "script exhausted", "type": "scripted"}})
            entry = self.script[self._next]
            self._next += 1
            return entry

    @property
    def count(self) -> int:
        return len(self.requests)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> ScriptedOpenAI:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
