"""The event log: append-only SQLite, one row per accepted event.

WAL journal with ``synchronous=FULL``: when :meth:`EventLog.append` returns, the row is on disk
and survives a power cut or a SIGKILL. An undo is itself an appended row (``{"type": "undo"}``),
so nothing is ever rewritten; a game's state is the replay of its rows.

Which game the table is playing is stored too, so that a restart comes back to it: every new game
and every resume appends a row to ``current_game``, and the last row names the current game. A
resume is also a ``{"type": "resume"}`` row in the resumed game's own log (its rev moves on; the
raw export shows when play came back to it). A log written before resuming existed has no
``current_game`` rows: its newest game is the current one, as it always was.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


class NotStored(sqlite3.OperationalError):
    """A change SQLite could not write (disk full, read-only, I/O error): nothing of it was stored."""


class LogUnreadable(sqlite3.DatabaseError):
    """A read SQLite could not do (a damaged page under an old game's rows): nothing changed."""


class UnknownLog(sqlite3.DatabaseError):
    """An SQLite file this companion must not write: a newer companion's log, or not a table log.
    Unlike a damaged file it is not put aside: the companion that wrote it can still read it."""


class EventLog:
    """Games and their events in one SQLite file. Thread-safe (one connection, one lock)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            version = self._check_format()  # before anything is written to the file
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(SCHEMA)
            if version < FORMAT:
                self._db.execute(f"PRAGMA user_version = {FORMAT}")
        except sqlite3.Error:
            self._db.close()  # not a database, a damaged one, or one we must not write: the caller decides
            raise

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

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def new_game(self, event: Mapping[str, Any], source: str | None = None) -> int:
        """Store a new game with its ``new_game`` event as row 1; return the game id."""
        with self._writing():
            cur = self._db.execute("INSERT INTO games (game, created) VALUES (?, ?)",
                                   (str(event.get("game")), now_iso()))
            game_id = int(cur.lastrowid or 0)
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
    def _writing(self) -> Iterator[None]:
        """One write transaction under the lock. If it fails nothing of it is kept: the ROLLBACK is
        only sent while SQLite still has the transaction open (a full disk ends it by itself, and
        the ROLLBACK's own "no transaction is active" then hid why), and a write SQLite refused
        is :class:`NotStored`."""
        with self._lock:
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

    def _make_current(self, game_id: int) -> None:
        self._db.execute("INSERT INTO current_game (game_id, at) VALUES (?, ?)", (game_id, now_iso()))

    def _insert(self, game_id: int, seq: int, event: Mapping[str, Any], source: str | None) -> None:
        body = dict(event)
        if source is not None:
            body.setdefault("source", source)
        body.setdefault("at", now_iso())
        self._db.execute(
            "INSERT INTO events (game_id, seq, type, source, at, body) VALUES (?, ?, ?, ?, ?, ?)",
            (game_id, seq, str(body.get("type")), body.get("source"), body["at"],
             json.dumps(body, ensure_ascii=False, separators=(",", ":"))),
        )

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


def _decode(body: Any) -> Any:
    """A stored row; a body that is not JSON (edited by hand, a damaged disk) comes back as its
    text, which replay then skips as malformed rather than failing the whole game."""
    try:
        return json.loads(body)
    except (TypeError, ValueError):
        return str(body)
