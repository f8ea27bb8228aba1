"""The scoreboard on waitress, one thread per open phone stream (``companion serve`` is
:mod:`companion.cli.serve`, which adds the camera loop).

``serve(app, host, port, threads)`` is the reusable part (the live camera loop calls it);
``start(app, host, port, threads)`` runs the same server in a background thread and returns a
handle that can stop it (tests, benchmarks).

Connections are guarded so that nobody on the Wi-Fi can shut the phones out (waitress alone
stopped accepting at its connection limit, and ~254 idle connections held it for minutes):

- **per address**, at most ``PER_ADDRESS`` open connections (the Pi's own loopback is not
  capped): a new one past the cap closes that address's longest-idle connection, or is itself
  closed when all of them are busy;
- **in all**, at most ``max_connections``: a new one past it closes the longest-idle connection of
  any address (a phone's browser opens another when it needs one), or is closed when none is idle.
  The server never stops accepting, so a phone's request never waits behind a full backlog;
- **time**: an idle connection is closed after ``IDLE_SECONDS``; a request must arrive whole,
  headers and body, within ``REQUEST_SECONDS`` of its first byte (a client dribbling bytes is cut);
- **bodies**: a body declared larger than ``MAX_BODY_READ`` is refused (413) from its headers,
  before a byte of it is read; waitress keeps what it reads in memory (``inbuf_overflow`` is
  above it), so nothing of a body ever reaches the disk. Bodies between the app's own limit
  (64 KiB) and this are read and answered with the API's JSON 413.

Waitress has no per-address limits of its own; they are :class:`Guarded`, mixed into the server
waitress builds (its ``handle_accept`` and ``maintenance`` hooks).
"""

from __future__ import annotations

import logging
import socket
import threading
from dataclasses import dataclass
from typing import Any

from flask import Flask

log = logging.getLogger(__name__)

# Streams hold their thread; waitress answers other requests with the rest, and at least
# RESERVED_THREADS (half the threads of a small pool) are never given to streams.
MIN_THREADS = 8
RESERVED_THREADS = 8
PER_ADDRESS = 16  # a phone's browser keeps up to 6 connections a host, plus a stream per open page
IDLE_SECONDS = 30  # an idle keep-alive connection is closed after this (waitress's default: 120)
REQUEST_SECONDS = 15  # a request, headers and body, must arrive within this of its first byte
MAX_BODY_READ = 256 * 1024  # larger declared bodies are refused before reading; below inbuf_overflow
INBUF_OVERFLOW = 1024 * 1024  # waitress spools a body to a temporary file only above this


def _loopback(address: str) -> bool:
    return address in ("127.0.0.1", "::1", "::ffff:127.0.0.1")


class Guarded:
    """Mixed into waitress's server: connection caps per address and in all, and a time limit
    on receiving a request. Runs on waitress's own I/O thread."""

    max_connections = 256
    per_address = PER_ADDRESS
    request_seconds = REQUEST_SECONDS
    refused = 0  # connections closed at accept: figures for the health page and the tests
    evicted = 0

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()  # type: ignore[attr-defined]
        except OSError:
            return
        if accepted is None:
            return
        conn, addr = accepted
        address = addr[0] if isinstance(addr, tuple) else str(addr)
        channels = list(self.active_channels.values())  # type: ignore[attr-defined]
        if not _loopback(address):
            mine = [c for c in channels if _address(c) == address]
            if len(mine) >= self.per_address and not self._evict(mine):
                self._refuse(conn)
                return
        if len(channels) >= self.max_connections and not self._evict(channels):
            self._refuse(conn)
            return
        try:
            self.set_socket_options(conn)  # type: ignore[attr-defined]
        except OSError:
            conn.close()
            return
        self.channel_class(self, conn, self.fix_addr(addr), self.adj, map=self._map)  # type: ignore[attr-defined]

    def _evict(self, channels: list[Any]) -> bool:
        """Close the longest-idle of ``channels`` (no request queued or running); False if all
        are busy."""
        idle = [c for c in channels if not c.requests and not c.total_outbufs_len and not c.will_close]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c.last_activity)
        oldest.handle_close()
        Guarded.evicted += 1
        return True

    def _refuse(self, conn: socket.socket) -> None:
        Guarded.refused += 1
        try:
            conn.close()
        except OSError:
            pass

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # type: ignore[misc]
        for channel in list(self.active_channels.values()):  # type: ignore[attr-defined]
            request = channel.request
            if request is None or channel.requests:
                channel._receiving = None
                continue
            seen = getattr(channel, "_receiving", None)
            if seen is None or seen[0] is not request:
                channel._receiving = (request, now)
            elif now - seen[1] > self.request_seconds:
                channel.will_close = True  # a request dribbled in too slowly: a slowloris


def _address(channel: Any) -> str:
    addr = getattr(channel, "addr", None)
    return addr[0] if isinstance(addr, tuple) else str(addr)


def _guard(server: Any, max_connections: int) -> None:
    from waitress.server import BaseWSGIServer

    servers = [server] if isinstance(server, BaseWSGIServer) else [
        s for s in getattr(server, "map", {}).values() if isinstance(s, BaseWSGIServer)]
    for one in servers:
        one.__class__ = type(f"Guarded{type(one).__name__}", (Guarded, type(one)), {})
        one.max_connections = max_connections


def lan_address() -> str | None:
    """The address phones on the same network reach this machine at (no packet is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def public_base(host: str, port: int) -> str:
    shown = host if host not in ("0.0.0.0", "::", "") else (lan_address() or "127.0.0.1")
    return f"http://{shown}:{port}/"


def make_server(app: Flask, host: str, port: int, threads: int) -> Any:
    """A waitress server, bound but not yet running (``port`` 0 picks a free one)."""
    from waitress import create_server

    threads = max(threads, MIN_THREADS)
    max_connections = max(threads * 2, 100)
    server = create_server(app, host=host, port=port, threads=threads,
                           channel_request_lookahead=1,  # lets a stream notice its phone has gone
                           # the guard keeps below max_connections: waitress's own limit, which
                           # stops accepting altogether, is never reached
                           connection_limit=max_connections + 16, clear_untrusted_proxy_headers=True,
                           channel_timeout=IDLE_SECONDS, cleanup_interval=2,
                           max_request_body_size=MAX_BODY_READ, inbuf_overflow=INBUF_OVERFLOW,
                           max_request_header_size=32 * 1024, asyncore_use_poll=True,  # no 1024-descriptor ceiling
                           ident="companion")
    _guard(server, max_connections)
    companion = app.extensions.get("companion")
    if companion is not None:
        companion.hub.max_streams = threads - min(RESERVED_THREADS, threads // 2)
        if companion.public_base is None:
            companion.public_base = public_base(host, server.effective_port)
    return server


def serve(app: Flask, host: str, port: int, threads: int) -> None:
    """Serve ``app`` until interrupted (blocking): prints where phones connect and the table
    PIN, and ends open streams on the way out. OSError if the address cannot be bound."""
    server = make_server(app, host, port, threads)
    companion = app.extensions.get("companion")
    if companion is not None:
        print(f"scoreboard: {companion.public_base}   controller: {companion.public_base}controller", flush=True)
        print(f"table PIN: {companion.guard.pin} ({companion.pin_source})   "
              f"data: {companion.config['data']['dir']}", flush=True)
        if companion.live is None:
            print("no camera configured: scores are entered from phones", flush=True)
    try:
        server.run()
    finally:
        if companion is not None:
            companion.close()


@dataclass
class Running:
    """A server on a background thread (tests and benchmarks)."""

    app: Flask
    server: Any
    thread: threading.Thread | None = None
    stopping: bool = False

    def _run(self) -> None:
        try:
            self.server.run()
        except (OSError, ValueError):  # select() on a socket stop() just closed
            if not self.stopping:
                raise

    @property
    def port(self) -> int:
        return int(self.server.effective_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.stopping = True
        companion = self.app.extensions.get("companion")
        if companion is not None:
            companion.close()  # ends every stream, freeing their threads
        self.server.task_dispatcher.shutdown(timeout=2)
        while self.server._map:
            for channel in list(self.server._map.values()):
                try:
                    channel.handle_close()
                except OSError:
                    pass
        if self.thread is not None:
            self.thread.join(timeout=5)


def start(app: Flask, host: str = "127.0.0.1", port: int = 0, threads: int = 32) -> Running:
    running = Running(app, make_server(app, host, port, threads))
    running.thread = threading.Thread(target=running._run, name="companion-web", daemon=True)
    running.thread.start()
    return running
