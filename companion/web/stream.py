"""Server-Sent Events: one stream per open page, fed by the table's subscribers.

The hub keeps only the latest state, serialised once per change, and a version number. Each
stream waits on one condition variable; when woken it sends the newest state it has not sent
yet. A slow phone therefore skips states it could not keep up with instead of piling them up
in memory (every state is complete, so the newest one is all a page needs).

A stream sends the full state on connect, then every change, and a keep-alive comment when
nothing happened for ``keepalive`` seconds (so proxies and phones keep the connection open and a
gone client is noticed). It ends when the client disconnects (waitress tells us) or the hub
closes.

Each stream holds one server thread for as long as it is open, so the hub admits only so many
(:meth:`Hub.admit`): ``max_streams`` in all (the server sets it to its threads minus a reserve,
so a state read or a tap always finds a thread) and ``per_client`` from one address (the Pi's
own screen and the benchmark's phones on loopback count only towards the total). A refused
stream is answered 503 with ``Retry-After``; the page tries again a few seconds later.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from companion.table import Table

KEEPALIVE_SECONDS = 15.0
PER_CLIENT = 8  # streams from one phone's address: a few tabs, not a thread pool's worth
POLL_SECONDS = 1.0  # how often a waiting stream checks that its client is still there


def encode_state(state: dict[str, Any]) -> str:
    return json.dumps(state, ensure_ascii=False, separators=(",", ":"))


class Hub:
    """Fan-out of the table's state to every open stream."""

    def __init__(self, table: Table, keepalive: float = KEEPALIVE_SECONDS):
        self.table = table
        self.keepalive = keepalive
        self._cond = threading.Condition()
        self._closed = False
        self._clients = 0
        self.max_streams: int | None = None  # no cap until a server says how many threads it has
        self.per_client = PER_CLIENT
        self._admitted: dict[str, int] = {}
        self._version = 0
        self._payload = encode_state(table.state())
        self._unsubscribe = table.subscribe(self._on_change)

    def _on_change(self, state: dict[str, Any]) -> None:
        payload = encode_state(state)  # once per change, not once per phone
        with self._cond:
            self._version += 1
            self._payload = payload
            self._cond.notify_all()

    @property
    def clients(self) -> int:
        return self._clients

    def admit(self, address: str, exempt: bool = False) -> str | None:
        """Take a stream slot for ``address`` (``exempt``: no per-address cap); None if taken,
        else why not. Every admitted stream is given back with :meth:`release`."""
        with self._cond:
            total = sum(self._admitted.values())
            mine = self._admitted.get(address, 0)
            if self.max_streams is not None and total >= self.max_streams:
                return f"the scoreboard already serves {total} live pages, its limit: try again shortly"
            if not exempt and mine >= self.per_client:
                return f"this device already has {mine} live pages open, the limit: close one"
            self._admitted[address] = mine + 1
            return None

    def release(self, address: str) -> None:
        with self._cond:
            left = self._admitted.get(address, 0) - 1
            if left > 0:
                self._admitted[address] = left
            else:
                self._admitted.pop(address, None)

    def latest(self) -> tuple[int, str]:
        with self._cond:
            return self._version, self._payload

    def close(self) -> None:
        """End every stream (server shutdown)."""
        self._unsubscribe()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def stream(self, disconnected: Callable[[], bool] | None = None) -> Iterator[str]:
        """The SSE text of one client: ``retry``, the state now, then every change."""
        gone = disconnected or (lambda: False)
        with self._cond:
            self._clients += 1
            sent, payload = self._version, self._payload
        try:
            yield f"retry: 2000\nevent: state\ndata: {payload}\n\n"
            last_write = time.monotonic()
            while True:
                with self._cond:
                    if self._version == sent and not self._closed:
                        self._cond.wait(POLL_SECONDS)
                    if self._closed:
                        return
                    version, payload = self._version, self._payload
                if gone():
                    return
                if version != sent:
                    sent = version
                    last_write = time.monotonic()
                    yield f"event: state\ndata: {payload}\n\n"
                elif time.monotonic() - last_write >= self.keepalive:
                    last_write = time.monotonic()
                    yield ": keep-alive\n\n"
        finally:
            with self._cond:
                self._clients -= 1
