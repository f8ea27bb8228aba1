"""``companion backup``: the table's games, calibration and configuration in one archive, taken
while the service runs; ``companion restore`` (``companion.cli.restore``) puts one back.

The archive (``companion-backup-YYYYmmdd-HHMMSS.tar.gz``) holds, under ``companion-backup/``:

- ``manifest.json``: the companion's version, when and where it was made, each file with where
  it came from, its size and SHA-256, and the log's number of games and events;
- ``table.sqlite``: the game log, copied with SQLite's backup API from a read-only connection. The
  log is in WAL mode and the service may be writing: a plain file copy could miss the rows still
  in the WAL, or catch a page half written. The copy is one consistent moment of the log, made a
  self-contained file (no WAL) and passed through SQLite's integrity check before it is kept;
- ``table.json`` and ``colours.json``: the table and colour calibration files, when they exist,
  from where the service reads them (``companion.config.calibration_file``);
- ``companion.toml``: the configuration file, when one is used.

The log's second copy and its journal (``table.copy.sqlite``, ``table.copy.jsonl``) are not in
it: they only hold rows the log holds too (``companion.table.log``), and a restored log starts
without them (the service makes a new copy when it starts).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import socket
import sqlite3
import sys
import tarfile
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

FORMAT = "companion-backup"
VERSION = 1  # of the archive's layout; a restore refuses a newer one
TOP = "companion-backup"  # the folder every member is in: `tar xzf` makes one folder, not four files
LOG = "table.sqlite"
# role -> the member's name in the archive
MEMBERS = {"log": LOG, "table": "table.json", "colours": "colours.json", "config": "companion.toml"}
WHAT = {"log": "the game log", "table": "the table calibration", "colours": "the colour calibration",
        "config": "the configuration"}


class BackupError(Exception):
    """Why a backup cannot be made or restored, as one sentence."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="where table.sqlite lives (default from config: ./data)")
    parser.add_argument("--config", help="companion.toml (default: ./companion.toml if present)")
    parser.add_argument("--out", help="the archive to write, or a folder for it (default: "
                                      "./companion-backup-YYYYmmdd-HHMMSS.tar.gz)")


def places(config_file: str | None, data_dir: str | None) -> dict[str, Path | None]:
    """Where the service started with this configuration keeps each file of a backup: the log, the
    table and colour calibration (None when set to "none"), the configuration file (None when
    the defaults are used). ConfigError for a configuration that cannot be read."""
    from companion.config import calibration_file, load

    cfg = load(config_file, {"data": {"dir": data_dir}} if data_dir else None)
    used = Path(config_file) if config_file else Path("companion.toml") if Path("companion.toml").exists() else None
    return {"log": Path(cfg["data"]["dir"]) / LOG, "table": calibration_file(cfg, "table"),
            "colours": calibration_file(cfg, "colours"), "config": used}


def log_summary(db: sqlite3.Connection) -> dict[str, Any]:
    """The log's format, games and events, from an open copy; BackupError if it is not a table
    log (another SQLite file at its place)."""
    from companion.table.log import COLUMNS

    for table, columns in COLUMNS.items():
        found = tuple(row[1] for row in db.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise BackupError(f"it is not a companion table log (its table '{table}' has the columns "
                              f"{', '.join(found) or 'none'})")
    (version,) = db.execute("PRAGMA user_version").fetchone()
    by_game = db.execute("SELECT g.id, COUNT(e.seq) FROM games g LEFT JOIN events e ON e.game_id = g.id "
                         "GROUP BY g.id ORDER BY g.id").fetchall()
    (events,) = db.execute("SELECT COUNT(*) FROM events").fetchone()
    return {"file": LOG, "format": int(version), "games": len(by_game), "events": int(events),
            "events_by_game": {str(g): int(n) for g, n in by_game}}


def integrity(db: sqlite3.Connection) -> str | None:
    """SQLite's full integrity check: None when the file is sound, else what is wrong."""
    found = [str(r[0]) for r in db.execute("PRAGMA integrity_check").fetchall()]
    return None if found == ["ok"] else "; ".join(found[:3])


def snapshot(log: Path, into: Path) -> dict[str, Any]:
    """The log as one consistent moment, into a self-contained file ``into``; its summary."""
    # read-only: the backup never writes to the log it copies, whoever else has it open; the
    # backup API reads the WAL's committed frames too, under one read transaction
    source = sqlite3.connect(f"{log.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
    try:
        target = sqlite3.connect(str(into), isolation_level=None)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")  # one file, whatever mode the log was in
            problem = integrity(target)
            if problem is not None:
                raise BackupError(f"the table log {log} fails SQLite's integrity check ({problem}); no backup was "
                                  "written: start the companion once (it puts a damaged log aside and recovers "
                                  "the games from its second copy), then back up again")
            try:
                return log_summary(target)
            except BackupError as err:
                raise BackupError(f"{log} cannot be backed up: {err}") from None
        finally:
            target.close()
    finally:
        source.close()


def own_like(path: Path, reference: Path) -> None:
    """Run as root (sudo), a file written for the service gets the owner of the file it replaces
    or of its folder: a log owned by root is one the service's user cannot write."""
    if os.geteuid() != 0:
        return
    with contextlib.suppress(OSError):
        st = reference.stat()
        os.chown(path, st.st_uid, st.st_gid)


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be synced
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def default_name() -> str:
    return f"companion-backup-{datetime.now().strftime('%Y%m%d-%H%M%S')}.tar.gz"


def target(out: str | None) -> Path:
    """The archive to write: ``--out``, a new name in ``--out`` when it is a folder, or a new name
    here. Never an existing file: a backup must not replace another."""
    path = Path(out) if out else Path(default_name())
    if path.is_dir():
        path = path / default_name()
    if path.exists():
        raise BackupError(f"{path} already exists; name another file with --out (a backup never replaces one)")
    if not path.parent.is_dir():
        raise BackupError(f"cannot write {path}: the folder {path.parent} does not exist")
    return path


def make(where: dict[str, Path | None], out: Path) -> dict[str, Any]:
    """Write the archive ``out``; its manifest."""
    from companion import __version__

    log = where["log"]
    assert log is not None
    if not log.is_file():
        raise BackupError(f"there is no table log at {log}: nothing to back up (--data-dir, or [data] dir in "
                          "companion.toml, names the service's data directory)")
    try:
        staging_dir = tempfile.TemporaryDirectory(prefix=".companion-backup-", dir=out.parent)
    except OSError as err:
        raise BackupError(f"cannot write in {out.parent}: {err.strerror or err}") from None
    with staging_dir as staging:
        copy = Path(staging) / LOG
        try:
            summary = snapshot(log, copy)
        except sqlite3.Error as err:
            raise BackupError(f"cannot copy the table log {log}: {err}; no backup was written") from None
        contents: dict[str, bytes] = {}
        files: dict[str, dict[str, Any]] = {}
        for role, path in where.items():
            if role == "log" or path is None or not path.is_file():
                continue
            try:
                contents[role] = path.read_bytes()  # read once: the bytes hashed are the bytes stored
            except OSError as err:
                raise BackupError(f"cannot read {WHAT[role]} {path}: {err.strerror}; no backup was written") from None
        files[LOG] = {"role": "log", "from": str(log.resolve()), "bytes": copy.stat().st_size,
                      "sha256": _sha256_file(copy)}
        for role, data in contents.items():
            path = where[role]
            assert path is not None
            files[MEMBERS[role]] = {"role": role, "from": str(path.resolve()), "bytes": len(data),
                                    "sha256": hashlib.sha256(data).hexdigest()}
        manifest = {"format": FORMAT, "version": VERSION, "companion": __version__,
                    "created": datetime.now().astimezone().isoformat(timespec="seconds"),
                    "host": socket.gethostname(), "log": summary, "files": files}
        tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
        try:
            # 0600: the configuration may hold the table PIN
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
                with tarfile.open(fileobj=f, mode="w:gz") as tar:
                    _add(tar, "manifest.json", (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode())
                    with open(copy, "rb") as log_file:
                        _add(tar, LOG, log_file, files[LOG]["bytes"])
                    for role, data in contents.items():
                        _add(tar, MEMBERS[role], data)
                f.flush()
                os.fsync(f.fileno())
            own_like(tmp, out.parent)
            os.replace(tmp, out)
            fsync_dir(out.parent)
        except OSError as err:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise BackupError(f"cannot write {out}: {err.strerror or err}") from None
    return manifest


def _add(tar: tarfile.TarFile, name: str, data: bytes | io.BufferedReader, size: int | None = None) -> None:
    info = tarfile.TarInfo(f"{TOP}/{name}")
    info.size = len(data) if isinstance(data, bytes) else int(size or 0)
    info.mtime = int(time.time())
    info.mode = 0o600
    tar.addfile(info, io.BytesIO(data) if isinstance(data, bytes) else data)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe(manifest: dict[str, Any]) -> str:
    """What a backup holds, in one line."""
    log = manifest["log"]
    others = [name for name, f in manifest["files"].items() if f["role"] != "log"]
    return (f"{_count(log['games'], 'game')}, {_count(log['events'], 'event')}"
            + (f"; {', '.join(others)}" if others else "; no calibration or configuration file"))


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def run(args: argparse.Namespace) -> int:
    from companion.config import ConfigError

    try:
        where = places(args.config, args.data_dir)
        out = target(args.out)
        manifest = make(where, out)
    except (ConfigError, BackupError) as err:
        print(f"companion: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out}: {describe(manifest)}")
    return 0
