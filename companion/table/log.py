"""The event log: append-only SQLite, one row per accepted event.

WAL journal with ``synchronous=FULL``: when :meth:`EventLog.append` returns, the row is on disk
and survives a power cut or a SIGKILL. An undo is itself an appended row (``{"type": "undo"}``),
so nothing is ever rewritten; a game's state is the replay of its rows.

Which game the table is playing is stored too, so that a restart comes back to it: every new game
and every resume appends a row to ``current_game``, and the last row names the current game. A
resume is also a ``{"type": "resume"}`` row in the resumed game's own log (its rev moves on; the
raw export shows when play came back to it). A log written before resuming existed has no
``current_game`` rows: its newest game is the current one, as it always was.

No acknowledged row may vanish without a word, whatever happens to the files:

- **A second copy.** ``table.copy.sqlite`` beside the log is a copy made with SQLite's backup API
  at quiet moments (:meth:`EventLog.settle`: a game's end, a new game, a resume, shutdown, start,
  and after a write once ``copy_every`` seconds have passed since the last copy), each time with a
  checkpoint, so ``table.sqlite`` itself holds the games too. Every write made since that copy is
  also appended to ``table.copy.jsonl`` (one line per transaction, flushed to disk) before it is
  acknowledged; the journal is emptied when the next copy is made.
- **Recovery at start** (:meth:`EventLog.recover`): every row of the copy and the journal that the
  log lacks (a damaged or cut WAL, a WAL deleted, a log cut to nothing and put aside) is put back,
  and what was put back or is still missing (a gap in a game's rows) is reported, by game.
- **Files that disappear while serving** (:meth:`EventLog.check_files`, before every write and by
  the table's watch): the log, or its whole data directory, deleted under the running service is
  written again from the open connection, so an acknowledged row is never only in a deleted file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    game TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    source TEXT,
    at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS current_game (
    n INTEGER PRIMARY KEY,
    game_id INTEGER NOT NULL REFERENCES games(id),
    at TEXT NOT NULL
);
"""

FORMAT = 1  # PRAGMA user_version of the log SCHEMA describes; a companion that changes it raises it
COLUMNS = {"games": ("id", "game", "created"), "events": ("game_id", "seq", "type", "source", "at", "body"),
           "current_game": ("n", "game_id", "at")}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


MAX_ID = 2**63 - 1  # SQLite's largest integer
COPY_SECONDS = 300.0  # during play, a new second copy once this long has passed since the last one


def copy_paths(path: Path) -> tuple[Path, Path]:
    """The second copy of the log ``path`` and the journal of the writes made since it."""
    return path.with_name(f"{path.stem}.copy.sqlite"), path.with_name(f"{path.stem}.copy.jsonl")


@dataclass
class Recovery:
    """What :meth:`EventLog.recover` found: rows put back from the copy, by game; rows still
    missing (gaps in a game's sequence), by game; and why a copy could not be used."""

    restored: dict[int, int] = field(default_factory=dict)
    lost: dict[int, int] = field(default_factory=dict)
    games_restored: int = 0
    copy_unusable: str | None = None
    journal_unreadable: int = 0
    salvaged: int = 0  # rows read back from a damaged log put aside
    unreadable_games: list[int] = field(default_factory=list)  # games no file could give back


class NotStored(sqlite3.OperationalError):
    """A change SQLite could not write (disk full, read-only, I/O error): nothing of it was stored."""


class LogUnreadable(sqlite3.DatabaseError):
    """A read SQLite could not do (a damaged page under an old game's rows): nothing changed."""


class UnknownLog(sqlite3.DatabaseError):
    """An SQLite file this companion must not write: a newer companion's log, or not a table log.
    Unlike a damaged file it is not put aside: the companion that wrote it can still read it."""


class EventLog:
    """Games and their events in one SQLite file. Thread-safe (one connection, one lock)."""

    def __init__(self, path: str | Path, keep_copy: bool = True):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.copy_path, self.journal_path = copy_paths(self.path) if keep_copy else (None, None)
        self.copy_every = COPY_SECONDS
        self._copied_at = time.monotonic()
        self._changed = False  # rows written since the last copy
        self._journal = -1  # the journal's file descriptor, opened at the first write
        self._tx: dict[str, list[Any]] = {}  # the rows of the transaction being written, for the journal
        self.repairs: list[str] = []  # what check_files had to do, for the table's notices
        self.on_repair: Callable[[str], None] | None = None
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            version = self._check_format()  # before anything is written to the file
            self._setup(self._db)
            self._db.executescript(SCHEMA)
            if version < FORMAT:
                self._db.execute(f"PRAGMA user_version = {FORMAT}")
        except sqlite3.Error:
            self._db.close()  # not a database, a damaged one, or one we must not write: the caller decides
            raise
        self._ident = _ident(self.path)
        self.read_only: str | None = None

    @classmethod
    def open_read_only(cls, path: str | Path, why: str) -> EventLog:
        """The log as it is on disk, held in memory, for a service that cannot write (a full
        card at start): every read works, every write is :class:`NotStored`. The rows of the
        copy and the journal are read too (:meth:`recover`), never written back."""
        self = cls.__new__(cls)
        self.path = Path(path)
        self._lock = threading.Lock()
        self.copy_path, self.journal_path = copy_paths(self.path)
        self.copy_every, self._copied_at, self._changed = COPY_SECONDS, time.monotonic(), False
        self._journal, self._tx, self.repairs, self.on_repair = -1, {}, [], None
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        for uri in (f"file:{self.path}?mode=ro", f"file:{self.path}?immutable=1"):  # immutable: no -shm needed
            try:
                source = sqlite3.connect(uri, uri=True)
                try:
                    source.backup(self._db)
                finally:
                    source.close()
                break
            except sqlite3.Error:
                continue
        self._db.executescript(SCHEMA)
        self._ident = (0, 0)
        self.read_only = why
        return self

    @staticmethod
    def _setup(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA busy_timeout=5000")

    def _check_format(self) -> int:
        """The file's ``user_version``; :class:`UnknownLog` if it is a newer companion's log or its
        tables are not the ones this code writes. A log from before the format was numbered is 0."""
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version > FORMAT:
            raise UnknownLog(f"it was written by a newer companion (log format {version}; this one knows "
                             f"{FORMAT}): update the companion, or start with another data directory; the file "
                             "was left as it is")
        for table, columns in COLUMNS.items():
            found = tuple(row[1] for row in self._db.execute(f"PRAGMA table_info({table})"))
            if found and found != columns:
                raise UnknownLog(f"it is not a companion table log this version can write (its table '{table}' "
                                 f"has the columns {', '.join(found)}): start with another data directory; the "
                                 "file was left as it is")
        return int(version)

    def close(self, settle: bool = True) -> None:
        """Checkpoint and copy (a quiet moment), then close. ``settle=False``: a log that failed
        its check is closed as it is, never copied over a good copy."""
        with self._lock:
            if settle:
                with contextlib.suppress(Exception):
                    self._settle()
            self._db.close()
            if self._journal >= 0:
                os.close(self._journal)
                self._journal = -1

    def integrity(self) -> str | None:
        """SQLite's quick check of the whole file: None when it is sound, else what is wrong."""
        with self._lock:
            rows = self._db.execute("PRAGMA quick_check").fetchall()
        found = [str(r[0]) for r in rows]
        return None if found == ["ok"] else "; ".join(found[:3])

    # -- the second copy ----------------------------------------------------------------------

    def settle(self) -> None:
        """A quiet moment (a game's end, a new game, a resume): checkpoint the WAL into the log
        and make the second copy. A copy that cannot be made (a full card) is logged; the rows
        stay in the journal until the next copy succeeds."""
        with self._lock:
            self._settle()

    def _settle(self) -> None:
        if self.read_only is not None:
            return
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as err:
            log.warning("table log: checkpoint failed: %s", err)
        if self.copy_path is None:
            return
        tmp = self.copy_path.with_name(f".{self.copy_path.name}.tmp")
        try:
            tmp.unlink(missing_ok=True)
            target = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                self._db.backup(target)
                target.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
                # the backup copies pages as they are: a page the card damaged would replace a good copy
                check = [str(r[0]) for r in target.execute("PRAGMA quick_check").fetchall()]
            finally:
                target.close()
            if check != ["ok"]:
                raise sqlite3.DatabaseError(f"the log fails SQLite's check ({'; '.join(check[:3])}), the last good "
                                            "copy is kept")
            _fsync(tmp)
            os.replace(tmp, self.copy_path)
            _fsync_dir(self.copy_path.parent)
            fd = self._journal_fd()
            os.ftruncate(fd, 0)
            os.fsync(fd)
            self._copied_at = time.monotonic()
            self._changed = False
        except (OSError, sqlite3.Error) as err:
            log.warning("table log: the second copy %s could not be made (%s); the rows since the last copy "
                        "stay in %s", self.copy_path.name, err, self.journal_path)
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    Path(f"{tmp}{suffix}").unlink(missing_ok=True)

    def _journal_fd(self) -> int:
        if self._journal < 0:
            assert self.journal_path is not None
            fd = os.open(self.journal_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.write(fd, b"\n")  # a line cut short by a crash was never acknowledged: end it
            self._journal = fd
        return self._journal

    def _journal_append(self) -> None:
        """The transaction just committed, as one line of the journal, on disk before the write
        is acknowledged. A journal that cannot be written (a full card) does not undo the write:
        the row is in the log; it is logged, and the next copy covers it."""
        if self.journal_path is None or not self._tx:
            return
        line = json.dumps(self._tx, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            fd = self._journal_fd()
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        except OSError as err:
            log.error("table log: the journal %s could not be written (%s)", self.journal_path.name, err)

    def recover(self, salvage: Path | None = None) -> Recovery:
        """Put back every row of the second copy and of the journal that the log lacks (and,
        first, every row still readable in ``salvage``, a damaged log put aside); report what was
        put back and what is still missing (gaps, games no file could give back), by game."""
        found = Recovery()
        tables: dict[str, list[tuple[Any, ...]]] = {"games": [], "events": [], "current_game": []}
        unreadable: set[int] = set()
        if salvage is not None:
            unreadable = _salvage(salvage, tables)
            found.salvaged = len(tables["events"])
        if self.copy_path is not None and self.copy_path.exists():
            try:
                copy = sqlite3.connect(f"file:{self.copy_path}?mode=ro", uri=True)
                try:
                    check = [r[0] for r in copy.execute("PRAGMA quick_check").fetchall()]
                    if check != ["ok"]:
                        raise sqlite3.DatabaseError("; ".join(map(str, check[:3])))
                    for table, columns in COLUMNS.items():
                        tables[table] += copy.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
                finally:
                    copy.close()
            except sqlite3.Error as err:
                found.copy_unusable = f"{self.copy_path.name}: {err}"
        if self.journal_path is not None and self.journal_path.exists():
            lines = self.journal_path.read_bytes().split(b"\n")
            for n, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    written = json.loads(line)
                    for table in tables:
                        tables[table] += [tuple(r) for r in written.get(table, [])]
                except (ValueError, TypeError, AttributeError):
                    if n < len(lines) - 1:  # the last line, cut short, was never acknowledged
                        found.journal_unreadable += 1
        with self._writing(journal=False):
            db = self._db
            have = set(db.execute("SELECT game_id, seq FROM events").fetchall())
            games = {r[0] for r in db.execute("SELECT id FROM games").fetchall()}
            for row in tables["games"]:
                if row[0] not in games:
                    db.execute("INSERT OR IGNORE INTO games (id, game, created) VALUES (?, ?, ?)", row)
                    games.add(row[0])
                    found.games_restored += 1
            for i, row in enumerate(tables["events"]):
                if (row[0], row[1]) not in have:
                    db.execute("INSERT OR IGNORE INTO events (game_id, seq, type, source, at, body) "
                               "VALUES (?, ?, ?, ?, ?, ?)", row)
                    have.add((row[0], row[1]))
                    if i >= found.salvaged:  # rows read back from a damaged log are not news
                        found.restored[row[0]] = found.restored.get(row[0], 0) + 1
            for row in tables["current_game"]:
                db.execute("INSERT OR IGNORE INTO current_game (n, game_id, at) VALUES (?, ?, ?)", row)
            # a game whose row in `games` no file gave back (a damaged page of that table) is
            # listed again from its events: its name from its new_game, its time from its first row
            found.games_restored += db.execute(
                "INSERT INTO games (id, game, created) SELECT e.game_id, COALESCE((SELECT json_extract(f.body, "
                "'$.game') FROM events f WHERE f.game_id = e.game_id AND f.seq = 1 AND json_valid(f.body)), '?'), "
                "MIN(e.at) FROM events e WHERE e.game_id NOT IN (SELECT id FROM games) GROUP BY e.game_id").rowcount
            gaps = db.execute("SELECT game_id, MAX(seq) - COUNT(*) FROM events GROUP BY game_id "
                              "HAVING MAX(seq) > COUNT(*)").fetchall()
            found.unreadable_games = sorted(g for g in unreadable if (g, 1) not in have)
        found.lost = {int(g): int(n) for g, n in gaps}
        return found

    # -- files that disappear -------------------------------------------------------------------

    def check_files(self) -> None:
        """The log (or its whole data directory) deleted while the service runs: write it again
        from the open connection, which still holds every row, before anything more is
        acknowledged. :class:`NotStored` if it cannot be written again, or if another file now
        stands at its place."""
        with self._lock:
            if self.read_only is None:
                self._check_files()

    def _check_files(self) -> None:
        wal = Path(f"{self.path}-wal")
        try:
            ident = _ident(self.path)
            if ident != self._ident:
                raise NotStored(f"this change was not recorded: {self.path} was replaced by another file while the "
                                "table was running; restart the companion to use it")
            if wal.exists():
                return
            why = f"the table log's WAL ({wal.name}) was deleted while the table was running"
        except FileNotFoundError:
            gone = not self.path.parent.exists()
            why = (f"the data directory {self.path.parent} was deleted while the table was running" if gone else
                   f"the table log {self.path} was deleted while the table was running")
        self._rewrite(why)

    def _rewrite(self, why: str) -> None:
        tmp = self.path.with_name(f".{self.path.name}.rewrite")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.unlink(missing_ok=True)
            target = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                self._db.backup(target)  # the open connection still reads every row
            finally:
                target.close()
            _fsync(tmp)
        except (OSError, sqlite3.Error) as err:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            raise NotStored(f"this change was not recorded: {why}, and it could not be written again ({err}); "
                            "the game is as it was, but nothing can be stored until the companion is restarted "
                            "with a data directory it can write") from err
        # closed first: closing the last connection removes its WAL by name, the new file's own
        self._db.close()
        try:
            os.replace(tmp, self.path)
            for suffix in ("-wal", "-shm"):  # an old WAL there would be replayed over the new file
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            _fsync_dir(self.path.parent)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._setup(self._db)
        except (OSError, sqlite3.Error) as err:
            with contextlib.suppress(sqlite3.Error):  # keep reading from whichever file holds the rows
                self._db = sqlite3.connect(str(self.path if self.path.exists() else tmp), check_same_thread=False,
                                           isolation_level=None)
            raise NotStored(f"this change was not recorded: {why}, and it could not be written again ({err})") from err
        self._ident = _ident(self.path)
        if self._journal >= 0:
            os.close(self._journal)
            self._journal = -1
        self._settle()  # a new copy and journal beside the new file
        message = f"{why}; it was written again from the running service's memory: nothing was lost"
        log.error("TABLE LOG: %s", message)
        self.repairs.append(message)
        if self.on_repair is not None:
            self.on_repair(message)

    def new_game(self, event: Mapping[str, Any], source: str | None = None) -> int:
        """Store a new game with its ``new_game`` event as row 1; return the game id."""
        with self._writing():
            created = now_iso()
            cur = self._db.execute("INSERT INTO games (game, created) VALUES (?, ?)", (str(event.get("game")), created))
            game_id = int(cur.lastrowid or 0)
            self._tx.setdefault("games", []).append([game_id, str(event.get("game")), created])
            self._insert(game_id, 1, event, source)
            self._make_current(game_id)
        return game_id

    def append(self, game_id: int, event: Mapping[str, Any], source: str | None = None) -> int:
        """Append one event; return its sequence number. Durable when this returns."""
        with self._writing():
            (last,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id = ?",
                                       (game_id,)).fetchone()
            seq = last + 1
            self._insert(game_id, seq, event, source)
        return seq

    def resume(self, game_id: int, source: str | None = None) -> int:
        """Make a stored game the current one again: a ``resume`` row in its log and a
        ``current_game`` row, in one transaction; return the resume row's sequence number."""
        with self._writing():
            (last,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id = ?",
                                       (game_id,)).fetchone()
            if not last:
                raise KeyError(game_id)
            self._insert(game_id, last + 1, {"type": "resume"}, source)
            self._make_current(game_id)
        return last + 1

    @contextlib.contextmanager
    def _writing(self, journal: bool = True) -> Iterator[None]:
        """One write transaction under the lock. If it fails nothing of it is kept: the ROLLBACK is
        only sent while SQLite still has the transaction open (a full disk ends it by itself, and
        the ROLLBACK's own "no transaction is active" then hid why), and a write SQLite refused
        is :class:`NotStored`. A committed transaction goes to the journal before this returns
        (``journal``), and a second copy is made when the last one is ``copy_every`` old."""
        with self._lock:
            if journal and self.read_only is not None:
                raise NotStored(f"this change was not recorded: the table log cannot be written ({self.read_only}); "
                                "the game can be watched but not changed. Free space on the Pi's card and restart "
                                "the companion")
            if journal:
                self._check_files()
            self._tx = {}
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield
                self._db.execute("COMMIT")
            except BaseException as err:
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                if isinstance(err, sqlite3.Error) and not isinstance(err, NotStored):
                    raise NotStored(f"this change was not recorded: the table log {self.path.name} could not be "
                                    f"written ({err}); the game is as it was. Free space on the Pi's card (or "
                                    "make its data directory writable) and send it again") from err
                raise
            if journal:
                self._journal_append()
                self._changed = True
                if time.monotonic() - self._copied_at >= self.copy_every:
                    self._settle()

    def _make_current(self, game_id: int) -> None:
        at = now_iso()
        cur = self._db.execute("INSERT INTO current_game (game_id, at) VALUES (?, ?)", (game_id, at))
        self._tx.setdefault("current_game", []).append([cur.lastrowid, game_id, at])

    def _insert(self, game_id: int, seq: int, event: Mapping[str, Any], source: str | None) -> None:
        body = dict(event)
        if source is not None:
            body.setdefault("source", source)
        body.setdefault("at", now_iso())
        row = (game_id, seq, str(body.get("type")), body.get("source"), body["at"],
               json.dumps(body, ensure_ascii=False, separators=(",", ":")))
        self._db.execute("INSERT INTO events (game_id, seq, type, source, at, body) VALUES (?, ?, ?, ?, ?, ?)", row)
        self._tx.setdefault("events", []).append(list(row))

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock; what SQLite cannot read is :class:`LogUnreadable`."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as err:
                if isinstance(err, LogUnreadable | NotStored):
                    raise
                unreadable = LogUnreadable(str(err))
                # the table tells a damaged file (put aside) from a passing fault by SQLite's code
                unreadable.sqlite_errorcode = getattr(err, "sqlite_errorcode", None)
                unreadable.sqlite_errorname = getattr(err, "sqlite_errorname", None)
                raise unreadable from err

    def events(self, game_id: int) -> list[dict[str, Any]]:
        """Every stored row of a game, undo rows included, in order ([] for no such game, also
        for an id SQLite cannot hold: a phone's address may name any number)."""
        if not 0 <= game_id <= MAX_ID:
            return []
        with self._reading() as db:
            rows = db.execute("SELECT body FROM events WHERE game_id = ? ORDER BY seq",
                                    (game_id,)).fetchall()
        return [_decode(body) for (body,) in rows]

    def latest_game(self) -> int | None:
        """The game the table was playing last: the last one started or resumed (the newest game
        in a log written before resuming existed). None in an empty log."""
        with self._reading() as db:
            row = db.execute("SELECT game_id FROM current_game ORDER BY n DESC LIMIT 1").fetchone()
            if row is None:
                row = db.execute("SELECT MAX(id) FROM games").fetchone()
        return row[0] if row and row[0] is not None else None

    def games(self) -> list[dict[str, Any]]:
        with self._reading() as db:
            rows = db.execute(
                "SELECT g.id, g.game, g.created, COUNT(e.seq), MAX(e.at) FROM games g "
                "LEFT JOIN events e ON e.game_id = g.id GROUP BY g.id ORDER BY g.id DESC").fetchall()
        return [{"id": r[0], "game": r[1], "created": r[2], "events": r[3], "updated": r[4]} for r in rows]


def _salvage(path: Path, tables: dict[str, list[tuple[Any, ...]]]) -> set[int]:
    """Every row still readable in a damaged log, game by game, into ``tables``; the ids of the
    games whose rows could not be read."""
    unreadable: set[int] = set()
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return unreadable
    try:
        for table in ("games", "current_game"):
            with contextlib.suppress(sqlite3.Error):
                tables[table] += db.execute(f"SELECT {', '.join(COLUMNS[table])} FROM {table}").fetchall()
        ids = {int(r[0]) for r in tables["games"]} | {int(r[1]) for r in tables["current_game"]}
        with contextlib.suppress(sqlite3.Error):
            ids |= {int(r[0]) for r in db.execute("SELECT DISTINCT game_id FROM events")}
        for game_id in sorted(ids):
            try:
                tables["events"] += db.execute(f"SELECT {', '.join(COLUMNS['events'])} FROM events WHERE game_id = ? "
                                               "ORDER BY seq", (game_id,)).fetchall()
            except sqlite3.Error:
                unreadable.add(game_id)
    except sqlite3.Error:
        pass
    finally:
        db.close()
    return unreadable


def _ident(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be synced
        _fsync(path)


def _decode(body: Any) -> Any:
    """A stored row; a body that is not JSON (edited by hand, a damaged disk) comes back as its
    text, which replay then skips as malformed rather than failing the whole game."""
    try:
        return json.loads(body)
    except (TypeError, ValueError):
        return str(body)
