"""The rendered table as a camera: a scripted 21 Exact game drawn frame by frame in real time,
and its simulated players' button presses.

The frames go through the real pipeline like a camera's (vision → watch → proposals → confirm →
table). What a camera cannot see — a ball that missed every cup — the players at a real table
record with a short press of the button (DESIGN.md: with nothing pending, a press is a miss for
the thrower on turn). :class:`RenderedTable` does the same: once the game has reached a scripted
miss, and every throw before it has been scored, it presses (``press`` — in the service, the
confirm step's short press).

The source keeps real time the way a camera does: a frame that is late is dropped, not queued.
Before the first throw the still table is shown for ``intro_seconds`` (the dice have been rolled
and lie still, so the dice watch can read them); after the last scene the final table stays in
view, so the scoreboard keeps the finished game.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from companion.games.base import RuleError
from companion.live.camera import Source
from companion.sim.render import Renderer, Sequence, game_sequence
from companion.table import Table

log = logging.getLogger(__name__)

PLAYERS = {"A": ["Ann"], "B": ["Ben"]}


def demo_sequence(seed: int, fps: float = 15.0) -> tuple[Sequence, str]:
    """A rendered game that ends with a winner (the first from ``seed`` on that does), and the winner."""
    for s in range(seed, seed + 50):
        seq = game_sequence(s, fps=fps, max_throws=60)
        winner = _winner(seq)
        if winner is not None:
            return seq, winner
    raise RuntimeError(f"no finished game between seeds {seed} and {seed + 49}")


def _winner(seq: Sequence) -> str | None:
    """The side the script takes to exactly 21, by the rules' own engine."""
    from companion.games.base import Game

    game = Game.start(new_game_event())
    for side, values in seq_values(seq).items():
        game.push({"type": "dice", "side": side, "values": values})
    for _, side, cup in scripted_throws(seq):
        game.push({"type": "throw", "side": side, "cup": cup})
    winners = game.view()["winners"]
    return winners[0] if winners else None


def seq_values(seq: Sequence) -> dict[str, dict[str, int]]:
    values: dict[str, dict[str, int]] = {"A": {}, "B": {}}
    middle = seq.layout.table_w / 2
    for die in seq.scenes[0].dice:
        values["A" if die.x < middle else "B"][die.colour] = die.value
    return values


def scripted_throws(seq: Sequence) -> list[tuple[float, str, str]]:
    """Every throw of the script in order: (time, side, cup or "miss")."""
    throws = [(t.t, t.side, t.cup) for t in seq.truth] + [(t, side, "miss") for t, side in seq.misses]
    return sorted(throws)


def new_game_event() -> dict[str, Any]:
    return {"type": "new_game", "game": "exact21",
            "sides": [{"name": side, "players": players} for side, players in PLAYERS.items()]}


def for_config(config: dict[str, Any]) -> RenderedTable | None:
    """The demo's rendered table when ``[camera] source = "render"`` (the service plays it as the
    camera and its simulated players press the button); None for any other camera."""
    cam = config["camera"]
    if cam["source"] != "render":
        return None
    return RenderedTable(cam["render_seed"], cam["render_speed"])


class RenderedTable:
    """One scripted game: its camera source (:meth:`source`) and its players (:meth:`start_players`)."""

    def __init__(self, seed: int = 0, speed: float = 1.0, intro_seconds: float = 3.0, fps: float = 15.0,
                 clock: Callable[[], float] = time.monotonic):
        self.seq, self.winner = demo_sequence(seed, fps)
        self.speed = speed
        self.intro = intro_seconds
        self.clock = clock
        self.started: float | None = None
        self.throws = scripted_throws(self.seq)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # one renderer and one dice reader for the whole demo (each holds frame-sized buffers)
        self.renderer = Renderer(self.seq.look, self.seq.layout, self.seq.seed)
        self.reader: Any = None

    def next(self) -> RenderedTable:
        """The next scripted game (the demo's "new game"), at the same speed."""
        return RenderedTable(self.seq.seed + 1, self.speed, self.intro, self.seq.fps, self.clock)

    @staticmethod
    def new_game_event() -> dict[str, Any]:
        return new_game_event()

    # -- time on the script (seconds since the first throw's scene; negative during the intro)
    def game_time(self) -> float:
        if self.started is None:
            return -self.intro
        return (self.clock() - self.started) * self.speed - self.intro

    @property
    def duration(self) -> float:
        return len(self.seq) / self.seq.fps

    def source(self) -> Source:
        return RenderedSource(self)

    def colour_profiles(self) -> Any:
        """The set-up step a person does at a real table (``companion calibrate colours
        --labels``): one frame of dice of known colours under this table's light — here the
        eight set-up dice, whose colours the script knows — gives the colour profiles."""
        from companion.vision.colour import ColourProfiles, face_lab
        from companion.vision.dice.reader import DiceReader

        renderer = self.renderer
        frame = renderer.frame(self.seq.scenes[0])
        if self.reader is None:
            self.reader = DiceReader(profiles=ColourProfiles())
        self.reader.profiles = ColourProfiles()
        found = self.reader.read(frame)
        samples: dict[str, list[np.ndarray]] = {}
        h = self.seq.layout.die_mm
        for die in self.seq.scenes[0].dice:
            (u, v), = renderer.camera.project(np.array([[die.x, die.y, h]], np.float64))
            if not found:
                break
            near = min(found, key=lambda d: (d.center[0] - u) ** 2 + (d.center[1] - v) ** 2)
            if (near.center[0] - u) ** 2 + (near.center[1] - v) ** 2 <= near.size ** 2:
                samples.setdefault(die.colour, []).append(face_lab(frame, near.center, near.size))
        self.reader.profiles = ColourProfiles.learn(samples)
        return self.reader.profiles

    # -- the players: a press for every miss, in turn
    def start_players(self, table: Table, press: Callable[[], Any]) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._play, args=(table, press), daemon=True, name="demo-players")
        self._thread.start()

    def _dice_fallback(self, table: Table, grace: float = 8.0) -> None:
        """What players do when the camera cannot read their dice: enter them on a phone. The
        camera gets ``grace`` seconds of still dice first (the intro shows them still)."""
        while not self._stop.is_set() and self.game_time() < grace - self.intro:
            if not any(a.get("type") == "dice" for a in table.state().get("legal", [])):
                return
            self._stop.wait(0.1)
        for side, values in seq_values(self.seq).items():
            if any(a.get("type") == "dice" and a.get("side") == side for a in table.state().get("legal", [])):
                log.warning("demo: the camera did not read side %s's dice in %.0f s; entered from a phone",
                            side, grace)
                try:
                    table.apply({"type": "dice", "side": side, "values": values}, source="phone")
                except RuleError as err:   # the camera's reading was confirmed meanwhile, as a phone may find
                    if err.code != "DICE_ALREADY_SET":
                        raise
                    log.info("demo: side %s's dice were read by the camera after all", side)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _play(self, table: Table, press: Callable[[], Any]) -> None:
        self._dice_fallback(table)
        for index, (t, side, cup) in enumerate(self.throws):
            if cup != "miss":
                continue
            # wait for the script to reach the miss, and for every throw before it to be scored
            deadline = None
            while not self._stop.is_set():
                if table.game is None or table.game.engine.finished(table.game.state):
                    return
                thrown = sum(1 for e in table.history() if e.get("type") == "throw")
                if self.game_time() >= t and thrown >= index and not table.pending():
                    break
                if self.game_time() >= t and deadline is None:
                    deadline = self.clock() + 15.0 / self.speed
                if deadline is not None and self.clock() > deadline:
                    log.warning("demo: throw %d (a miss by %s) still waits for earlier throws; pressing", index, side)
                    break
                self._stop.wait(0.05)
            if self._stop.is_set():
                return
            log.info("demo: %s missed every cup; button pressed", side)
            press()


class RenderedSource(Source):
    """The rendered table's frames at real time; late frames are dropped like a camera's."""

    name = "render"

    def __init__(self, table: RenderedTable):
        self.table = table
        self.renderer = table.renderer
        self._last_index = -2
        self._last_frame: np.ndarray | None = None

    def open(self) -> None:
        if self.table.started is None:
            self.table.started = self.table.clock()

    def read(self) -> np.ndarray | None:
        seq = self.table.seq
        period = 1.0 / (seq.fps * self.table.speed)
        index = int(self.table.game_time() * seq.fps)
        if index == self._last_index:  # wait for the next frame, as a camera does
            time.sleep(period)
            index = int(self.table.game_time() * seq.fps)
        index = max(0, min(index, len(seq.scenes) - 1))
        if index != self._last_index or self._last_frame is None:
            self._last_frame = self.renderer.frame(seq.scenes[index])
            self._last_index = index
        return self._last_frame.copy()

    def describe(self) -> str:
        return f"rendered 21 Exact table (seed {self.table.seq.seed})"
