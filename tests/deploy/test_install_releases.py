"""deploy/install.sh's upgrade, rollback and uninstall, run for real on a temporary prefix: the script is
sourced and its functions called, with shims on PATH for what only a Pi has. ``python3 -m venv``
makes a venv whose ``companion`` is this test's Python running the release's own copy of the
source (so --version, replay and dice in the smoke check are the real program, of that release),
``pip`` fails on request (a wheel missing from PyPI), and ``systemctl`` only writes down what it
was asked (``id`` says root, ``userdel`` is written down too). What is not tested here: apt, useradd, the unit under a real systemd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.loopback import free_port

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "install.sh"

PYTHON3_SHIM = r"""#!/bin/sh
# python3 -m venv DIR: a venv whose programs are the test's Python on the release's source
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    shift 2
    [ "$1" = "--system-site-packages" ] && shift
    venv=$1; rel=$(dirname "$venv")
    mkdir -p "$venv/bin"
    cat >"$venv/bin/pip" <<EOF
#!/bin/sh
echo "pip \$*" >>"$SHIM_LOG"
case "\$*" in *" -e "*) if [ -n "\$FAKE_PIP_FAIL" ]; then
    echo "ERROR: Could not find a version that satisfies the requirement opencv-python-headless>=5.0" >&2; exit 1
fi ;; esac
exit 0
EOF
    cat >"$venv/bin/python" <<EOF
#!/bin/sh
case "\$*" in *picamera2*) exit 0 ;; esac  # apt's picamera2, gpiozero and cv2: there on a Pi
PYTHONPATH="$rel/src" exec "$REAL_PYTHON" "\$@"
EOF
    cat >"$venv/bin/companion" <<EOF
#!/bin/sh
PYTHONPATH="$rel/src" exec "$REAL_PYTHON" -m companion "\$@"
EOF
    chmod +x "$venv/bin/pip" "$venv/bin/python" "$venv/bin/companion"
    exit 0
fi
exec "$REAL_PYTHON" "$@"
"""
SYSTEMCTL_SHIM = """#!/bin/sh
echo "systemctl $*" >>"$SHIM_LOG"
exit 0
"""


def source_tree(at: Path, version: str, broken_replay: bool = False) -> Path:
    """A checkout of this project at ``version``: what the installer copies and runs."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("companion", "models", "calibration", "deploy"):
        shutil.copytree(ROOT / part, at / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", at)
    init = at / "companion" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', f'__version__ = "{version}"'))
    if broken_replay:  # a release whose rules are wrong: the smoke check's replay catches it
        replay = at / "companion" / "cli" / "replay.py"
        replay.write_text(replay.read_text().replace("result = replay(read_jsonl(f))",
                                                     "result = {**replay(read_jsonl(f)), 'scores': {}}"))
    return at


class Box:
    """A prefix, data and configuration folders in tmp_path, and the shims."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.prefix = tmp / "opt"
        self.data = tmp / "data"
        self.conf = tmp / "etc"
        self.backups = tmp / "backups"
        self.units = tmp / "systemd"
        self.avahi = tmp / "avahi"
        self.log = tmp / "shim.log"
        self.bin = tmp / "bin"
        self.bin.mkdir()
        for name, text in (("python3", PYTHON3_SHIM), ("systemctl", SYSTEMCTL_SHIM),
                           ("journalctl", "#!/bin/sh\necho 'journal: the service did not start'\n"),
                           ("userdel", '#!/bin/sh\necho "userdel $*" >>"$SHIM_LOG"\n')):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)
        self.conf.mkdir()
        self.port = free_port()
        (self.conf / "companion.toml").write_text(f'[server]\nport = {self.port}\n\n[data]\ndir = "{self.data}"\n')

    def run(self, body: str, **env: str) -> subprocess.CompletedProcess:
        script = (f'set -euo pipefail; source "{SCRIPT}"; PREFIX="{self.prefix}"; DATA_DIR="{self.data}"; '
                  f'CONF_DIR="{self.conf}"; BACKUP_DIR="{self.backups}"; UNIT_DIR="{self.units}"; AVAHI_DIR="{self.avahi}"; '
                  f'HEALTH_WAIT_S=4; {body}')
        full_env = {**os.environ, "PATH": f"{self.bin}:{os.environ['PATH']}", "SHIM_LOG": str(self.log),
                    "REAL_PYTHON": sys.executable, **env}
        return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, env=full_env)

    def current(self) -> str:
        return os.readlink(self.prefix / "current")

    def previous(self) -> str:
        return os.readlink(self.prefix / "previous")

    def releases(self) -> list[str]:
        return sorted(p.name for p in (self.prefix / "releases").iterdir())

    def version_running(self) -> str:
        """What the unit's ExecStart path runs (/opt/companion/venv/bin/companion)."""
        return subprocess.run([str(self.prefix / "venv" / "bin" / "companion"), "--version"], capture_output=True,
                              text=True, env={**os.environ, "REAL_PYTHON": sys.executable}, check=True,
                              cwd=self.tmp).stdout.strip()  # not from the checkout: `-m` looks in . first

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return Box(tmp_path)


def test_a_failed_upgrade_leaves_the_running_version_and_a_rollback_goes_back(box: Box, tmp_path: Path):
    # the layout before releases: a venv and src of their own
    (box.prefix / "venv" / "bin").mkdir(parents=True)
    (box.prefix / "src").mkdir()
    v1 = source_tree(tmp_path / "v1", "1.0.0")
    out = box.run(f'upgrade "{v1}"')
    assert out.returncode == 0, out.stderr
    assert "smoke check passed: companion 1.0.0" in out.stderr
    assert box.current().startswith("releases/1.0.0-") and not (box.prefix / "previous").exists()
    assert os.readlink(box.prefix / "venv") == "current/venv" and os.readlink(box.prefix / "src") == "current/src"
    assert "systemctl stop companion.service" in box.calls()  # stopped while the old folders were replaced
    assert box.version_running() == "companion 1.0.0"
    assert (box.prefix / "current" / "src" / "models" / "dice-finder.onnx").is_file()

    # games in the log: the upgrade backs them up before it switches
    from companion.table import Table

    table = Table(box.data / "table.sqlite")
    table.start({"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}, source="phone")
    table.close()
    v2 = source_tree(tmp_path / "v2", "2.0.0")
    out = box.run(f'upgrade "{v2}"')
    assert out.returncode == 0, out.stderr
    assert box.current().startswith("releases/2.0.0-") and box.previous().startswith("releases/1.0.0-")
    assert box.version_running() == "companion 2.0.0"
    assert len(list(box.backups.glob("companion-backup-*.tar.gz"))) == 1

    # pip fails (a wheel missing for this Python): nothing switches, the half-built release goes
    v3 = source_tree(tmp_path / "v3", "3.0.0")
    before = box.releases()
    out = box.run(f'upgrade "{v3}"', FAKE_PIP_FAIL="1")
    assert out.returncode != 0
    assert "pip install of the new release failed" in out.stderr
    assert f"still running: {box.current().removeprefix('releases/')}" in out.stderr
    assert box.current().startswith("releases/2.0.0-") and box.releases() == before
    assert box.version_running() == "companion 2.0.0"

    # pip works but the new release replays a game wrong: the smoke check stops it
    v3_bad = source_tree(tmp_path / "v3-bad", "3.0.0", broken_replay=True)
    out = box.run(f'upgrade "{v3_bad}"')
    assert out.returncode != 0 and "companion replay of deploy/smoke-game.jsonl is wrong" in out.stderr
    assert box.current().startswith("releases/2.0.0-") and box.releases() == before

    # back to 1.0.0, and forth again: each rollback swaps current and previous
    out = box.run("rollback")
    assert out.returncode == 0, out.stderr
    assert box.current().startswith("releases/1.0.0-") and box.previous().startswith("releases/2.0.0-")
    assert box.version_running() == "companion 1.0.0"

    # the next upgrade keeps the one it replaces and removes the rest
    out = box.run(f'upgrade "{v3}"')
    assert out.returncode == 0, out.stderr
    assert box.current().startswith("releases/3.0.0-") and box.previous().startswith("releases/1.0.0-")
    assert [r.split("-")[0] for r in box.releases()] == ["1.0.0", "3.0.0"]


def fake_release(box: Box, version: str) -> None:
    """A release as the installer leaves one, without building it (for what runs after the build)."""
    rel = box.prefix / "releases" / f"{version}-20240101-000000"
    init = rel / "src" / "companion" / "__init__.py"
    init.parent.mkdir(parents=True)
    init.write_text(f'__version__ = "{version}"\n')
    subprocess.run([str(box.bin / "python3"), "-m", "venv", "--system-site-packages", str(rel / "venv")], check=True,
                   env={**os.environ, "REAL_PYTHON": sys.executable, "SHIM_LOG": str(box.log)})
    out = box.run(f'switch_to "{rel}"')
    assert out.returncode == 0, out.stderr


class Health(BaseHTTPRequestHandler):
    version = "1.0.0"

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"companion": self.version}).encode()
        self.send_response(200 if self.path == "/api/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_new_release_that_does_not_answer_is_rolled_back_by_itself(box: Box):
    fake_release(box, "1.0.0")
    fake_release(box, "2.0.0")
    server = ThreadingHTTPServer(("127.0.0.1", box.port), Health)  # the service still answering as 1.0.0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = box.run("start_checked")
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 1
    assert "did not answer on http://127.0.0.1:" in out.stderr and "within 4 s" in out.stderr
    assert "journal: the service did not start" in out.stdout  # the journal's last lines, for the reason
    assert "rolled back: the companion runs 1.0.0-20240101-000000 again" in out.stderr
    assert box.current() == "releases/1.0.0-20240101-000000"
    assert box.calls().count("systemctl restart companion.service") == 2


def test_a_new_release_that_answers_stays(box: Box):
    fake_release(box, "1.0.0")
    fake_release(box, "2.0.0")
    Health.version = "2.0.0"
    server = ThreadingHTTPServer(("127.0.0.1", box.port), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        out = box.run("start_checked")
    finally:
        server.shutdown()
        server.server_close()
        Health.version = "1.0.0"
    assert out.returncode == 0, out.stderr
    assert "the companion answers: 2.0.0-20240101-000000" in out.stdout
    assert box.current() == "releases/2.0.0-20240101-000000"


def test_rollback_from_the_command_line(box: Box):
    (box.bin / "id").write_text("#!/bin/sh\necho 0\n")  # the script checks for root first
    (box.bin / "id").chmod(0o755)
    out = box.run("main --rollback --no-start")
    assert out.returncode == 1 and "nothing to roll back to" in out.stderr
    fake_release(box, "1.0.0")
    fake_release(box, "2.0.0")
    out = box.run("main --rollback --no-start")
    assert out.returncode == 0, out.stderr
    assert "rolled back from 2.0.0-20240101-000000 to 1.0.0-20240101-000000" in out.stdout
    assert box.current() == "releases/1.0.0-20240101-000000"
    assert "systemctl restart companion.service" not in box.calls()


def as_root(box: Box) -> None:
    (box.bin / "id").write_text("#!/bin/sh\necho 0\n")  # `id -u` and `id companion` both answer
    (box.bin / "id").chmod(0o755)


def installed(box: Box) -> None:
    """Two releases, a unit file, games, a backup: what a Pi has after an upgrade."""
    fake_release(box, "1.0.0")
    fake_release(box, "2.0.0")
    box.units.mkdir()
    (box.units / "companion.service").write_text((ROOT / "deploy" / "companion.service").read_text())
    box.avahi.mkdir()
    (box.avahi / "companion.service").write_text((ROOT / "deploy" / "companion-avahi.service").read_text())
    box.data.mkdir()
    (box.data / "table.sqlite").write_bytes(b"the games")
    box.backups.mkdir()
    (box.backups / "companion-backup-20240101-000000.tar.gz").write_bytes(b"a backup")


def test_uninstall_removes_the_service_and_the_program_and_keeps_the_data(box: Box):
    as_root(box)
    installed(box)
    out = box.run("main --uninstall")
    assert out.returncode == 0, out.stderr
    assert "systemctl disable --now companion.service" in box.calls() and "systemctl daemon-reload" in box.calls()
    assert not (box.units / "companion.service").exists() and not box.prefix.exists()
    assert not (box.avahi / "companion.service").exists()  # no longer announced
    assert (box.data / "table.sqlite").read_bytes() == b"the games"
    assert (box.conf / "companion.toml").is_file() and len(list(box.backups.iterdir())) == 1
    assert f"{box.data}   the games (table.sqlite)" in out.stdout and str(box.conf) in out.stdout
    assert "--uninstall --purge" in out.stdout
    assert not any(c.startswith("userdel") for c in box.calls())
    # again, with nothing left to remove: no error
    assert box.run("main --uninstall").returncode == 0


def test_uninstall_purge_removes_the_data_too(box: Box):
    as_root(box)
    installed(box)
    out = box.run("main --uninstall --purge")
    assert out.returncode == 0, out.stderr
    for gone in (box.prefix, box.data, box.conf, box.backups, box.units / "companion.service"):
        assert not gone.exists(), gone
    assert "userdel companion" in box.calls()
    assert f"removed the games, calibration and colour profiles ({box.data})" in out.stdout


def test_purge_alone_and_an_empty_prefix_are_refused(box: Box):
    as_root(box)
    out = box.run("main --purge")
    assert out.returncode == 2 and "--purge goes with --uninstall" in out.stderr
    out = box.run('PREFIX=""; uninstall purge')
    assert out.returncode == 1 and "refusing to remove the prefix ''" in out.stderr
    assert box.conf.exists()
