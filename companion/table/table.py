"""The running game: the event log, apply/undo, pending proposals, and subscribers.

Every change goes through :class:`Table`: it checks the event with the rule engine first and
stores it only when accepted, so a refused event leaves no trace but the returned reason. The
state is always the replay of the stored log (``Table(path)`` after a crash replays the last
game). Subscribers are called with the new state after every change, from the changing thread.

Proposals are events the camera (or anything else) suggests; they wait in memory until
confirmed (button, phone tap, or the demo's delay) or rejected. Confirming applies them like any
other event, so the rules still decide.

``rev`` (``"<game id>-<stored rows>"``) names what a phone last saw: every stored row (event or
undo) and every new game gives a new one, and it never comes back. A change that names the rev
it was made on (``expect=``) is refused with ``STALE`` when it would do twice what was done once:
an undo or a new game made on an older rev, an event already stored since that rev (a double
tap), anything made on another game. Other events made on an older rev apply (after a Twenty One
roll every player enters at once). Without ``expect`` a change applies to whatever is current
(the camera, the button).

Resuming (:meth:`Table.resume`) makes an unfinished game of the log the current one again, as
it was left: its rows are replayed, a ``resume`` row is appended to its log (so its rev moves on
and never repeats one a phone saw before it was left), the log records it as the current game
(a restart comes back to it), proposals pending for the game that was left are dropped, and
subscribers get the resumed game's state. Events from then on go to the resumed game's log.

Restoring never refuses to start: a stored row the rules now refuse is skipped, as ``companion
replay`` skips a refused line, and listed in the state's ``rejected``; a database file that is
not SQLite, or that fails SQLite's check at start, is renamed aside and a fresh one started; rows
of the log's second copy that the log lacks are put back (``companion.table.log``); all of this is
logged loudly and kept in :attr:`Table.notices`. What a player must see (rows put back, rows lost
with their game, a log put aside or rewritten, a history that cannot be read) is also in
:attr:`Table.alerts` and in the state's ``alerts``, which every page shows.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import fcntl
import itertools
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from companion.games.base import GAME_OVER, EventError, Game, RuleError, is_json_type
from companion.table import stats
from companion.table.log import EventLog, NotStored, Recovery

Subscriber = Callable[[dict[str, Any]], None]

log = logging.getLogger(__name__)

NO_GAME = "NO_GAME"
NO_SUCH_PROPOSAL = "NO_SUCH_PROPOSAL"
STALE = "STALE"
GAME_IN_PROGRESS = "GAME_IN_PROGRESS"
NO_SUCH_GAME = "NO_SUCH_GAME"
CANNOT_RESUME = "CANNOT_RESUME"
WATCH_SECONDS = 2.0  # how often the table checks that its log's files are still there


@dataclass
class Proposal:
    id: int
    event: dict[str, Any]
    source: str
    evidence: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "event": self.event, "source": self.source,
                "evidence": self.evidence, "created": self.created}


def restore(rows: list[Any]) -> tuple[Game, list[dict[str, Any]]]:
    """A game rebuilt from its stored rows (undo rows take back the last accepted event), and
    the rows the engine refused, skipped as ``companion replay`` skips a refused line:
    ``{"line", "code", "message"}`` with the row's 1-based number. Only a refused first row
    (the ``new_game``) raises (RuleError/EventError): then there is no game to restore. A
    ``resume`` row only says that play came back to this game: it changes nothing."""
    if not rows or not isinstance(rows[0], Mapping):
        raise EventError("the game's first stored row is not a new_game event")
    game = Game.start(rows[0])
    rejected: list[dict[str, Any]] = []
    for line, row in enumerate(rows[1:], start=2):
        try:
            if not isinstance(row, Mapping):
                raise EventError("the stored row is not a JSON object")
            game.play(row)
        except RuleError as err:
            rejected.append({"line": line, "code": err.code, "message": err.message})
        except EventError as err:
            rejected.append({"line": line, "code": "BAD_EVENT", "message": str(err)})
    return game, rejected


def replay_rows(rows: list[dict[str, Any]]) -> Game:
    """A game rebuilt from its stored rows; rows the engine refuses are skipped (:func:`restore`)."""
    return restore(rows)[0]


class Table:
    """The game at this table. Thread-safe; every method that changes something is atomic."""

    def __init__(self, path: str | Path):
        self._lock = threading.RLock()
        self._subscribers: list[Subscriber] = []
        self._pending: dict[int, Proposal] = {}
        # proposal ids never repeat those of a run before (a phone still showing proposal 1 after a
        # restart confirmed the new run's proposal 1, another event); below 2**53 for JavaScript
        self._ids = itertools.count(secrets.randbelow(2**40) + 1)
        self.game_id: int | None = None
        self.game: Game | None = None
        self._stored: list[dict[str, Any]] = []  # the current game's stored rows, plain (duplicate taps)
        self.rejected: list[dict[str, Any]] = []  # stored rows the engine refused at restore
        self.notices: list[str] = []  # what restoring had to do, for the log and /api/health
        self.alerts: list[dict[str, Any]] = []  # what every page shows: {"code", "message", ...}
        self.version = 0  # bumps with every change, for clients that poll
        self._summaries: dict[int, tuple[int, dict[str, Any]]] = {}  # game id -> (rows, summary): history
        self._held = _hold(Path(path))
        try:
            self.log, latest, rows = self._open(Path(path))
        except BaseException:
            os.close(self._held)
            raise
        self.log.on_repair = self._repaired
        if latest is not None:
            self._restore(latest, rows)
        self._watching = threading.Event()
        threading.Thread(target=self._watch, name="table-log-watch", daemon=True).start()

    def alert(self, code: str, message: str, **fields: Any) -> None:
        """A notice every page shows (and /api/health lists): ``code`` names it for the pages'
        languages, ``fields`` fill its sentence (``game_id``, ``events``, ``file``)."""
        self.notices.append(message)
        self.alerts.append({"code": code, "message": message, **fields})
        self.version += 1

    def tell(self, code: str, message: str, **fields: Any) -> None:
        """An alert found while serving (a page of the log that cannot be read): once per code,
        and every open page is told at once."""
        with self._lock:
            if any(a["code"] == code for a in self.alerts):
                return
            self.alert(code, message, **fields)
            self._changed()

    def _open(self, path: Path) -> tuple[EventLog, int | None, list[Any]]:
        """The log and its latest game's rows. A file that is not an SQLite database, or one that
        fails SQLite's check, is renamed aside (``table.sqlite.corrupt-<time>``) and a fresh log
        started: the service must come up at the table, and the bad file is kept for a person to
        look at. Rows of the second copy that the log lacks are then put back, and what was put
        back or lost is said, by game."""
        aside: str | None = None
        try:
            event_log = EventLog(path)
        except sqlite3.DatabaseError as err:
            if _cannot_write(err) and path.exists():
                return self._read_only(path, err)
            if not _damaged(err):
                raise
            event_log, aside = self._fresh(path, err)
        try:
            problem = event_log.integrity()
            if problem is not None:
                event_log.close(settle=False)
                event_log, aside = self._fresh(path, sqlite3.DatabaseError(f"SQLite's check: {problem}"))
            return self._recovered(event_log, aside)
        except sqlite3.DatabaseError as err:
            event_log.close(settle=False)
            if not _damaged(err) or aside is not None:
                raise
            event_log, aside = self._fresh(path, err)
            return self._recovered(event_log, aside)

    def _read_only(self, path: Path, err: sqlite3.Error) -> tuple[EventLog, int | None, list[Any]]:
        """A log that can be read but not opened for writing (a full card: SQLite could not even
        make its shared-memory file): served read-only from memory rather than not at all."""
        event_log = EventLog.open_read_only(path, str(err))
        found = event_log.recover()
        self._tell(found, event_log, None)
        message = (f"the table log {path} cannot be written ({err}): the table is served read-only, every change is "
                   "refused (503 NOT_STORED); free space on the Pi's card and restart the companion")
        log.error("TABLE LOG READ-ONLY: %s", message)
        self.alert("READ_ONLY", message)
        latest = event_log.latest_game()
        return event_log, latest, (event_log.events(latest) if latest is not None else [])

    def _recovered(self, event_log: EventLog, aside: str | None) -> tuple[EventLog, int | None, list[Any]]:
        recovery = event_log.recover(event_log.path.with_name(aside) if aside else None)
        self._tell(recovery, event_log, aside)
        event_log.settle()  # a quiet moment: checkpoint, and a copy of what was found
        latest = event_log.latest_game()
        return event_log, latest, (event_log.events(latest) if latest is not None else [])

    def _tell(self, found: Recovery, event_log: EventLog, aside: str | None) -> None:
        copy = event_log.copy_path.name if event_log.copy_path else "the second copy"
        if aside is not None:
            back = sum(found.restored.values())
            what = (f"a new log was started with the {found.salvaged} events still readable in it and {back} put "
                    f"back from its second copy {copy}" if found.salvaged or back else
                    "a new, empty log was started: earlier games are only in that file")
            message = f"{event_log.path} could not be read ({self._why}); it was renamed to {aside} and {what}"
            log.error("TABLE LOG UNREADABLE: %s", message)
            self.alert("LOG_PUT_ASIDE", message, file=aside, events=found.salvaged + back)
        else:
            for game_id, n in sorted(found.restored.items()):
                message = (f"game {game_id}: {n} recorded events were missing from {event_log.path.name} (its WAL "
                           f"was damaged, cut or deleted) and were put back from the second copy {copy}")
                log.error("TABLE LOG: %s", message)
                self.alert("EVENTS_RESTORED", message, game_id=game_id, events=n)
        for game_id, n in sorted(found.lost.items()):
            message = (f"game {game_id}: {n} recorded events were lost (the table log was damaged and no copy "
                       "holds them); the game goes on from the events that are left")
            log.error("TABLE LOG: %s", message)
            self.alert("EVENTS_LOST", message, game_id=game_id, events=n)
        for game_id in found.unreadable_games:
            message = (f"game {game_id}: its events could not be read from the damaged log ({aside}) and no copy "
                       "holds them")
            log.error("TABLE LOG: %s", message)
            self.alert("GAME_LOST", message, game_id=game_id)
        if found.copy_unusable:
            message = f"the table log's second copy could not be read ({found.copy_unusable}); a new one was made"
            log.warning("%s", message)
            self.notices.append(message)
        if found.journal_unreadable:
            message = (f"{found.journal_unreadable} lines of the journal {event_log.journal_path} could not be read: "
                       "the events they held may be missing")
            log.error("TABLE LOG: %s", message)
            self.alert("JOURNAL_DAMAGED", message, events=found.journal_unreadable)

    def _repaired(self, message: str) -> None:
        """The log was written again after its files were deleted: hold its lock file anew."""
        with contextlib.suppress(OSError):
            held, self._held = self._held, _hold(self.log.path)
            if held >= 0:
                os.close(held)
        self.alert("LOG_REWRITTEN", message, file=str(self.log.path.parent))

    def _watch(self) -> None:
        """Notice a deleted log or data directory within seconds, not only at the next write (a
        service killed before its next write lost every game)."""
        refused = False
        while not self._watching.wait(WATCH_SECONDS):
            try:
                repairs = len(self.log.repairs)
                self.log.check_files()
                refused = False
                if len(self.log.repairs) > repairs:
                    with self._lock:  # never under the log's lock: a write holds ours, then waits for it
                        self._changed()
            except NotStored as err:
                if not refused:
                    log.error("TABLE LOG: %s", err)
                    self.alert("LOG_NOT_WRITABLE", str(err))
                    with self._lock:
                        self._changed()
                refused = True
            except Exception:  # closed under us, or a bug: the next write checks again
                if self._watching.is_set():
                    return
                log.exception("table log watch failed")

    def _fresh(self, path: Path, err: sqlite3.DatabaseError) -> tuple[EventLog, str]:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        aside = path.with_name(f"{path.name}.corrupt-{stamp}")
        # never over one put aside before: a Pi with no clock battery boots to the same saved time,
        # and rename() silently replaced that file (with every earlier game in it)
        n = 1
        while any(Path(f"{aside}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
            n += 1
            aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(path) + suffix)
            if part.exists():
                part.rename(Path(str(aside) + suffix))
        log.error("TABLE LOG UNREADABLE: %s could not be read (%s); renamed to %s", path, err, aside.name)
        self._why = str(err)
        return EventLog(path), aside.name

    def _restore(self, game_id: int, rows: list[Any]) -> None:
        self._stored = _plain_rows(rows)
        try:
            self.game, self.rejected = restore(rows)
            self.game_id = game_id
        except (RuleError, EventError) as err:
            notice = (f"game {game_id} cannot be restored: its first row is refused "
                      f"({getattr(err, 'message', err)}); the table starts with no game")
            log.error("%s", notice)
            self.notices.append(notice)
            return
        for r in self.rejected:
            notice = (f"game {game_id}: stored row {r['line']} skipped, the rules refuse it "
                      f"({r['code']}: {r['message']})")
            log.warning("%s", notice)
            self.notices.append(notice)

    # -- changing the game
    @property
    def rows(self) -> int:
        """Stored rows of the current game (events, undos, resumes): the rev's counter."""
        return len(self._stored)

    @property
    def rev(self) -> str | None:
        """What the table looks like now, as a phone echoes it back (``expect=``)."""
        return None if self.game_id is None else f"{self.game_id}-{self.rows}"

    def start(self, new_game: Mapping[str, Any], source: str | None = None, expect: str | None = None,
              replace: bool = True) -> dict[str, Any]:
        """Start a new game (the previous one stays in the log). RuleError/EventError if the
        ``new_game`` event is refused; then nothing is stored. ``replace=False`` refuses
        (``GAME_IN_PROGRESS``) while the current game is unfinished; ``expect`` see :attr:`rev`."""
        with self._lock:
            event = _clean(new_game)
            self._check_expected(expect, event, strict=True)
            game = Game.start(event)  # a new game the rules refuse is told before leaving is asked
            if not replace:
                self._check_may_leave("a new game would abandon it; confirm to start one anyway")
            self.game_id = self.log.new_game(event, source)
            self.game = game
            self._stored = [_plain(event)]
            self.rejected = []
            self._pending.clear()
            self.log.settle()  # the game before has ended or was left: a quiet moment
            return self._changed(stored=True)

    def resume(self, game_id: int, source: str | None = None, expect: str | None = None,
               replace: bool = True) -> dict[str, Any]:
        """Make an unfinished game of the log the current one again, exactly as it was left
        (events, scores, whose turn); the game that was current stays in the log as it is.
        RuleError ``NO_SUCH_GAME`` (no such game), ``GAME_OVER`` (it is finished: nothing to
        continue), ``CANNOT_RESUME`` (its first row is refused: nothing to restore);
        ``replace=False`` and ``expect`` as in :meth:`start`. Resuming the current game does
        nothing and stores nothing."""
        with self._lock:
            self._check_expected(expect, {}, strict=True)
            if game_id == self.game_id:
                return self.state()
            rows = self.log.events(game_id)
            if not rows:
                raise RuleError(NO_SUCH_GAME, f"there is no game {game_id}")
            try:
                game, rejected = restore(rows)
            except (RuleError, EventError) as err:
                raise RuleError(CANNOT_RESUME, f"game {game_id} cannot be resumed: its first row is refused "
                                               f"({getattr(err, 'message', err)})") from None
            if game.engine.finished(game.state):
                raise RuleError(GAME_OVER, f"game {game_id} ({game.name}) is finished: there is nothing to "
                                           "continue; its log stays in the history")
            if not replace:
                self._check_may_leave(f"resuming game {game_id} would leave it; confirm to resume anyway")
            self.log.resume(game_id, source)
            self.game_id, self.game, self.rejected = game_id, game, rejected
            self._stored = _plain_rows(rows) + [{"type": "resume"}]
            self._pending.clear()  # the camera's proposals were about the game that was left
            self.log.settle()
            return self._changed(stored=True)

    def apply(self, event: Mapping[str, Any], source: str | None = None, expect: str | None = None,
              replace: bool = True) -> dict[str, Any]:
        """Apply one event: stored if accepted, RuleError (nothing stored) if refused. ``expect``:
        the rev this change was made on (STALE if the table has moved on); an event's own
        ``game_id`` field, when given, must name the current game (STALE otherwise) and is not
        stored. ``replace`` as in :meth:`start` for a ``new_game``."""
        with self._lock:
            event = _clean(event)
            if event.get("type") == "new_game":
                return self.start(event, source, expect, replace)
            game = self._need_game()
            self._check_expected(expect, event, strict=event.get("type") == "undo")
            if event.get("type") == "undo":
                return self.undo(source)
            asked = _plain(event)
            event = game.engine.complete(game.state, event)  # e.g. a virtual deck's seed, drawn here
            game.push(event)
            try:
                self.log.append(self.game_id or 0, event, source)
            except BaseException:
                game.pop()
                raise
            # as asked: a second tap of a deal is then STALE, though the table drew its seed
            self._stored.append(asked)
            self._drop_stale_proposals()
            if game.engine.finished(game.state):
                self.log.settle()  # the game's end: checkpoint and second copy
            return self._changed(stored=True)

    def undo(self, source: str | None = None, expect: str | None = None) -> dict[str, Any]:
        """Take back the last accepted event (RuleError NOTHING_TO_UNDO after new_game)."""
        with self._lock:
            game = self._need_game()
            self._check_expected(expect, {}, strict=True)
            undone = game.pop()
            try:
                self.log.append(self.game_id or 0, {"type": "undo"}, source)
            except BaseException:
                game.push(undone)
                raise
            self._stored.append({"type": "undo"})
            return self._changed(stored=True)

    def _check_may_leave(self, why: str) -> None:
        """GAME_IN_PROGRESS if the current game is unfinished: leaving it needs a confirmation."""
        if self.game is not None and not self.game.engine.finished(self.game.state):
            raise RuleError(GAME_IN_PROGRESS, f"game {self.game_id} ({self.game.name}) is not finished: {why} "
                                              "(it stays in the history)")

    def _check_expected(self, expect: str | None, event: dict[str, Any], strict: bool = False) -> None:
        """STALE if the change was made on another game, or its event names another game (the
        event's ``game_id`` is taken out: it addresses the table, it is not part of the event).
        Made on an older rev of this game, an undo or a new game (``strict``) is STALE: ten
        phones pressing undo at once take back one event. An event is STALE only if the same
        event was stored since that rev (a double tap, two phones entering one throw): after a
        Twenty One roll every player enters at once, each from a board one entry behind."""
        if "game_id" in event:
            wanted = event.pop("game_id")
            if not is_json_type(wanted, int):
                raise EventError("'game_id' must be an integer")
            if wanted != self.game_id:
                now = f"game {self.game_id} is being played now" if self.game_id else "no game is being played"
                raise RuleError(STALE, f"this event is for game {wanted}, but {now}: nothing was done")
        if expect is None or expect == self.rev:
            return
        game, _, seen = expect.partition("-")
        # a count of rows is ASCII digits, and fewer than 19 (str.isdigit() also takes "²" and
        # "١", and int() refuses more than 4300 digits: a phone's header made them a 500)
        if strict or game != str(self.game_id) or not (seen.isascii() and seen.isdigit() and len(seen) < 19):
            raise RuleError(STALE, "the game changed after this was sent (another phone, the camera or "
                                   "a second tap): nothing was done; look at the board and try again")
        if _plain(event) in self._stored[int(seen):]:
            raise RuleError(STALE, "this was just recorded (a second tap, or another phone sent it too): "
                                   "it counts once; look at the board")

    # -- proposals
    def propose(self, event: Mapping[str, Any], source: str = "camera",
                evidence: Mapping[str, Any] | None = None) -> Proposal:
        """Queue an event for confirmation. Its shape is checked now; the rules decide at confirm."""
        with self._lock:
            game = self._need_game()
            game.engine.check(event)
            _check_meta(event)
            proposal = Proposal(next(self._ids), dict(event), source, dict(evidence or {}))
            self._pending[proposal.id] = proposal
            self._changed()
            return proposal

    def pending(self) -> list[Proposal]:
        with self._lock:
            return list(self._pending.values())

    def confirm(self, proposal_id: int, source: str | None = None) -> dict[str, Any]:
        """Apply a proposal. If the rules refuse it, it is dropped and the RuleError raised; if it
        cannot be stored (``NotStored``: a full disk) it stays pending. The stored event's
        ``source`` says who confirmed it and ``proposed_by`` who proposed it."""
        with self._lock:
            proposal = self._take(proposal_id)
            try:
                return self.apply({**proposal.event, "proposed_by": proposal.source}, source or proposal.source)
            except RuleError:
                self._changed()
                raise
            except NotStored:  # a full disk: the rules did not refuse it, it still waits
                self._pending = dict(sorted({**self._pending, proposal.id: proposal}.items()))
                raise

    def reject(self, proposal_id: int) -> dict[str, Any]:
        with self._lock:
            self._take(proposal_id)
            return self._changed()

    def _take(self, proposal_id: int) -> Proposal:
        proposal = self._pending.pop(proposal_id, None)
        if proposal is None:
            raise RuleError(NO_SUCH_PROPOSAL, f"there is no pending proposal {proposal_id}")
        return proposal

    def _drop_stale_proposals(self) -> None:
        """When the game has ended nothing pending can happen any more: drop it. Otherwise keep
        every proposal, even one the rules would refuse right now: the camera may have queued
        throws of both sides (A, B, A), and the later ones become legal in turn."""
        assert self.game is not None
        if self.game.engine.finished(self.game.state):
            self._pending.clear()

    # -- reading
    def state(self) -> dict[str, Any]:
        """The current game as ``companion replay`` prints it, plus the game id, the number of
        events, the legal actions, the pending proposals and the alerts every page shows; once
        the game is finished, ``new_game``: the event that started it (without when and from
        where), so a page can start the same game again in one tap. ``{"game": None}`` before
        any."""
        with self._lock:
            if self.game is None:
                return {"game": None, "game_id": None, "rev": None, "version": self.version, "pending": [],
                        "alerts": [dict(a) for a in self.alerts]}
            view = self.game.view()
            detail = view.pop("detail")
            return {**view, "rejected": [dict(r) for r in self.rejected], "detail": detail,
                    "game_id": self.game_id, "seq": len(self.game.events), "rev": self.rev,
                    "version": self.version,
                    "legal": self.game.public_legal_actions(),
                    "pending": [p.as_dict() for p in self._pending.values()],
                    "alerts": [dict(a) for a in self.alerts],
                    **({"new_game": copy.deepcopy(_plain(self.game.events[0]))} if view["finished"] else {})}

    def history(self) -> list[dict[str, Any]]:
        """The accepted events of the current game, in order, undone ones left out."""
        with self._lock:
            return [dict(e) for e in self.game.events] if self.game else []

    def export(self, game_id: int, raw: bool = False) -> list[dict[str, Any]]:
        """A game's log: its effective events (replayable anywhere), or every stored row."""
        rows = self.log.events(game_id)
        if raw or not rows:
            return rows
        return replay_rows(rows).events

    def games(self) -> list[dict[str, Any]]:
        """Every stored game, newest first, with ``finished`` (None for a game that cannot be
        restored: the History page offers to resume the unfinished ones) and what History shows
        of it (:func:`companion.table.stats.summary`): ``players`` (sides, teams or players in
        seat order), ``members`` (the people behind each), ``winners`` and ``scores``; and
        ``hidden_cards`` (:meth:`hides_cards`: its log is not handed out yet)."""
        with self._lock:
            listed = self.log.games()
            for g in listed:
                g.update(self._summary(g["id"], g["events"]))
                g["hidden_cards"] = g["finished"] is False and self.hides_cards(g["id"])
            return listed

    def hides_cards(self, game_id: int) -> bool:
        """Whether a game is still to be played and its log holds cards its players are not
        shown (Stack 21's stock, by a virtual deck's seed or typed in: ``Engine.log_hides_cards``).
        Such a log is not handed out (export) until the game is over: anyone could read the
        stock from it. A game that cannot be restored, or is over, hides nothing."""
        from companion.games import get_engine

        with self._lock:
            rows = self.log.events(game_id)
            if not rows or self._summary(game_id, len(rows))["finished"] is not False:
                return False
            try:
                engine = get_engine(str(rows[0].get("game")))
            except (EventError, ImportError):
                return False
            return engine.log_hides_cards(rows)

    def _summary(self, game_id: int, rows: int) -> dict[str, Any]:
        """Replays a past game once per change of its rows; the current game is at hand."""
        if game_id == self.game_id and self.game is not None:
            return stats.summary(self.game.view())
        known = self._summaries.get(game_id)
        if known is None or known[0] != rows:
            try:
                game = restore(self.log.events(game_id))[0]
                known = (rows, stats.summary(game.view()))
            except (RuleError, EventError):
                known = (rows, {"finished": None, "players": [], "members": {}, "winners": [], "scores": {}})
            self._summaries[game_id] = known
        return copy.deepcopy(known[1])

    # -- subscribers
    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(state)`` after every change; returns the unsubscribe function."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _changed(self, stored: bool = False) -> dict[str, Any]:
        """Tell every subscriber. ``stored``: a row was just written, so a card that was full
        has room again and its alert goes."""
        if stored and any(a["code"] == "NOT_STORED" for a in self.alerts):
            self.alerts = [a for a in self.alerts if a["code"] != "NOT_STORED"]
        self.version += 1
        state = self.state()
        for callback in list(self._subscribers):
            try:
                callback(state)
            except Exception:  # a broken subscriber must not break the table
                import logging

                logging.getLogger(__name__).exception("table subscriber failed")
        return state

    def _need_game(self) -> Game:
        if self.game is None:
            raise RuleError(NO_GAME, "no game has been started at this table")
        return self.game

    def close(self) -> None:
        self._watching.set()
        self.log.close()
        if self._held >= 0:
            os.close(self._held)  # the lock goes with it
            self._held = -1


MAX_NAME = 40  # characters of a player's, side's or team's name: every phone gets every name on every change


def _clean(event: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise EventError("an event must be a JSON object")
    _check_meta(event)
    try:
        json.dumps(event, allow_nan=False)
    except ValueError:
        raise EventError("a number in the event is not finite (NaN or Infinity are not JSON)") from None
    except TypeError:
        raise EventError("the event holds something that is not JSON") from None
    if event.get("type") == "new_game":
        _check_names(event)
    return dict(event)


def _check_names(event: Mapping[str, Any]) -> None:
    """Names of a new game (players, sides, their players, teams) of at most MAX_NAME characters
    (BAD_VALUE): a 60,000-character name sent 480 KB to every phone on every change."""
    names: list[Any] = []
    for key in ("players", "sides", "teams"):
        items = event.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                names.append(item.get("name"))
                inner = item.get("players")
                names.extend(inner if isinstance(inner, list) else [])
            elif isinstance(item, list):
                names.extend(item)
            else:
                names.append(item)
    for name in names:
        if isinstance(name, str) and len(name) > MAX_NAME:
            # args: a phone says it in its own language (rule_BAD_VALUE@length,most,name)
            raise RuleError("BAD_VALUE", f"a name may have at most {MAX_NAME} characters; "
                                         f"'{name[:20]}…' has {len(name)}",
                            {"name": name[:20] + "…", "length": len(name), "most": MAX_NAME})


def _plain(event: Mapping[str, Any]) -> dict[str, Any]:
    """An event without what does not change its meaning (when and from where it came)."""
    return {k: v for k, v in event.items() if k not in ("at", "source", "game_id")}


def _plain_rows(rows: list[Any]) -> list[dict[str, Any]]:
    """Stored rows as :func:`_plain` events (a row that is not an object counts, as nothing)."""
    return [_plain(r) if isinstance(r, Mapping) else {} for r in rows]


def _check_meta(event: Mapping[str, Any]) -> None:
    """EVENTS.md: any event may carry "source" (a name) and "at" (ISO 8601). Engines ignore both,
    so the table checks them: a list, a number or null there is malformed, not stored."""
    if "source" in event and not isinstance(event["source"], str):
        raise EventError("'source' must be a string (camera, button, phone, cli, ...)")
    if "at" in event:
        at = event["at"]
        if not isinstance(at, str):
            raise EventError("'at' must be an ISO 8601 time as a string, e.g. 2024-05-01T20:15:00Z")
        try:
            datetime.fromisoformat(at)
        except ValueError:
            raise EventError("'at' is not an ISO 8601 time (e.g. 2024-05-01T20:15:00Z)") from None


class TableInUse(OSError):
    """Another Table (another ``companion serve`` or ``demo``) has this log open."""


def _hold(path: Path) -> int:
    """An exclusive lock on ``<log>.lock`` for as long as this Table is open; the open file is
    returned. Each Table plays the game it replayed at start: two processes on one log each
    stored events made on their own copy, and a restart then refused one side's rows (an
    acknowledged throw gone). The kernel drops the lock when the process ends, even by SIGKILL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    held = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(held, 20, 0).decode("ascii", "replace").strip()
        os.close(held)
        raise TableInUse(errno.EBUSY, f"another companion (process {holder or '?'}) is already using this table "
                                      "log; stop it first: two would each keep their own copy of the game") from None
    except BaseException:
        os.close(held)
        raise
    with contextlib.suppress(OSError):  # the pid only informs; a full card must not stop the service
        os.ftruncate(held, 0)
        os.pwrite(held, f"{os.getpid()}\n".encode(), 0)
    return held


def _cannot_write(err: sqlite3.DatabaseError) -> bool:
    """SQLite could not write beside the log (full, I/O error, read-only): not damage."""
    code = getattr(err, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN,
                                                 sqlite3.SQLITE_READONLY)


def _damaged(err: sqlite3.DatabaseError) -> bool:
    """Not an SQLite database, or a damaged one (not: locked, read-only, missing directory)."""
    return getattr(err, "sqlite_errorcode", None) in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
