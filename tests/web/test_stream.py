"""The live stream on a real waitress server on loopback: full state on connect, every change,
keep-alive comments, and a phone that leaves frees its thread."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.request

from tests.web.conftest import DICE_A, DICE_B, NEW_EXACT21, PIN


class Stream:
    """A minimal SSE reader over a raw socket."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        self.buf = b""
        head = self._until(b"\r\n\r\n")
        assert b" 200 " in head.split(b"\r\n")[0] and b"text/event-stream" in head

    def _until(self, sep: bytes) -> bytes:
        while sep not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf.split(sep, 1)
        return out

    def message(self) -> str:
        """The next SSE message (or comment) block, chunked framing stripped."""
        while True:
            block = self._until(b"\n\n").decode()
            lines = [ln for ln in block.split("\n") if ln and not _is_chunk_size(ln)]
            if lines:
                return "\n".join(lines)

    def state(self) -> dict:
        while True:
            block = self.message()
            for line in block.split("\n"):
                if line.startswith("data: "):
                    return json.loads(line[6:])

    def close(self) -> None:
        self.sock.close()


def _is_chunk_size(line: str) -> bool:
    line = line.strip("\r")
    return line == "" or all(c in "0123456789abcdefABCDEF" for c in line)


def send(port: int, path: str, body: dict) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"X-Table-Pin": PIN, "Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


def test_stream_sends_the_state_on_connect_then_every_change(server):
    send(server.port, "/api/games", NEW_EXACT21)
    a, b = Stream(server.port), Stream(server.port)
    first = a.state()
    assert first["game"] == "exact21" and first["seq"] == 1
    assert b.state()["seq"] == 1
    send(server.port, "/api/events", DICE_A)
    assert a.state()["seq"] == 2 and b.state()["seq"] == 2
    send(server.port, "/api/events", DICE_B)
    send(server.port, "/api/events", {"type": "throw", "side": "A", "cup": "yellow"})
    seen = a.state()
    while seen["seq"] < 4:  # a slow reader may skip states but always reaches the newest
        seen = a.state()
    assert seen["scores"]["A"] == 5
    a.close()
    b.close()


def test_stream_sends_keep_alive_comments(server):
    server.app.extensions["companion"].hub.keepalive = 0.3
    s = Stream(server.port)
    s.state()
    assert s.message().startswith(": keep-alive")
    s.close()


def test_a_phone_that_leaves_frees_its_stream(server):
    hub = server.app.extensions["companion"].hub
    s = Stream(server.port)
    s.state()
    assert hub.clients == 1
    s.close()
    deadline = time.monotonic() + 5
    while hub.clients and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hub.clients == 0


def test_many_streams_do_not_block_other_requests(server):
    streams = [Stream(server.port) for _ in range(12)]
    for s in streams:
        s.state()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", "/api/state")
    assert conn.getresponse().status == 200
    for s in streams:
        s.close()
