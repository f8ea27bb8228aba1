"""The scoreboard on waitress, one thread per open phone stream (``companion serve`` is
:mod:`companion.cli.serve`, which adds the camera loop).

``serve(app, host, port, threads)`` is the reusable part (the live camera loop calls it);
``start(app, host, port, threads)`` runs the same server in a background thread and returns a
handle that can stop it (tests, benchmarks).
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
    server = create_server(app, host=host, port=port, threads=threads,
                           channel_request_lookahead=1,  # lets a stream notice its phone has gone
                           connection_limit=max(threads * 2, 100), clear_untrusted_proxy_headers=True,
                           ident="companion")
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
