"""The running game: the event log, apply/undo, pending proposals, and subscribers.

Every change goes through :class:`Table`: it checks the event with the rule engine first and
stores it only when accepted, so a refused event leaves no trace but the returned reason. The
state is always the replay of the stored log (``Table(path)`` after a crash replays the last
game). Subscribers are called with the new state after every change, from the changing thread.

Proposals are events the camera (or anything else) suggests; they wait in memory until
confirmed (button, phone tap, or the demo's delay) or rejected. Confirming applies them like any
other event, so the rules still decide.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.games.base import EventError, Game, RuleError
from companion.table.log import EventLog

Subscriber = Callable[[dict[str, Any]], None]

NO_GAME = "NO_GAME"
NO_SUCH_PROPOSAL = "NO_SUCH_PROPOSAL"


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


def replay_rows(rows: list[dict[str, Any]]) -> Game:
    """A game rebuilt from its stored rows (undo rows take back the event before them)."""
    game = Game.start(rows[0])
    for row in rows[1:]:
        if row.get("type") == "undo":
            game.pop()
        else:
            game.push(row)
    return game


class Table:
    """The game at this table. Thread-safe; every method that changes something is atomic."""

    def __init__(self, path: str | Path):
        self.log = EventLog(path)
        self._lock = threading.RLock()
        self._subscribers: list[Subscriber] = []
        self._pending: dict[int, Proposal] = {}
        self._ids = itertools.count(1)
        self.game_id: int | None = None
        self.game: Game | None = None
        self.version = 0  # bumps with every change, for clients that poll
        latest = self.log.latest_game()
        if latest is not None:
            self.game_id = latest
            self.game = replay_rows(self.log.events(latest))

    # -- changing the game
    def start(self, new_game: Mapping[str, Any], source: str | None = None) -> dict[str, Any]:
        """Start a new game (the previous one stays in the log). RuleError/EventError if the
        ``new_game`` event is refused; then nothing is stored."""
        with self._lock:
            game = Game.start(new_game)
            self.game_id = self.log.new_game(_clean(new_game), source)
            self.game = game
            self._pending.clear()
            return self._changed()

    def apply(self, event: Mapping[str, Any], source: str | None = None) -> dict[str, Any]:
        """Apply one event: stored if accepted, RuleError (nothing stored) if refused."""
        with self._lock:
            game = self._need_game()
            if isinstance(event, Mapping) and event.get("type") == "new_game":
                return self.start(event, source)
            if isinstance(event, Mapping) and event.get("type") == "undo":
                return self.undo(source)
            game.push(event)
            try:
                self.log.append(self.game_id or 0, _clean(event), source)
            except BaseException:
                game.pop()
                raise
            self._drop_stale_proposals()
            return self._changed()

    def undo(self, source: str | None = None) -> dict[str, Any]:
        """Take back the last accepted event (RuleError NOTHING_TO_UNDO after new_game)."""
        with self._lock:
            game = self._need_game()
            undone = game.pop()
            try:
                self.log.append(self.game_id or 0, {"type": "undo"}, source)
            except BaseException:
                game.push(undone)
                raise
            return self._changed()

    # -- proposals
    def propose(self, event: Mapping[str, Any], source: str = "camera",
                evidence: Mapping[str, Any] | None = None) -> Proposal:
        """Queue an event for confirmation. Its shape is checked now; the rules decide at confirm."""
        with self._lock:
            game = self._need_game()
            game.engine.check(event)
            proposal = Proposal(next(self._ids), dict(event), source, dict(evidence or {}))
            self._pending[proposal.id] = proposal
            self._changed()
            return proposal

    def pending(self) -> list[Proposal]:
        with self._lock:
            return list(self._pending.values())

    def confirm(self, proposal_id: int, source: str | None = None) -> dict[str, Any]:
        """Apply a proposal. If the rules refuse it, it is dropped and the RuleError raised. The
        stored event's ``source`` says who confirmed it and ``proposed_by`` who proposed it."""
        with self._lock:
            proposal = self._take(proposal_id)
            try:
                return self.apply({**proposal.event, "proposed_by": proposal.source}, source or proposal.source)
            except RuleError:
                self._changed()
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
        events, the legal actions, and the pending proposals. ``{"game": None}`` before any."""
        with self._lock:
            if self.game is None:
                return {"game": None, "game_id": None, "version": self.version, "pending": []}
            view = self.game.view()
            detail = view.pop("detail")
            return {**view, "rejected": [], "detail": detail,
                    "game_id": self.game_id, "seq": len(self.game.events), "version": self.version,
                    "legal": self.game.legal_actions(),
                    "pending": [p.as_dict() for p in self._pending.values()]}

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
        return self.log.games()

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

    def _changed(self) -> dict[str, Any]:
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
        self.log.close()


def _clean(event: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(event, Mapping):
        raise EventError("an event must be a JSON object")
    return dict(event)
