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


def open_raw(port: int) -> tuple[socket.socket, bytes]:
    """A stream request; returns the socket and the status line the server answered."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head


def test_more_streams_than_threads_never_freeze_the_api(server):
    """The audit opened 135 streams on a 128-thread server and every state read and tap hung.
    Streams beyond the cap are answered 503 with Retry-After; reads and changes still answer."""
    send(server.port, "/api/games", NEW_EXACT21)
    hub = server.app.extensions["companion"].hub
    cap = hub.max_streams
    assert cap is not None and cap < 24  # the fixture's 24 threads, some kept for requests
    opened = [open_raw(server.port) for _ in range(cap + 6)]
    statuses = [head.split(b"\r\n")[0] for _, head in opened]
    assert sum(b" 200 " in s for s in statuses) == cap
    refused = [head for _, head in opened if b" 503 " in head.split(b"\r\n")[0]]
    assert len(refused) == 6 and all(b"Retry-After: 5" in h for h in refused)
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", "/api/state")
    assert conn.getresponse().status == 200
    assert send(server.port, "/api/events", DICE_A)["seq"] == 2
    assert time.monotonic() - t0 < 2
    for sock, _ in opened:
        sock.close()
    deadline = time.monotonic() + 5
    while True:  # the slots come back when the phones leave
        sock, head = open_raw(server.port)
        sock.close()
        if b" 200 " in head.split(b"\r\n")[0]:
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_one_device_cannot_take_every_stream(app):
    """Per address: a phone gets a few live pages; the rest of the table still gets theirs, and a
    closed page gives its slot back. (The Pi's own screen on loopback counts only in the total.)"""
    from companion.web.stream import PER_CLIENT

    hub = app.extensions["companion"].hub
    hub.max_streams = 100
    for _ in range(PER_CLIENT - 1):
        assert hub.admit("192.168.1.50") is None
    client = app.test_client()
    phone_a, phone_b = {"REMOTE_ADDR": "192.168.1.50"}, {"REMOTE_ADDR": "192.168.1.51"}
    last = client.get("/api/stream", environ_base=phone_a, buffered=False)
    assert last.status_code == 200
    refused = client.get("/api/stream", environ_base=phone_a, buffered=False)
    assert refused.status_code == 503 and refused.get_json()["code"] == "TOO_MANY_STREAMS"
    assert int(refused.headers["Retry-After"]) > 0
    last.close()
    again = client.get("/api/stream", environ_base=phone_a, buffered=False)
    assert again.status_code == 200
    again.close()
    other = client.get("/api/stream", environ_base=phone_b, buffered=False)
    assert other.status_code == 200
    other.close()
    for _ in range(3 * PER_CLIENT):
        assert hub.admit("127.0.0.1", exempt=True) is None
