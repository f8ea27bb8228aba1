"""What the tests that start a real server on loopback share."""

from __future__ import annotations

import json
import socket
import urllib.request


def free_port() -> int:
    """A TCP port nobody listens on now (the server under test binds it next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 10) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)
