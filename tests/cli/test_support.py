"""`companion support` as its own process, as on the Pi: it asks the running service (a real
server on loopback, on the port of the configuration) for its health, reads the configuration,
calibration and journal (a journalctl shim), and writes a tar the test opens. The PIN, from the
configuration or from the environment file beside it, appears nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from companion.web import create_app
from companion.web.server import start
from tests.loopback import free_port

ROOT = Path(__file__).resolve().parents[2]
PIN = "590314"


def companion(*args: str | Path, cwd: Path, path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path}
    env.pop("COMPANION_PIN", None)
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env)


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive, "r:gz") as tar:
        return {m.name.removeprefix("companion-support/"): tar.extractfile(m).read() for m in tar if m.isfile()}


def journal_shim(folder: Path) -> str:
    folder.mkdir()
    shim = folder / "journalctl"
    shim.write_text(f'#!/bin/sh\necho "$*" >"{folder}/asked"\n'
                    f'echo "2024-05-01T20:00:00+0200 pi companion[812]: table PIN: {PIN} (env)"\n')
    shim.chmod(0o755)
    return f"{folder}:/usr/bin:/bin"


def test_a_bundle_of_the_running_service_with_the_pin_from_the_environment_file(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "table.json").write_bytes((ROOT / "calibration" / "table.example.json").read_bytes())
    port = free_port()
    conf = tmp_path / "etc"
    conf.mkdir()
    config = conf / "companion.toml"
    config.write_text(f'[server]\nport = {port}\n\n[data]\ndir = "{data}"\n', encoding="utf-8")
    (conf / "environment").write_text(f"# the table PIN\nCOMPANION_PIN={PIN}\n", encoding="utf-8")
    app = create_app({"data": {"dir": str(data)}, "server": {"pin": PIN, "port": port}})
    running = start(app, "127.0.0.1", port, threads=8)
    path = journal_shim(tmp_path / "bin")
    try:
        out = companion("support", "--config", config, "--out", tmp_path, "--lines", "50", cwd=tmp_path, path=path)
    finally:
        running.stop()
        app.extensions["companion"].table.close()
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "bin" / "asked").read_text().split() == ["-u", "companion", "-n", "50", "--no-pager",
                                                                "-o", "short-iso"]
    written = next(tmp_path.glob("companion-support-*.tar.gz"))
    assert f"wrote {written}" in out.stdout
    assert written.stat().st_mode & 0o777 == 0o600
    inside = members(written)
    for name, data_ in inside.items():
        assert PIN.encode() not in data_, f"the PIN is in {name}"
    health = json.loads(inside["health.json"])
    assert health["pin_source"] == "config" and health["camera"]["configured"] is False
    assert inside["config/companion.toml"].decode().endswith(config.read_text())
    assert json.loads(inside["config/effective.json"])["server"]["port"] == port
    assert inside["calibration/table.json"] == (data / "table.json").read_bytes()
    assert "table PIN: <redacted> (env)" in inside["log/journal.txt"].decode()
    assert "log/recent.txt" not in inside  # the running service's own lines are in its download only
    readme = inside["README.txt"].decode()
    assert "calibration/colours.json: there is no" in readme and "the shipped colour profiles are used" in readme


def test_no_service_a_broken_configuration_and_no_journal_still_give_a_bundle(tmp_path):
    config = tmp_path / "companion.toml"
    config.write_text(f'[server]\npin = "{PIN}"\nport = {free_port()}\ncolour = "red"\n', encoding="utf-8")
    empty = tmp_path / "bin"
    empty.mkdir()
    out = companion("support", "--config", config, "--out", tmp_path / "b.tar.gz", cwd=tmp_path, path=str(empty))
    assert out.returncode == 0, out.stderr
    assert "missing:" in out.stdout
    inside = members(tmp_path / "b.tar.gz")
    for name, data_ in inside.items():
        assert PIN.encode() not in data_, f"the PIN is in {name}"
    readme = inside["README.txt"].decode()
    assert "unknown key 'server.colour'" in readme  # why the configuration could not be used
    assert "the service's address is not known" in inside["health.txt"].decode()
    assert 'pin = "<redacted>"' in inside["config/companion.toml"].decode()
    assert "log/journal.txt: journalctl is not on this machine" in readme
    assert "calibration/README.txt: no calibration files" in readme

    # a configuration that loads, and nobody listening on its port: said, not failed
    config.write_text(f'[server]\npin = "{PIN}"\nport = {free_port()}\n', encoding="utf-8")
    out = companion("support", "--config", config, "--out", tmp_path / "c.tar.gz", cwd=tmp_path, path=str(empty))
    assert out.returncode == 0, out.stderr
    health = members(tmp_path / "c.tar.gz")["health.txt"].decode()
    assert health.startswith("no companion answered at http://127.0.0.1:") and "is the service running?" in health


def test_it_never_replaces_a_file(tmp_path):
    (tmp_path / "b.tar.gz").write_bytes(b"keep me")
    out = companion("support", "--out", tmp_path / "b.tar.gz", cwd=tmp_path, path="/usr/bin:/bin")
    assert out.returncode == 2 and "already exists" in out.stderr
    assert (tmp_path / "b.tar.gz").read_bytes() == b"keep me"
