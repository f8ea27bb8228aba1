"""``companion support``: a support bundle (``companion.web.support``) written on the Pi, for
someone helping with the table: the health of the running service (asked on loopback), the
configuration without its secrets, the calibration, the journal's last lines, the machine.

Whatever is missing (no service running, a configuration that does not load, an unreadable
calibration, no journal) is a line in the bundle's README.txt; the bundle is written anyway.
Run as root (``sudo``) it can read the system journal; as another user, usually not, and the
bundle says so.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="companion.toml (default: ./companion.toml if present)")
    parser.add_argument("--data-dir", help="the service's data directory (default from config)")
    parser.add_argument("--out", help="the bundle to write, or a folder for it "
                                      "(default: ./companion-support-HOST-YYYYmmdd-HHMMSS.tar.gz)")
    parser.add_argument("--lines", type=int, default=1000, help="journal lines to include (default 1000)")
    parser.add_argument("--unit", default="companion", help="the systemd unit whose journal is read (default companion)")
    parser.add_argument("--url", help="the running service's address (default: http://127.0.0.1:PORT/ from config)")


def environment_pin(config_file: Path | None) -> str | None:
    """COMPANION_PIN from the ``environment`` file beside the configuration (the Pi's
    /etc/companion/environment), only so that it can be kept out of the bundle."""
    if config_file is None:
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in (config_file.parent / "environment").read_text(encoding="utf-8").splitlines():
            key, _, value = line.strip().partition("=")
            if key.strip() == "COMPANION_PIN" and value.strip():
                return value.strip().strip("'\"")
    return None


def ask_health(url: str, timeout: float = 5) -> dict[str, Any] | str:
    """The running service's /api/health, or a sentence saying why there is none."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            data = json.load(answer)
    except urllib.error.HTTPError as err:
        return f"{url} answered HTTP {err.code}: no health in this bundle"
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", None) or err
        return f"no companion answered at {url} ({reason}): is the service running? (systemctl status companion)"
    except ValueError as err:
        return f"{url} did not answer JSON ({err}): no health in this bundle"
    if not isinstance(data, dict):
        return f"{url} answered {type(data).__name__}, not the health object"
    return data


def target(out: str | None) -> Path:
    from companion.web.support import file_name

    path = Path(out) if out else Path(file_name())
    if path.is_dir():
        path = path / file_name()
    if path.exists():
        raise ValueError(f"{path} already exists; name another file with --out")
    if not path.parent.is_dir():
        raise ValueError(f"cannot write {path}: the folder {path.parent} does not exist")
    return path


def run(args: argparse.Namespace) -> int:
    from companion.config import ConfigError, load
    from companion.web import support

    if args.lines < 1:
        print("companion: --lines must be 1 or more", file=sys.stderr)
        return 2
    try:
        out = target(args.out)
    except ValueError as err:
        print(f"companion: {err}", file=sys.stderr)
        return 2
    config_file = Path(args.config) if args.config else Path("companion.toml") if Path("companion.toml").exists() else None
    config: dict[str, Any] | None
    config_error = None
    try:
        config = load(args.config, {"data": {"dir": args.data_dir}} if args.data_dir else None)
    except ConfigError as err:
        config, config_error = None, str(err)
    if args.url:
        url = args.url.rstrip("/") + "/api/health"
    elif config is not None:
        host = str(config["server"]["host"])
        host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
        url = f"http://{'[' + host + ']' if ':' in host else host}:{config['server']['port']}/api/health"
    else:
        url = None
    health: dict[str, Any] | str = (ask_health(url) if url else
                                    "the configuration could not be read, so the service's address is not known "
                                    "(--url names it)")
    pin = (str(config["server"]["pin"]) if config else "") or environment_pin(config_file) \
        or os.environ.get("COMPANION_PIN")
    data, notes = support.build(config, health=health, config_file=config_file, config_error=config_error, pin=pin,
                         journal_lines=args.lines, unit=args.unit)
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # the log names the phones' addresses
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError as err:
        print(f"companion: cannot write {out}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(data) // 1024 + 1} KB)" + (f"; missing: {len(notes)} part(s), listed in its README.txt"
                                                        if notes else ""))
    for note in notes:
        print(f"  {note}")
    return 0
