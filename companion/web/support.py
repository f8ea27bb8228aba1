"""The support bundle: what someone helping with a table needs, in one ``.tar.gz``, with the PIN
and any other secret taken out. ``companion support`` writes one on the Pi; the health page
downloads one from the running service (``GET /api/support.tar.gz``).

Under ``companion-support/`` it holds:

- ``README.txt``: what each file is, and a line for every part that could not be included (and why);
- ``version.txt``: the companion's version, where the package runs from, Python;
- ``health.json``: the service's ``/api/health`` (or ``health.txt``: why there is none);
- ``config/companion.toml``: the configuration file with its ``pin`` (and any password, token or
  secret) replaced by ``"<redacted>"``; ``config/effective.json``: every key as the service uses
  it, redacted the same way;
- ``calibration/table.json``, ``calibration/colours.json``: the calibration files, when they exist;
- ``log/journal.txt``: the last lines of ``journalctl -u companion`` (or a sentence saying why the
  journal could not be read), and ``log/recent.txt``: the service's own last log lines, kept in
  memory since it started (only in the bundle the running service makes);
- ``platform.json``: the machine (model, OS, architecture, memory, disk, temperature, throttling,
  the versions of the main packages).

Building a bundle never fails on what it finds: a part that is missing, unreadable, too large or
broken becomes one line in ``README.txt`` (and in its own place), and the rest is written. The
table PIN is removed three ways: the configuration's key, the journal's ``table PIN: …`` line,
and every whole-number occurrence of the PIN itself in any text of the bundle.
"""

from __future__ import annotations

import collections
import io
import json
import logging
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

TOP = "companion-support"
UNIT = "companion"  # the systemd unit whose journal is read
LOG_LINES = 1000  # journal lines in a bundle
MAX_FILE_BYTES = 4 << 20  # a calibration or configuration file larger than this is not a calibration
REDACTED = "<redacted>"
# configuration keys whose values are secrets: the PIN, and anything a later key may carry
SECRET_KEYS = re.compile(r"(?i)^(?:.*[._])?(pin|password|passwd|secret|token|api_?key)$")
_SECRET_ASSIGNMENT = re.compile(
    r"""(?imx)
    (^[ \t]*|[{,][ \t]*|\.)                  # a line start, an inline table, or a dotted key
    ("?(?:pin|password|passwd|secret|token|api_?key)"?\s*=\s*)
    ("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,}#]+)""")
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s\"']+@")  # rtsp://user:pass@camera
_PIN_LINE = re.compile(r"(?i)(table PIN:?\s*)\S+")  # what `companion serve` prints at start


def redact_text(text: str, pin: str | None = None) -> str:
    """``text`` with secrets replaced: assignments of secret keys (TOML), credentials in URLs, the
    serve's ``table PIN: …`` line, and the PIN itself wherever it stands as a whole number."""
    text = _SECRET_ASSIGNMENT.sub(lambda m: f'{m.group(1)}{m.group(2)}"{REDACTED}"', text)
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    text = _PIN_LINE.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    if pin and len(pin.strip()) >= 3:  # a shorter PIN would blank every such number, and guards nothing
        text = re.sub(rf"(?<![\w.]){re.escape(pin.strip())}(?![\w])", REDACTED, text)
    return text


def redact_value(value: Any, pin: str | None = None, key: str = "") -> Any:
    """A JSON-like value with secret keys' values replaced and every string redacted."""
    if isinstance(value, dict):
        return {k: (REDACTED if SECRET_KEYS.match(str(k)) and v not in ("", None)
                    else redact_value(v, pin, str(k))) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v, pin, key) for v in value]
    if isinstance(value, str):
        return redact_text(value, pin)
    return value


class RecentLog(logging.Handler):
    """The service's last log lines, kept in memory: the journal of a system service is readable
    by root and the ``systemd-journal`` group only, not by the service's own user, so the bundle
    the running service makes takes its lines from here."""

    def __init__(self, lines: int = LOG_LINES):
        super().__init__(logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a record that cannot be formatted is not worth a traceback here
            return
        with self._guard:
            self.lines.append(line)

    def text(self) -> str:
        with self._guard:
            return "\n".join(self.lines) + ("\n" if self.lines else "")


RECENT: RecentLog | None = None


def keep_recent_log() -> RecentLog:
    """Keep the process's log lines for the bundle (once; ``companion serve`` calls it)."""
    global RECENT
    if RECENT is None:
        RECENT = RecentLog()
        logging.getLogger().addHandler(RECENT)
    return RECENT


# -- the parts ---------------------------------------------------------------------------------

def journal(unit: str = UNIT, lines: int = LOG_LINES) -> tuple[str | None, str]:
    """The unit's last journal lines, or None; and a sentence saying where they came from or why
    there are none."""
    exe = shutil.which("journalctl")
    if exe is None:
        return None, "journalctl is not on this machine (no systemd journal): no service log in this bundle"
    try:
        done = subprocess.run([exe, "-u", unit, "-n", str(lines), "--no-pager", "-o", "short-iso"],
                              capture_output=True, text=True, timeout=20, errors="replace")
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"journalctl -u {unit} could not be run: {err}"
    out = done.stdout
    entries = [line for line in out.splitlines() if line.strip() and not line.startswith("-- ")]
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
        return None, f"journalctl -u {unit} failed: {why}"
    if not entries:
        hint = ""
        if "not seeing messages" in done.stderr or os.geteuid() != 0:
            hint = (" (a system service's journal is readable by root and the systemd-journal group only: "
                    "run `sudo companion support`)")
        return None, f"journalctl -u {unit} has no entries for this user{hint}"
    return out, f"the last {len(entries)} lines of journalctl -u {unit}"


def _read(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(f"it is {size} bytes, larger than a calibration or configuration file can be")
    return path.read_bytes()


def _run(args: list[str], timeout: float = 5) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, errors="replace")
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip() or f"exit status {done.returncode}").splitlines()[0])
    return done.stdout.strip()


def platform_facts(data_dir: Path | None = None) -> dict[str, Any]:
    """What the machine is, each fact on its own: one that cannot be read says why."""
    from importlib import metadata

    facts: dict[str, Any] = {}

    def fact(name: str, read: Callable[[], Any]) -> None:
        try:
            facts[name] = read()
        except Exception as err:  # each fact on its own: one missing never loses the others
            facts[name] = f"unavailable: {err.__class__.__name__}: {err}"

    def os_release() -> dict[str, str]:
        text = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
        pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
        return {k: v.strip().strip('"') for k, v in pairs if k in ("PRETTY_NAME", "VERSION_CODENAME", "ID")}

    def memory() -> dict[str, str]:
        text = Path("/proc/meminfo").read_text(encoding="utf-8")
        return {k: v.strip() for k, v in (line.split(":", 1) for line in text.splitlines())
                if k in ("MemTotal", "MemAvailable", "SwapTotal", "SwapFree")}

    def disk() -> dict[str, Any]:
        where = data_dir if data_dir is not None and data_dir.exists() else Path("/")
        usage = shutil.disk_usage(where)
        return {"path": str(where), "total_mb": usage.total >> 20, "free_mb": usage.free >> 20}

    def packages() -> dict[str, str]:
        out = {}
        for name in ("flask", "waitress", "numpy", "opencv-python-headless", "opencv-python", "onnxruntime",
                     "picamera2", "gpiozero", "lgpio", "simplejpeg"):
            try:
                out[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return out

    fact("hostname", socket.gethostname)
    fact("model", lambda: Path("/proc/device-tree/model").read_text(errors="replace").strip("\x00\n "))
    fact("os", os_release)
    fact("kernel", platform.release)
    fact("machine", platform.machine)
    fact("dpkg_architecture", lambda: _run(["dpkg", "--print-architecture"]))
    fact("python", lambda: sys.version.split()[0])
    fact("cpus", os.cpu_count)
    fact("load_average", os.getloadavg)
    fact("uptime_s", lambda: float(Path("/proc/uptime").read_text().split()[0]))
    fact("memory", memory)
    fact("disk", disk)
    fact("temperature_c", lambda: int(Path("/sys/class/thermal/thermal_zone0/temp").read_text()) / 1000)
    # the Pi firmware's under-voltage and throttling flags (0x0: none ever); vcgencmd is Pi-only
    fact("throttled", lambda: _run(["vcgencmd", "get_throttled"]) if shutil.which("vcgencmd")
         else "unavailable: no vcgencmd (not a Raspberry Pi)")
    fact("cameras", lambda: _run(["rpicam-hello", "--list-cameras"], timeout=10) if shutil.which("rpicam-hello")
         else "unavailable: no rpicam-hello")
    fact("packages", packages)
    fact("user", lambda: f"uid {os.geteuid()}")
    return facts


# -- the bundle --------------------------------------------------------------------------------

class Bundle:
    """A bundle being written: members, and a line for every part that is missing."""

    def __init__(self, pin: str | None):
        self.pin = pin
        self.members: dict[str, bytes] = {}
        self.notes: list[str] = []

    def text(self, name: str, text: str) -> None:
        self.members[name] = redact_text(text, self.pin).encode("utf-8")

    def json(self, name: str, value: Any) -> None:
        text = json.dumps(redact_value(value, self.pin), indent=2, ensure_ascii=False, default=str) + "\n"
        self.members[name] = redact_text(text, self.pin).encode("utf-8")

    def missing(self, name: str, sentence: str) -> None:
        """A part that is not there: its sentence in its own place and in README.txt."""
        self.notes.append(f"{name}: {sentence}")
        self.text(name, sentence + "\n")

    def part(self, name: str, build: Callable[[], None]) -> None:
        """Build one part; whatever goes wrong becomes a line, never a failed bundle."""
        try:
            build()
        except Exception as err:  # the bundle is for when things are wrong: it must not fail too
            self.missing(name, f"could not be included: {err.__class__.__name__}: {err}")

    def tar(self) -> bytes:
        out = io.BytesIO()
        now = int(time.time())
        with tarfile.open(fileobj=out, mode="w:gz") as tar:
            for name, data in self.members.items():
                info = tarfile.TarInfo(f"{TOP}/{name}")
                info.size, info.mtime, info.mode = len(data), now, 0o600
                tar.addfile(info, io.BytesIO(data))
        return out.getvalue()


def build(config: dict[str, Any] | None, *, health: dict[str, Any] | str, config_file: Path | None = None,
          config_error: str | None = None, pin: str | None = None, journal_lines: int = LOG_LINES,
          unit: str = UNIT, recent: str | None = None,
          made_by: str = "companion support") -> tuple[bytes, list[str]]:
    """The bundle's bytes (a ``.tar.gz``) and what is missing from it, a line each. ``config``: the configuration in use (None when it
    could not be read: ``config_error`` says why); ``health``: ``/api/health``'s answer, or a
    sentence saying why there is none; ``config_file``: the file to include, redacted; ``pin``:
    the table PIN, so that it appears nowhere; ``recent``: the service's own last log lines."""
    from companion import __version__
    from companion.config import calibration_file

    pin = pin or (str(config["server"].get("pin") or "") if config else "") or os.environ.get("COMPANION_PIN")
    b = Bundle(pin)
    made = datetime.now().astimezone().isoformat(timespec="seconds")

    def version() -> None:
        import companion

        b.text("version.txt", f"companion {__version__}\nrunning from {Path(companion.__file__).resolve().parent}\n"
                              f"python {sys.version.split()[0]} ({sys.executable})\n")

    def health_part() -> None:
        if isinstance(health, dict):
            b.json("health.json", health)
        else:
            b.missing("health.txt", health)

    def config_part() -> None:
        if config_error is not None:
            b.notes.append(f"config/effective.json: the configuration could not be read: {config_error}")
        if config_file is None:
            b.missing("config/companion.toml", "no configuration file in use (every key at its default)")
        else:
            try:
                raw = _read(config_file)
            except (OSError, ValueError) as err:
                b.missing("config/companion.toml", f"cannot read {config_file}: {getattr(err, 'strerror', None) or err}")
            else:
                b.text("config/companion.toml", f"# {config_file}, secrets redacted\n"
                       + raw.decode("utf-8", errors="replace"))
        if config is not None:
            b.json("config/effective.json", config)
        else:
            b.missing("config/effective.json", f"the configuration could not be read: {config_error}")

    def calibration_part() -> None:
        if config is None:
            b.missing("calibration/README.txt", "no calibration files: the configuration naming them could not be read")
            return
        for name in ("table", "colours"):
            member = f"calibration/{name}.json"
            path = calibration_file(config, name)
            if path is None:
                b.missing(member, f"[calibration] {name} is \"none\" in the configuration")
                continue
            try:
                data = _read(path)
            except FileNotFoundError:
                b.missing(member, f"there is no {path}" + (" (the service calibrates itself from the markers)"
                                                            if name == "table" else " (the shipped colour profiles are used)"))
                continue
            except (OSError, ValueError) as err:
                b.missing(member, f"cannot read {path}: {getattr(err, 'strerror', None) or err}")
                continue
            try:
                json.loads(data)
            except ValueError as err:  # kept as it is: a broken file is what the helper needs to see
                b.notes.append(f"{member}: {path} is not valid JSON ({err}); included as it is")
            b.text(member, data.decode("utf-8", errors="replace"))

    def log_part() -> None:
        text, why = journal(unit, journal_lines)
        if text is None:
            b.missing("log/journal.txt", why)
        else:
            b.text("log/journal.txt", f"# {why}\n{text}")
        if recent is not None:
            b.text("log/recent.txt", recent or "(no log lines since the service started)\n")

    def platform_part() -> None:
        data_dir = Path(config["data"]["dir"]) if config else None
        b.json("platform.json", platform_facts(data_dir))

    b.part("version.txt", version)
    b.part("health.json", health_part)
    b.part("config/companion.toml", config_part)
    b.part("calibration/README.txt", calibration_part)
    b.part("log/journal.txt", log_part)
    b.part("platform.json", platform_part)
    readme = [f"companion support bundle, made {made} by {made_by} on {socket.gethostname()}",
              f"companion {__version__}", "",
              "Secrets (the table PIN, passwords, tokens, credentials in camera URLs) are replaced by "
              f'"{REDACTED}".', "", "files:"]
    readme += [f"  {name}" for name in b.members]
    readme += ["", "missing or incomplete:" if b.notes else "nothing missing."]
    readme += [f"  {note}" for note in b.notes]
    b.members = {"README.txt": redact_text("\n".join(readme) + "\n", pin).encode("utf-8"), **b.members}
    return b.tar(), list(b.notes)


def file_name(now: datetime | None = None) -> str:
    return f"companion-support-{socket.gethostname()}-{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}.tar.gz"
