"""``companion restore FILE``: put a ``companion backup`` archive back (``companion.cli.backup``
describes it).

The archive is checked whole before anything is touched: a gzip stream read to its end (a cut or
damaged file), only the members a backup holds, each file's size and SHA-256 against the
manifest, and the game log through SQLite's integrity check with its games and events counted.
Any failure is one line and exit status 2, with nothing changed on disk.

Then the table log's lock is taken, the very lock every running Table holds
(``<data dir>/table.sqlite.lock``): while a ``companion serve`` or ``demo`` has the log open the
restore refuses, and a service started during the restore refuses to start. Each file it
replaces is renamed aside (``….before-restore-YYYYmmdd-HHMMSS``), the log together with its WAL,
its second copy and its journal: left in place, the second copy's rows would be put back into
the restored log at the next start. The backup's files are written beside their places first
(a full card stops the restore there, with nothing changed), then each old file is renamed aside
and the new one renamed in; a rename that fails puts back what was renamed.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import tarfile
import tempfile
import zlib
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.cli.backup import (
    FORMAT,
    LOG,
    MEMBERS,
    TOP,
    VERSION,
    WHAT,
    BackupError,
    describe,
    fsync_dir,
    integrity,
    log_summary,
    own_like,
    places,
)

MANIFEST = "manifest.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="an archive written by companion backup")
    parser.add_argument("--data-dir", help="where table.sqlite goes (default from config: ./data)")
    parser.add_argument("--config", help="companion.toml, replaced by the backup's (default: ./companion.toml "
                                         "if present)")
    parser.add_argument("--check", action="store_true", help="only check the archive and say what it holds")


def unpack(archive: Path, staging: Path) -> dict[str, Any]:
    """Every file of the archive into ``staging``, checked; the manifest. BackupError says why
    the archive cannot be restored."""
    with open(archive, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            raise BackupError("it is not a gzip archive (a backup is a .tar.gz written by companion backup)")
    try:  # the whole stream first: tar stops reading at its end marker, before a cut-off tail
        with gzip.open(archive, "rb") as g:
            while g.read(1 << 20):
                pass
    except EOFError:
        raise BackupError("it is cut short (the file is truncated)") from None
    except (OSError, zlib.error) as err:
        raise BackupError(f"it is damaged ({err})") from None
    found: set[str] = set()
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                if member.isdir() and member.name.rstrip("/") == TOP:
                    continue
                name = member.name.removeprefix(f"{TOP}/")
                # read by known names only, never extracted as named: no path leaves the staging folder
                if name not in (MANIFEST, *MEMBERS.values()) or not member.name.startswith(f"{TOP}/"):
                    raise BackupError(f"it holds {member.name!r}, which no companion backup holds")
                if not member.isfile() or name in found:
                    raise BackupError(f"its {member.name!r} is not a single plain file")
                source = tar.extractfile(member)
                assert source is not None
                with open(staging / name, "wb") as out:
                    shutil.copyfileobj(source, out)
                found.add(name)
    except (tarfile.TarError, EOFError, zlib.error) as err:
        raise BackupError(f"it is not a tar archive a backup would be ({err})") from None
    if MANIFEST not in found:
        raise BackupError(f"it holds no {TOP}/{MANIFEST}, so it is not a companion backup")
    try:
        manifest = json.loads((staging / MANIFEST).read_text(encoding="utf-8"))
        _check_files(manifest, found - {MANIFEST}, staging)
        check_log(staging / LOG, manifest["log"])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BackupError(f"its {MANIFEST} is not the manifest of a companion backup") from None
    return manifest


def _check_files(manifest: dict[str, Any], found: set[str], staging: Path) -> None:
    if manifest["format"] != FORMAT:
        raise ValueError(manifest["format"])
    if int(manifest["version"]) > VERSION:
        raise BackupError(f"it was written by a newer companion ({manifest.get('companion')}, backup version "
                          f"{manifest['version']}; this one reads {VERSION}): update the companion first")
    listed = set(manifest["files"])
    if LOG not in listed:
        raise BackupError(f"its {MANIFEST} lists no game log ({LOG})")
    if listed - found:
        raise BackupError(f"it lacks {', '.join(sorted(listed - found))}, which its {MANIFEST} lists")
    if found - listed:
        raise BackupError(f"it holds {', '.join(sorted(found - listed))}, which its {MANIFEST} does not list")
    for name in sorted(found):
        meta = manifest["files"][name]
        if meta["role"] not in MEMBERS or MEMBERS[meta["role"]] != name:
            raise ValueError(name)
        path = staging / name
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        if path.stat().st_size != int(meta["bytes"]) or digest.hexdigest() != meta["sha256"]:
            raise BackupError(f"its {name} is not the file the backup wrote (its size or SHA-256 differs "
                              "from the manifest's)")


def check_log(path: Path, listed: dict[str, Any]) -> None:
    """The archived log: sound by SQLite's integrity check, a log this companion can write, and
    holding the games and events its manifest counts."""
    from companion.table.log import FORMAT as LOG_FORMAT

    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            problem = integrity(db)
            if problem is not None:
                raise BackupError(f"its game log fails SQLite's integrity check ({problem})")
            try:
                summary = log_summary(db)
            except BackupError as err:
                raise BackupError(f"its {LOG}: {err}") from None
        finally:
            db.close()
    except sqlite3.Error as err:
        raise BackupError(f"its game log cannot be read by SQLite ({err})") from None
    if summary["format"] > LOG_FORMAT:
        raise BackupError(f"its game log was written by a newer companion (log format {summary['format']}; this one "
                          f"knows {LOG_FORMAT}): update the companion first")
    counted = {k: summary[k] for k in ("games", "events", "events_by_game")}
    try:
        expected = {k: listed[k] for k in counted}
    except (KeyError, TypeError):
        raise BackupError(f"its {MANIFEST} does not count the log's games and events") from None
    if counted != expected:
        raise BackupError(f"its game log holds {summary['games']} games and {summary['events']} events, not the "
                          f"{listed['games']} and {listed['events']} its manifest counts")


def aside_names(dest: Path, role: str, suffix: str) -> list[tuple[Path, Path]]:
    """What restoring ``dest`` replaces, each with the name it is kept under."""
    if role != "log":
        return [(dest, dest.with_name(dest.name + suffix))]
    from companion.table.log import copy_paths

    kept = dest.with_name(dest.name + suffix)
    # The WAL goes with its log, under the name SQLite pairs with the kept file (it may hold rows
    # of a service that was killed), and before it: left behind, SQLite would replay its frames
    # into the restored log. The second copy and its journal would be merged into it at start.
    wal = [(Path(f"{dest}{end}"), Path(f"{kept}{end}")) for end in ("-wal", "-shm", "-journal")]
    return wal + [(p, p.with_name(p.name + suffix)) for p in copy_paths(dest)] + [(dest, kept)]


def put_in_place(manifest: dict[str, Any], staging: Path,
                 where: dict[str, Path | None]) -> tuple[list[Path], list[str]]:
    """The checked files of ``staging`` at their places, what they replace kept aside; the kept
    files and notes on what was not put in place. BackupError (nothing changed) if it cannot."""
    from companion.table.table import TableInUse, _hold  # the lock every running Table holds

    log = where["log"]
    assert log is not None
    notes: list[str] = []
    plan: list[tuple[str, Path, Path]] = []
    for name, meta in manifest["files"].items():
        dest = where[meta["role"]]
        if dest is None:
            notes.append(_not_placed(meta["role"], name))
        else:
            plan.append((meta["role"], staging / name, dest))
    for role in ("table", "colours"):
        dest = where[role]
        if MEMBERS[role] not in manifest["files"] and dest is not None and dest.exists():
            notes.append(f"{dest} was kept as it is: the backup holds no {WHAT[role]}")
    try:
        held = _hold(log)
    except TableInUse:
        holder = _read(Path(f"{log}.lock")) or "?"
        raise BackupError(f"a companion (process {holder}) is using {log}: stop it first (on the Pi: sudo systemctl "
                          "stop companion), then restore; nothing was changed") from None
    except OSError as err:
        raise BackupError(f"cannot use the data directory {log.parent}: {err.strerror or err}; nothing was "
                          "changed") from None
    try:
        own_like(Path(f"{log}.lock"), log.parent)
        return _swap(plan), notes
    finally:
        os.close(held)


def _swap(plan: list[tuple[str, Path, Path]]) -> list[Path]:
    temps: list[tuple[Path, Path]] = []
    try:
        for _, staged, dest in plan:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.restore-{os.getpid()}")
            temps.append((tmp, dest))
            shutil.copyfile(staged, tmp)
            with open(tmp, "rb") as f:
                os.fsync(f.fileno())
            os.chmod(tmp, dest.stat().st_mode & 0o777 if dest.exists() else 0o644)
            own_like(tmp, dest if dest.exists() else dest.parent)
    except OSError as err:
        _remove(t for t, _ in temps)
        raise BackupError(f"cannot write {err.filename or temps[-1][0]}: {err.strerror or err}; nothing was "
                          "changed") from None
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    suffix, n = f".before-restore-{stamp}", 1
    # never over files kept by an earlier restore: a Pi without a clock battery boots to one time
    while any(os.path.lexists(kept) for role, _, dest in plan for _, kept in aside_names(dest, role, suffix)):
        n += 1
        suffix = f".before-restore-{stamp}-{n}"
    moved: list[tuple[Path, Path]] = []
    kept_aside: list[Path] = []
    try:
        # file by file, each new one in place right after the old one is put aside: stopped half
        # way, every old file is under its kept name and no place is left empty for longer
        for (role, _, dest), (tmp, _) in zip(plan, temps, strict=True):
            for old, kept in aside_names(dest, role, suffix):
                if os.path.lexists(old):
                    os.rename(old, kept)
                    moved.append((old, kept))
                    kept_aside.append(kept)
            os.rename(tmp, dest)
            moved.append((tmp, dest))
    except OSError as err:
        stuck = [str(b) for a, b in reversed(moved) if not _undo(a, b)]
        _remove(t for t, _ in temps)
        where = f"; these could not be renamed back: {', '.join(stuck)}" if stuck else "; nothing was changed"
        raise BackupError(f"cannot rename {err.filename}: {err.strerror or err}{where}") from None
    for folder in {dest.parent for _, _, dest in plan}:
        fsync_dir(folder)
    return kept_aside


def _undo(old: Path, moved_to: Path) -> bool:
    try:
        os.rename(moved_to, old)
        return True
    except OSError:
        return False


def _remove(paths: Any) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


def _not_placed(role: str, name: str) -> str:
    if role == "config":
        return (f"the backup's {name} was not put in place: no configuration file is in use here (name one with "
                f"--config; tar xzf takes it out: {TOP}/{name})")
    return (f"the backup's {name} was not put in place: [calibration] {role} is \"none\" here (tar xzf takes "
            f"it out: {TOP}/{name})")


def _elsewhere(where: dict[str, Path | None]) -> list[str]:
    """Where the restored configuration puts the files that were restored, when not there: the
    service started with it would not find them."""
    from companion.config import ConfigError

    config = where["config"]
    if config is None:
        return []
    try:
        then = places(str(config), None)
    except ConfigError as err:
        return [f"the restored configuration cannot be read by this companion: {err}"]
    notes = []
    for role in ("log", "table", "colours"):
        now, later = where[role], then[role]
        if now is not None and later is not None and now.resolve() != later.resolve():
            notes.append(f"the restored {config} reads {WHAT[role]} from {later}, not from {now} where it was "
                         "restored: edit it, or restore again with --data-dir")
    return notes


def run(args: argparse.Namespace) -> int:
    from companion.config import ConfigError

    archive = Path(args.file)
    if not archive.is_file():
        print(f"companion: cannot read {archive}: no such file; nothing was changed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="companion-restore-") as staging:
        try:
            manifest = unpack(archive, Path(staging))
        except OSError as err:
            print(f"companion: cannot read {archive}: {err.strerror or err}; nothing was changed", file=sys.stderr)
            return 2
        except BackupError as err:
            print(f"companion: {archive} cannot be restored: {err}; nothing was changed", file=sys.stderr)
            return 2
        made = f"made {manifest.get('created')} on {manifest.get('host')} by companion {manifest.get('companion')}"
        if args.check:
            print(f"{archive}: a sound companion backup {made}: {describe(manifest)}")
            return 0
        try:
            where = places(args.config, args.data_dir)
        except ConfigError as err:
            print(f"companion: {err}; nothing was changed", file=sys.stderr)
            return 2
        try:
            kept, notes = put_in_place(manifest, Path(staging), where)
        except BackupError as err:
            print(f"companion: {err}", file=sys.stderr)
            return 2
    log = where["log"]
    assert log is not None
    print(f"restored {archive} ({made}) into {log.parent}: {describe(manifest)}")
    if kept:
        print("kept what it replaced: " + ", ".join(str(p) for p in kept))
    for note in notes + _elsewhere(where):
        print(f"note: {note}")
    return 0
