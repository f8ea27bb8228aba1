"""Connections and bodies a guest on the Wi-Fi can throw at the table, against a real waitress
server on loopback (other loopback addresses, 127.0.0.2 and up, stand for other devices): the
phones keep being served."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time

import pytest

from companion.web.server import start
from tests.web.conftest import make_app


def phone_get(url: str, path: str = "/api/state", source: str = "127.0.0.3") -> tuple[float, dict]:
    """A phone's request from its own address: the seconds it took and the answer."""
    host, port = url.removeprefix("http://").split(":")
    t = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=5, source_address=(source, 0)) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:80]
    return time.monotonic() - t, json.loads(body)


@pytest.fixture
def served(tmp_path):
    app = make_app(tmp_path)
    running = start(app, "127.0.0.1", 0, threads=32)
    yield running
    running.stop()
    app.extensions["companion"].table.close()


def idle_connections(port: int, sources: list[str], per_source: int) -> list[socket.socket]:
    opened = []
    for source in sources:
        for _ in range(per_source):
            s = socket.socket()
            s.bind((source, 0))
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                s.connect(("127.0.0.1", port))
            opened.append(s)
    return opened


def test_1000_idle_connections_from_one_address_do_not_shut_out_a_phone(served):
    """About 254 idle connections stopped waitress from accepting anyone, for ~130 s a batch."""
    sockets = idle_connections(served.port, ["127.0.0.2"], 1000)
    try:
        time.sleep(1.0)  # the server has taken what it will take of them
        took, state = phone_get(served.url)
        print(f"phone's /api/state behind 1000 idle connections: {took * 1000:.0f} ms")
        assert took < 1.0 and state["game"] is None
        mine = [c for c in served.server.active_channels.values() if c.addr[0] == "127.0.0.2"]
        assert len(mine) <= served.server.per_address
    finally:
        for s in sockets:
            s.close()


def test_400_devices_holding_idle_connections_do_not_shut_out_a_phone(served):
    sources = [f"127.0.{1 + n // 250}.{2 + n % 250}" for n in range(400)]
    sockets = idle_connections(served.port, sources, 1)
    try:
        time.sleep(1.0)
        took, _ = phone_get(served.url)
        print(f"phone's /api/state behind 400 idle devices: {took * 1000:.0f} ms")
        assert took < 1.0
        assert len(served.server.active_channels) <= served.server.max_connections
    finally:
        for s in sockets:
            s.close()


def test_a_request_dribbled_in_byte_by_byte_is_cut(served):
    served.server.request_seconds = 1.0
    s = socket.create_connection(("127.0.0.1", served.port), source_address=("127.0.0.2", 0))
    closed_after = None
    t = time.monotonic()
    try:
        for byte in b"GET /api/state HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
            s.sendall(bytes([byte]))
            time.sleep(0.2)
            s.settimeout(0.01)
            try:
                if s.recv(1) == b"":
                    closed_after = time.monotonic() - t
                    break
            except TimeoutError:
                pass
    except (BrokenPipeError, ConnectionResetError):
        closed_after = time.monotonic() - t
    finally:
        s.close()
    assert closed_after is not None and closed_after < 8, "a slow client no longer holds a connection for minutes"


BODY = """
import os, sys, time, socket
port, chunked = int(sys.argv[1]), sys.argv[2] == "1"
s = socket.create_connection(("127.0.0.1", port))
size = 300 * 1024 * 1024
head = "POST /api/events HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nX-Table-Pin: 1357\\r\\n"
head += "Transfer-Encoding: chunked\\r\\n\\r\\n" if chunked else f"Content-Length: {size}\\r\\n\\r\\n"
s.sendall(head.encode())
block = b"x" * 65536
sent = 0
try:
    while sent < size:
        s.sendall((b"10000\\r\\n" + block + b"\\r\\n") if chunked else block)
        sent += len(block)
except OSError:
    pass
s.settimeout(5)
try:
    answer = s.recv(200).split(b"\\r\\n")[0].decode()
except OSError as err:
    answer = f"no answer ({err})"
print(sent, answer)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/io")
@pytest.mark.parametrize("chunked", [False, True])
def test_a_300_mb_body_is_refused_before_a_megabyte_is_written_anywhere(tmp_path, chunked):
    """A 300 MB POST put 288 MB into the temporary folder before the 413. The served process's
    own count of bytes written (every file, temporary ones included) stays under 1 MB."""
    import subprocess

    from tests.web.test_server import env, serve_until_ready

    proc, port = serve_until_ready(tmp_path / "d", tmp_path)

    def written() -> int:
        io = dict(line.split(": ") for line in open(f"/proc/{proc.pid}/io").read().splitlines())
        return int(io["wchar"])

    try:
        before = written()
        out = subprocess.run([sys.executable, "-c", BODY, str(port), "1" if chunked else "0"], capture_output=True,
                             text=True, timeout=120, env=env()).stdout.split(maxsplit=1)
        after = written()
        print(f"300 MB body ({'chunked' if chunked else 'Content-Length'}): {int(out[0]) / 2**20:.1f} MB sent "
              f"before the server closed; answer {out[1]!r}; {after - before} bytes written by the server")
        assert "413" in out[1]
        assert after - before < 1024 * 1024
        took, _ = phone_get(f"http://127.0.0.1:{port}", source="127.0.0.1")
        assert took < 1.0
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
