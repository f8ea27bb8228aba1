"""The camera's frame processors for the live loop: calibration, the dice step and the cup watch.

:class:`TableVision` is the one processor :class:`companion.live.loop.Live` runs. On its first frames
it calibrates the table from the four markers (or loads a stored calibration) and says clearly
which marker is missing while it cannot; then, per frame:

- the **dice step** reads dice only while the game waits for dice from the table (its
  ``legal`` actions hold a ``dice``, ``roll`` or ``reroll`` template — DESIGN.md's "what may
  happen now", used as the camera's plausibility check), so the dice reader costs nothing
  during the throws. A settled roll (:class:`~companion.live.watch_dice.DiceWatch`) is put in
  table millimetres, dice on the markers or off the table are dropped, and
  :func:`companion.live.proposals.dice_event` makes the game's event: in 21 Exact one per side whose
  half holds its four dice;
- the **cup watch** (:class:`~companion.live.watch_cups.CupWatch`) proposes a ``throw`` when a
  cup has gone and stays gone, or a ball rests in a cup — only in a 21 Exact game.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.live.proposals import DieReading, dice_event
from companion.live.watch import Proposed
from companion.table import Table
from companion.vision.calibrate import Calibration, CalibrationError, calibrate
from companion.vision.cups.discover import calibrate_markers
from companion.vision.view import CameraView, view_change

log = logging.getLogger(__name__)

DICE_EVENTS = ("dice", "roll", "reroll")
MARKER_CLEARANCE_MM = 70.0   # a "die" this close to a marker centre is the marker's pattern
TABLE_MARGIN_MM = 60.0       # dice this far outside the markers' rectangle are off the table
WHITE_EVERY_S = 1.0          # how often the dice step measures the light on the markers' paper


def dice_front(cal: Calibration) -> float:
    """21 Exact: the dice lie in front of the cup rows (table y below this), never under the cups."""
    return min((slot.y for slot in cal.slots), default=cal.layout.table_h) - cal.layout.rim_d / 2


def aim_reader(reader: Any, cal: Calibration, game: str | None = None) -> None:
    """Point the dice reader at the table: read only the part of the frame where the game's dice
    can lie, at the scale that suits dice of the size the calibration says they are there (no
    guessing per frame). The finder's time goes with the area it looks at."""
    from companion.vision.dice.reader import scale_for

    lay, m = cal.layout, TABLE_MARGIN_MM
    far = dice_front(cal) if game == "exact21" else lay.table_h + m
    corners = [(x, y, z) for x in (-m, lay.table_w + m) for y in (-m, far) for z in (0.0, lay.die_mm)]
    px = cal.project(np.array(corners, np.float64))
    w, h = cal.image_size
    x0, y0 = np.floor(px.min(axis=0)).astype(int)
    x1, y1 = np.ceil(px.max(axis=0)).astype(int)
    reader.roi = (max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1)))
    d = lay.die_mm / 2
    sides = []
    for spots in lay.dice_spots().values():
        for x, y in spots.values():
            top = cal.project(np.array([[x - d, y, 2 * d], [x + d, y, 2 * d], [x, y - d, 2 * d], [x, y + d, 2 * d]]))
            sides += [float(np.linalg.norm(top[1] - top[0])), float(np.linalg.norm(top[3] - top[2]))]
    reader.scale = scale_for(float(np.median(sides)))
    reader.adapt = False
    # where the camera stands, seen in the frame (the table's point below it): a tilted camera
    # sees the side of each die that faces it there, which the reader must not take for a die
    down = cal.K @ (cal.R @ np.array([0.0, 0.0, -1.0]))
    reader.nadir = (float(down[0] / down[2]), float(down[1] / down[2])) if down[2] > 1e-9 else None


class DiceStep:
    """Settled dice → the game's dice event, only while the game waits for dice."""

    name = "dice"

    def __init__(self, cal: Calibration, still_seconds: float = 0.8, profiles: Any = None, reader: Any = None):
        from companion.live.watch_dice import DiceWatch
        from companion.vision.dice.reader import DiceReader

        self.cal = cal
        reader = reader or DiceReader(profiles=profiles)
        aim_reader(reader, cal)
        self.aimed_for: str | None = None
        self.watch = DiceWatch(still_seconds=still_seconds, reader=reader)
        self.status = "waiting"
        self._white_at = -math.inf  # when the paper's white was last measured
        self.last_dice: list[Any] = []
        self.last_reason = ""

    def wanted(self, state: Mapping[str, Any]) -> bool:
        return any(a.get("type") in DICE_EVENTS for a in state.get("legal", []))

    def on_table(self, dice: list[Any], game: str | None) -> list[DieReading]:
        layout = self.cal.layout
        if not dice:
            return []
        mm = self.cal.to_table(np.array([d.center for d in dice], np.float64))
        markers = [(0.0, 0.0), (layout.table_w, 0.0), (layout.table_w, layout.table_h), (0.0, layout.table_h)]
        front = dice_front(self.cal)
        out = []
        for d, (x, y) in zip(dice, mm, strict=True):
            if game == "exact21" and y > front:
                continue
            if any(np.hypot(x - mx, y - my) < MARKER_CLEARANCE_MM for mx, my in markers):
                continue
            if not (-TABLE_MARGIN_MM < x < layout.table_w + TABLE_MARGIN_MM
                    and -TABLE_MARGIN_MM < y < layout.table_h + TABLE_MARGIN_MM):
                continue
            out.append(DieReading(d.value, d.color, (float(x), float(y)), float(d.confidence)))
        return out

    def feed(self, frame: np.ndarray, t: float, state: Mapping[str, Any]) -> list[Proposed]:
        if not self.wanted(state):
            self.status = "no dice expected now"
            return []
        if state.get("game") != self.aimed_for:
            self.aimed_for = state.get("game")
            aim_reader(self.watch.reader, self.cal, self.aimed_for)
        # the markers' white paper gives the light's colour for naming the dice's colours; the
        # light changes slowly, so it is measured once a second, not on every frame
        if t - self._white_at >= WHITE_EVERY_S:
            self.watch.reader.white = self.cal.paper_white(frame)
            self._white_at = t
        roll = self.watch.feed(frame, t)
        self.status = f"dice: {self.watch.status}"
        if roll is None:
            return []
        self.last_dice = roll.dice
        readings = self.on_table(roll.dice, state.get("game"))
        middle = self.cal.layout.table_w / 2
        groups = [readings]
        if state.get("game") == "exact21":  # each side's four dice lie in its own half
            groups = [[d for d in readings if d.center[0] < middle], [d for d in readings if d.center[0] >= middle]]
        out = []
        reasons = []
        for group in groups:
            if not group:
                continue
            suggestion = dice_event(group, state, middle)
            reasons.append(suggestion.reason)
            if suggestion.event is not None:
                out.append(Proposed(suggestion.event, {**suggestion.evidence, "why": suggestion.reason,
                                                       "frames": roll.frames, "t": round(t, 2),
                                                       "still_seconds": round(roll.at - roll.still_since, 2)}))
        self.last_reason = "; ".join(reasons)
        log.info("settled dice: %s", self.last_reason)
        return out

    def draw(self, frame: np.ndarray) -> None:
        for d in self.last_dice:
            x0, y0, x1, y1 = (int(v) for v in d.box)
            cv2.rectangle(frame, (x0, y0), (x1, y1), (0, 255, 255), 2)
            cv2.putText(frame, f"{d.value} {d.color}", (x0, max(12, y0 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                        (0, 255, 255), 1, cv2.LINE_AA)


class TableVision:
    """Calibration, dice and cups for one camera (a :class:`companion.live.loop.Live` processor)."""

    name = "vision"

    def __init__(self, table: Table, calibration_file: str | Path | None = None,
                 recalibrate_every: float = 2.0, profiles: Any = None, reader: Any = None,
                 learn_cups: bool = True, camera_view: Callable[[], CameraView | None] | None = None):
        self.table = table
        # what the camera's frames are taken under now (None: not known); a calibration made
        # under another sensor mode, camera or frame shape is not read with (_judge_view)
        self.camera_view = camera_view
        self._view: CameraView | None = None
        self.view_alert: dict[str, Any] | None = None
        self._state: Mapping[str, Any] = {}
        self._version: int | None = None
        self.profiles = profiles
        self.reader = reader  # a DiceReader to share (its networks hold buffers), else one of our own
        self.calibration_file = Path(calibration_file) if calibration_file else None
        # a table whose cups stand where a known layout puts them (the demo's rendered table) is
        # calibrated with that layout and its cups never learnt; any other table has its cups
        # learnt (by the network, or by the colour search where its model is missing)
        self.learn_cups = learn_cups
        self.recalibrate_every = recalibrate_every
        self.cal: Calibration | None = None
        self.cups: Any = None
        self.dice: DiceStep | None = None
        self.status = "calibrating: waiting for the first frame"
        self._last_try: float | None = None     # frame times of the last tries
        self._last_learn: float | None = None
        self._seen_game: Any = None      # the 21 Exact game whose start was seen
        self._learn_game: Any = None     # the game whose cups are to be learnt (None: none)
        self.cups_alert: dict[str, Any] | None = None
        self.notices: list[str] = []  # what starting had to do, for the log and /api/health
        if self.calibration_file is not None and self.calibration_file.exists():
            try:
                self._ready(Calibration.load(self.calibration_file), "loaded " + str(self.calibration_file))
            except (OSError, ValueError, KeyError, CalibrationError) as err:
                self._unusable(err)

    def _unusable(self, err: Exception) -> None:
        """A stored calibration that cannot be loaded (empty after a power cut, edited by hand):
        the service still starts and calibrates from the markers, as with no file; the file is
        renamed aside first, so the new calibration does not overwrite someone's edited slots."""
        path = self.calibration_file
        assert path is not None
        why = err.message if isinstance(err, CalibrationError) else str(err)
        aside = path.with_name(f"{path.name}.unusable-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            path.rename(aside)
            kept = f"it was renamed to {aside.name}"
        except OSError as move_err:
            kept = f"it could not be renamed aside ({move_err.strerror}) and will be replaced"
        self.status = f"calibration file unusable ({why}): calibrating from the camera"
        notice = (f"the table calibration {path} cannot be used ({why}); {kept}, and the table is "
                  f"calibrated again from the markers (companion calibrate table to do it by hand)")
        log.warning("%s", notice)
        self.notices.append(notice)

    def _ready(self, cal: Calibration, how: str) -> None:
        from companion.live.watch_cups import CupWatch

        self.cal = cal
        # cups are watched where they were learnt from the camera, or where a hand-written layout
        # puts them; a calibration from the markers alone has none yet (learnt at a game's start)
        self.cups = CupWatch(cal, turned_is_tally=self.turned_is_tally) \
            if cal.view_plane is not None or cal.layout_given or not self.learn_cups else None
        self.dice = DiceStep(cal, profiles=self.profiles, reader=self.reader)
        self.status = f"calibrated ({how}, {cal.error_mm:.1f} mm)"
        log.info("table vision: %s", self.status)

    def _store(self, cal: Calibration) -> None:
        if self.calibration_file is not None:
            try:
                cal.save(self.calibration_file)
            except OSError as err:
                log.warning("cannot store the calibration in %s: %s", self.calibration_file, err)

    def _due(self, last: float | None, t: float) -> bool:
        """A retry is due: by the frames' own clock, so a recorded or replayed camera is judged as
        a live one (a clock that went back counts as due)."""
        return last is None or not 0 <= t - last < self.recalibrate_every

    def _calibrate(self, frame: np.ndarray, t: float) -> None:
        if not self._due(self._last_try, t):
            return
        self._last_try = t
        try:
            # the table measured from the markers (the default layout where cups are not learnt)
            cal = calibrate_markers(frame) if self.learn_cups else calibrate(frame)
        except CalibrationError as err:
            self.status = f"not calibrated: {err.message}"
            return
        cal = replace(cal, made_under=self._made_under(frame))
        self._store(cal)
        self._ready(cal, "from the markers")

    def _learn(self, frame: np.ndarray, t: float) -> None:
        """The cups of a 21 Exact game set up on the table (every cup standing): their places,
        size and make from this frame. While it cannot, the sentence saying why is the table's
        alert (every phone shows it) and the cups are not watched; tried every
        ``recalibrate_every`` seconds, with no restart."""
        from companion.live.watch_cups import CupWatch
        from companion.vision.cups.discover import learn

        if not self._due(self._last_learn, t):
            return
        self._last_learn = t
        try:
            cal = learn(frame)
        except CalibrationError as err:
            if err.code == "COLOURS_SWAPPED":   # (the pages' own words, with the sentence as its detail)
                self.cups_alert = {"code": "COLOURS_SWAPPED", "detail": err.message, "message": err.message}
            else:
                self.cups_alert = {"code": "CUPS_NOT_FOUND", "detail": err.message,  # (NO_CUPS too)
                                   "message": f"the camera cannot see the cups set up: {err.message}"}
            self.status = f"cups not learnt: {err.message}"
            return
        self.cups_alert = None
        self._learn_game = None
        cal = replace(cal, made_under=self._made_under(frame))
        self._store(cal)
        self.cal = cal
        self.cups = CupWatch(cal, turned_is_tally=self.turned_is_tally)
        self.dice = DiceStep(cal, profiles=self.profiles, reader=self.reader)
        self.status = f"calibrated (cups learnt: {len(cal.slots)} cups, {cal.error_mm:.1f} mm)"
        log.info("table vision: %s", self.status)

    def _made_under(self, frame: np.ndarray) -> CameraView:
        """What this frame was taken under: the camera's word where it gives it (the Pi camera:
        model, sensor mode, crop), else only the frame's size, which is certain."""
        size = (frame.shape[1], frame.shape[0])
        view = self._view
        return view if view is not None and view.frame == size else CameraView(frame=size)

    def _judge_view(self) -> None:
        """Refuse to read through a calibration made under another camera view (another sensor
        mode's crop, another camera, a frame of another shape): its markers, table and cups lie
        elsewhere in these frames, and the readings would be wrong without a word. What either
        side does not know refuses nothing (an older file, a camera that does not say)."""
        cal = self.cal
        why = view_change(cal.made_under, self._view) if cal is not None else None
        if why is None:
            if self.view_alert is not None:
                log.info("table vision: the camera is as the table was calibrated again")
                self.view_alert = None
                self.status = "calibrated (the camera as calibrated again)"
            return
        assert cal is not None and cal.made_under is not None
        where = str(self.calibration_file) if self.calibration_file is not None else "the table calibration"
        sentence = (f"the table calibration cannot be used with the camera as it runs now: {why}. Calibrate "
                    f"the table again (companion calibrate table, or delete {where} and restart the "
                    f"service, which then calibrates itself from the markers), or set the camera back "
                    f"({cal.made_under.describe()}); nothing is read from the table until then")
        self.view_alert = {"code": "CALIBRATION_VIEW_CHANGED", "detail": why, "message": sentence}
        self.status = f"not reading: {sentence}"
        log.warning("table vision: %s", sentence)

    def feed(self, frame: np.ndarray, t: float) -> list[Proposed]:
        view = self.camera_view() if self.camera_view is not None else None
        if view is not None and view != self._view:   # the camera opened, or opened again (closed: as it was)
            self._view = view
            self._judge_view()
        if self.view_alert is not None:
            return []
        if self.cal is None:
            self._calibrate(frame, t)
            if self.cal is None:
                return []
        if (frame.shape[1], frame.shape[0]) != tuple(self.cal.image_size):
            try:
                self._ready(self.cal.scaled(frame.shape[1], frame.shape[0]), "rescaled")
            except CalibrationError as err:   # frames of another shape: it fits them nowhere
                self.view_alert = {"code": "CALIBRATION_VIEW_CHANGED", "detail": err.message,
                                   "message": f"the table calibration cannot be used: {err.message}; "
                                              "calibrate the table again (companion calibrate table)"}
                self.status = f"not reading: {self.view_alert['message']}"
                log.warning("table vision: %s", self.status)
                return []
        assert self.dice is not None
        state = self.state()
        if state.get("game") == "exact21" and self.learn_cups:
            # a new game is set up afresh: its cups are learnt again (unless a hand-written layout
            # says where they stand), and a table whose cups were never learnt learns them now
            game = state.get("game_id")
            if (game != self._seen_game and not state.get("seq")) or self.cups is None:
                if not self.cal.layout_given:
                    self._learn_game = game
            self._seen_game = game
            if self._learn_game is not None:
                self._learn(frame, t)
                if self._learn_game is not None:
                    return self.dice.feed(frame, t, state)
        out = self.dice.feed(frame, t, state)
        if state.get("game") == "exact21" and self.cups is not None:
            out += self.cups.feed(frame, t)
        return out

    def turned_is_tally(self, side: str, cup: str) -> bool | None:
        """Whether the game says a cup of this side and colour turned over where it stood is the
        silver tally, not that cup made: the side's Silver Cup Rule is in effect (E10) and the
        cup's value is more than the side needs (it cannot have been made, E8). None outside a
        21 Exact game."""
        state = self.state()
        if state.get("game") != "exact21":
            return None
        mine = ((state.get("detail") or {}).get("sides") or {}).get(side)
        if not mine or mine.get("silver_active") is None:
            return None
        value = (mine.get("values") or {}).get(cup)
        return bool(mine["silver_active"]) and (value is None or value > mine.get("need", 21))

    def state(self) -> Mapping[str, Any]:
        """The table's state, rebuilt only when the table has changed: a full state costs
        milliseconds (the engine's view and legal actions), too much for every frame."""
        if self.table.version != self._version:
            self._version = self.table.version
            self._state = self.table.state()
        return self._state

    def draw(self, frame: np.ndarray) -> None:
        if self.dice is not None:
            self.dice.draw(frame)
        if self.cups is not None and hasattr(self.cups, "draw"):
            self.cups.draw(frame)

    def health(self) -> dict[str, Any]:
        return {"status": self.status, "alert": self.view_alert or self.cups_alert,
                "cups": getattr(self.cups, "status", None),
                "dice": self.dice.status if self.dice else None,
                "dice_last": self.dice.last_reason if self.dice else None}
