"""The program's `go`: the moment its limits start counting. The limiter notes it when it starts
the program, and so does a sandbox that times the run itself (docker, once its start call
returned). Whoever watches a run from the harness (`tcsexam.runner.solver.anytime`'s traces) listens for it
in the thread's context, so each run hears its own program's `go` only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_listener: ContextVar[Callable[[float], None] | None] = ContextVar("tcsexam_go_listener", default=None)


def note_go(t: float) -> None:
    """The program of this thread's run starts now (`t`: time.monotonic())."""
    listener = _listener.get()
    if listener is not None:
        listener(t)


@contextmanager
def listening(callback: Callable[[float], None]) -> Iterator[None]:
    """Within the block, this thread's `note_go(t)` calls `callback(t)`, after the listener of an
    enclosing block (each hears the go)."""
    outer = _listener.get()

    def both(t: float) -> None:
        if outer is not None:  # both is the listener only below an outer one
            outer(t)
        callback(t)

    token = _listener.set(callback if outer is None else both)
    try:
        yield
    finally:
        _listener.reset(token)
