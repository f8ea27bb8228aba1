"""``companion serve``: the service wired by ``companion.toml``, until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from companion.config import option
from companion.live.service import Service
from companion.sim.rendered_table import for_config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="address to listen on (default from config: 0.0.0.0, every phone on the Wi-Fi)")
    parser.add_argument("--port", type=option("server.port"), help="port (default from config: 8000)")
    parser.add_argument("--data-dir", help="where table.sqlite lives (default from config: ./data)")
    parser.add_argument("--config", help="companion.toml (default: ./companion.toml if present)")
    parser.add_argument("--threads", type=option("server.threads"), help="server threads, one per open scoreboard (default from config: 128)")


def config_from_args(args: Any, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    from companion.config import load

    overrides: dict[str, Any] = dict(extra or {})
    srv = {k: v for k, v in (("host", getattr(args, "host", None)), ("port", getattr(args, "port", None)),
                             ("threads", getattr(args, "threads", None))) if v is not None}
    if srv:
        overrides["server"] = {**overrides.get("server", {}), **srv}
    if getattr(args, "data_dir", None):
        overrides["data"] = {"dir": args.data_dir}
    return load(getattr(args, "config", None), overrides)


def run(args: Any, extra: dict[str, Any] | None = None) -> int:
    import signal
    import sqlite3
    import sys
    from pathlib import Path

    from companion.config import ConfigError
    from companion.live.camera import CameraError
    from companion.web.server import serve

    try:
        config = config_from_args(args, extra)
    except ConfigError as err:
        print(f"companion: {err}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from companion.web import support

    support.keep_recent_log()  # the support bundle's log/recent.txt: the journal is root's to read
    data_dir = Path(config["data"]["dir"])
    if data_dir.exists() and not data_dir.is_dir():
        print(f"companion: the data directory {data_dir} is a file, not a directory "
              "(--data-dir or [data] dir in companion.toml)", file=sys.stderr)
        return 2
    try:
        service = Service(config, rendered=for_config(config))
    except CameraError as err:
        print(f"companion: camera: {err}", file=sys.stderr)
        return 2
    except (OSError, sqlite3.Error) as err:
        reason = getattr(err, "strerror", None) or str(err)
        print(f"companion: cannot use the data directory {data_dir} ({data_dir / 'table.sqlite'}): {reason}",
              file=sys.stderr)
        return 2
    for notice in service.table.notices:
        print(f"companion: WARNING: {notice}", file=sys.stderr, flush=True)
    config_file = getattr(args, "config", None) or ("companion.toml" if Path("companion.toml").exists() else None)
    service.app.extensions["companion"].config_file = Path(config_file).resolve() if config_file else None
    service.start()
    if service.rendered is not None:
        print(f"demo: a rendered 21 Exact game plays itself (about {service.rendered.duration:.0f} s); "
              f"the camera's proposals confirm themselves after {config['confirm']['auto_seconds']} s", flush=True)
    host, port, threads = config["server"]["host"], config["server"]["port"], config["server"]["threads"]

    def terminate(signum: int, frame: Any) -> None:
        # systemctl stop / restart sends SIGTERM, which by default ends Python on the spot: no
        # finally, so the camera was never stopped, open streams never ended and the buzzer was
        # left as it was (on, if it was sounding). Leave the way Ctrl-C does, with status 0.
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, terminate)
    try:
        serve(service.app, host, port, threads)
    except OSError as err:
        print(f"companion: cannot listen on {host}:{port}: {err.strerror}", file=sys.stderr)
        return 2
    finally:
        service.stop()
        service.table.close()  # a quiet moment: the log checkpointed and copied
        print("companion: stopped", file=sys.stderr, flush=True)
    return 0
