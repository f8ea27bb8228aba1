"""Watching the cups: a stream of frames → proposed ``throw`` events, only once things settled.

- A cup gone and staying gone (its place showing bare table, a neighbour's wall or the inside of
  a neighbouring cup — nothing unexplained like a hand or a shadow — for ``gone_s`` seconds) is a
  ``throw`` for that side and colour.
- A ball resting in an upright cup for ``ball_s`` seconds is a ``throw`` for that cup (an
  overshoot, the silver cup, or a made cup before it is taken out; the cup leaving afterwards is
  the same throw, not a second one).
- A cup turned upside down says a throw happened even when its ball was never seen (deep in a
  translucent cup, on a silver cup's metal): one more cup turned on a side's tally, or a cup
  turned where it stood while that side's Silver Cup Rule is in effect (and the cup could not
  have been made), is the silver cup made
  (the sheet: "each time the silver cup is made, turn one of any unused colour cups upside
  down"); a cup turned where it stood otherwise is that cup made (tables that turn made cups over
  instead of taking them out). Not again when that throw was already proposed from its ball;
  only for a cup the watch had seen clearly standing and the closer look sees turned (or the
  quick look does and the place no longer looks as it did at set-up, ``LOOK_CHANGED``; or the
  quick look still sees it standing, but only unsurely, the place changed and the closer look
  sees it turned over and none standing); and a
  silver cup whose metal showed a "ball" at set-up has its balls ignored that game (its throws
  are read from the tally cup).
- Never an event: a hand or an arm over the cups, a player leaning over, a ball in flight, a ball
  popping out again, a cup knocked a few centimetres (it is found again near where it was), a cup
  turned for the tally of a silver throw already proposed, the silver cup hidden for a while.
- A table nothing moved on for a while is looked at only every few seconds (``SETTLE_S``,
  ``LOOK_AT_LEAST_S``): the network's look is the watch's whole cost.
- A camera that moved (markers no longer where calibrated) stops all proposals and says so in
  :attr:`CupWatch.status`; :meth:`CupWatch.feed` raises :class:`CameraMoved` when ``strict``.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.live.watch import Proposed
from companion.vision.calibrate import Calibration, CameraMoved
from companion.vision.cups.net import reader_for
from companion.vision.cups.reader import BALL_FRACTION, CupSeen

CLOSER_AGAIN_S = 2.0   # a cup the closer look still saw standing is not looked at again sooner

# this many cups out of sight together (seen in the last 3 s) is something big over the table
CROWD = 3
# a silver throw proposed from its ball this recently is the one a cup turned for the tally marks
TALLY_AFTER_S = 60.0
CLEAR_STANDING = 0.85   # a standing cup's surety (net.surety) the watch calls clear
UNSURE_DROP = 0.1       # this far under how sure of it the watch was, a cup is seen unsurely
# A cup whose place looks this little like it did at set-up (their zero-mean normalised
# correlation: the same whatever the light's level) is no longer the cup that stood there. The
# closer look can take a solid cup's flat bottom, turned over where it stood,
# for a standing cup's inside (0.99 sure, seen from nearly straight above); the quick look sees
# it turned and its look says it changed: rendered validation sequences, the cups turned over
# -0.54 to 0.53, cups untouched 0.78 and more in 99 % (a ball in a cup 0.33: the quick look sees
# that cup standing, so it is never asked)
LOOK_CHANGED = 0.5
# where the closer look must see the cup turned over too, and none standing there, a smaller
# change is enough (still under the untouched cups' 0.78): a cup turned over, seen unsurely
# standing or as nothing, correlated 0.15-0.55 (rendered validation sequences)
LOOK_CHANGED_CLOSER = 0.7
# Each time the table settles, every cup seen standing is looked at again and compared with how
# it looked when the table last settled. A solid cup turned over where it stood can be seen
# standing by both looks (its flat bottom taken for its inside, 0.93-1.0 sure); its look then
# correlates -0.56 to 0.63 with the last settled one, while a cup left alone keeps 0.69 or more
# (99 % over 0.86), but for one beside a cup taken away (0.32): rendered validation sequences.
# A cup whose look fell under LOOK_TURNED while no neighbour's place changed (under
# LOOK_CHANGED_CLOSER) and no ball was seen in it was turned over where it stood.
LOOK_TURNED = 0.3
# ... and only where the cup was last found where the watch has it (the cups it caught on those
# sequences: 0-7 mm off)
FOUND_OFF_MM = 20.0

# A table nothing moved on for a while is not looked at: a frame costs ~0.3 ms then instead of a
# look's 12-16 ms (the network; 100-250 on a Pi 4 core). Still: no pixel of
# the table's part of the frame, at a quarter of its size in grey, changed by more than
# STILL_GREY in more than STILL_PIXELS places since the last change. A camera's noise (sigma 3
# grey levels, averaged over 16 pixels) changes none; the smallest change a throw makes on the
# rendered sequences (a ball landing in a far cup) changes 53 or more. After a change the watch
# looks at every read for SETTLE_S, as it decides over several looks (a cup gone, a ball resting,
# a tally count steady in three). A still table is looked at again all the same every
# LOOK_AT_LEAST_S (a slow change under the threshold, a light dimming). Still frames are not
# taken as looks that saw the same again: repeating one look's mistake (a glint taken for a
# ball) made it steady, a false throw on a rendered validation sequence.
STILL_GREY = 8
STILL_PIXELS = 3
SETTLE_S = 1.5
LOOK_AT_LEAST_S = 2.0
# the table's part of the frame: its top, and whatever stands on it up to this high (cups are
# 90-140 mm tall), with this margin round it (mm)
STILL_HEIGHT_MM, STILL_MARGIN_MM = 200.0, 100.0


@dataclass
class Tracked:
    side: str
    cup: str
    x: float
    y: float
    slot: str
    seen_at: float = 0.0
    clean_since: float | None = None
    clean_frames: int = 0
    ball_since: float | None = None
    ball_frames: int = 0
    ball_last: float | None = None
    ball_proposed_at: float | None = None
    ball_blind: bool = False     # a ball seen in it from the start: not counted until seen empty
    scores: list[float] = field(default_factory=list)   # how clear a standing cup its last looks saw
    clear_level: float = 0.0      # the best median of its looks, ten at a time (clear from CLEAR_STANDING)
    asked_at: float = -math.inf   # when the closer look was last asked about it, seen unsurely
    found_off: float = 0.0        # mm between where it was last found and where the watch has it

    def saw(self, score: float) -> None:
        self.scores = [*self.scores[-9:], score]
        if len(self.scores) >= 3:   # (statistics' median: 0.3 µs on ten numbers, numpy's 11; every cup, every look)
            self.clear_level = max(self.clear_level, statistics.median(self.scores))

    def clear(self) -> bool:
        """The watch has seen this cup clearly standing (the median of its looks, ten at a time):
        seen turned over now, it was turned. A cup the network was never sure of stands oddly (a
        solid cup's coloured inside in dim light can look turned over, rendered). Once is enough:
        a ball resting in it lowers its looks (0.94 -> 0.84, a rendered solid cup) for the seconds
        before it is turned over, and the turned cup was then not believed."""
        return self.clear_level >= CLEAR_STANDING


@dataclass
class CupWatch:
    cal: Calibration
    gone_s: float = 0.5          # a cup's place bare this long: the cup is gone
    ball_s: float = 0.5          # a ball resting this long in a cup: a throw for that cup
    check_every_s: float = 1.0   # how often the markers are checked (camera moved?)
    strict: bool = False         # raise CameraMoved instead of only stopping and saying so
    # the game's word on whether a cup of a side and colour turned over where it stood is the
    # silver tally (its Silver Cup Rule in effect, RULES.md E10, and the cup too dear to have been
    # made) rather than that cup made; None when there is no game to ask
    turned_is_tally: Callable[[str, str], bool | None] | None = None
    status: str = "starting"
    moved: bool = False
    tracked: list[Tracked] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)   # silent decisions (turned, knocked)
    frame_ms: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reader = reader_for(self.cal)   # the network for cups it learnt, else the colour search
        self._started = False
        self._last_check: float | None = None
        self._bad_checks = 0
        self._newcomers: dict[str, int] = {}
        self._frames = 0
        self._last_read: float | None = None
        self._every = float(getattr(self.reader, "every_s", 0.0))
        # the tally: cups turned over per (side, colour) as last seen steadily; a cup that leaves its
        # place while one more of its colour stands turned on its side went to the tally
        self._turned_base: dict[tuple[str, str], int] = {}
        self._turned_runs: dict[tuple[str, str], tuple[int, int]] = {}
        self._home = {s.name: (s.x, s.y) for s in self.cal.slots}
        self._closer_base: dict[str, int | None] = {}
        # per side: when silver throws were proposed from a ball, not yet marked by a tally cup
        self._silver_unmarked: dict[str, list[float]] = {"A": [], "B": []}
        # only a network's look costs enough to be worth the test (~0.3 ms a read): the colour
        # search of the drawn demo table reads every frame at ~3-5 ms, a still table or not
        self._box = _table_box(self.cal) if self._every > 0 else None
        self._still_ref: tuple[np.ndarray, float] | None = None   # (the last change's quarter-size grey, when)
        self._looked_at = -math.inf
        self._changed_at = math.inf   # when the table's part of the frame last changed
        self.looks = 0                                     # frames the reader looked at (not still)
        self._set_up_looks: dict[str, np.ndarray] = {}    # slot: how its cup looked at the first look
        self._settled_looks: dict[str, np.ndarray] = {}   # slot: how its place looked when the table last settled
        self._places: dict[str, tuple[float, float]] = {}  # slot: where its cup was last seen (watched or not)
        self._spacing = self.cal.layout.pitch                # between neighbours' places (set-up)
        self._settled_for = math.inf                       # the change (its time) those looks followed

    # -------------------------------------------------------------------------------------
    def feed(self, frame: np.ndarray, t: float) -> list[Proposed]:
        """One camera frame taken at ``t`` seconds → the throws it settles (usually none)."""
        # a network's reader looks a few times a second (the watch judges in seconds); the margin:
        # at 15 fps three frames' 0.2 s comes out a hair under 0.2 in floating point
        if self._last_read is not None and t - self._last_read < self._every - 0.01:
            return []
        t0 = time.perf_counter()
        try:
            still = self._still(frame, t)
            if self._check_camera(frame, t):
                return []
            self._last_read = t
            self._frames += 1
            if still and self._started:
                # nothing on the table moved for a while: nothing new to see, but once a settle
                # what changed since the last one
                return self._settled(frame, t)
            # slots without a tracked cup are searched now and then only (a cup put back)
            # silver cups are looked for round their slot each time: grey all over, a silver
            # cup's wall and inside look like its rim, and a hint would let it drift
            hints = {k.slot: (k.x, k.y) if k.cup != "silver" else self._home[k.slot] for k in self.tracked}
            reading = self.reader.read(frame, hints=hints, turned=self.reader.sees_turned,
                                       search_all=not self._started or self._frames % 8 == 0)
            self._looked_at = t
            self.looks += 1
            self._tally(reading.upside_down)
            if not self._started:
                # a "ball" seen in a cup from the first look is part of that cup (a highlight, a
                # lit bottom): no ball rests in a cup at set-up. Its ball counts once it has been
                # seen empty for a second.
                self.tracked = [Tracked(c.side, c.cup, c.x, c.y, c.slot, t, ball_last=t if c.ball >= BALL_FRACTION else None,
                                        ball_blind=c.ball >= BALL_FRACTION) for c in reading.cups]
                self._started = True
                looks = self.reader.looks(frame, [(k.x, k.y) for k in self.tracked])
                self._set_up_looks = dict(zip((k.slot for k in self.tracked), looks, strict=True)) if looks else {}
                self._settled_looks, self._settled_for = dict(self._set_up_looks), self._changed_at
                self._places = {k.slot: (k.x, k.y) for k in self.tracked}
                self._spacing = _spacing(list(self._places.values()), self.cal.layout.pitch)
                closer = self.reader.second_look(frame)
                self._closer_base = {side: self._turned_on(side, closer) for side in ("A", "B")}
                self.status = f"watching {len(self.tracked)} cups"
                return []
            return self._update(reading.cups, t, frame)
        finally:
            self.frame_ms.append((time.perf_counter() - t0) * 1000)

    def _still(self, frame: np.ndarray, t: float) -> bool:
        """The table's part of the frame is as it was SETTLE_S ago and more, and the last look was
        less than LOOK_AT_LEAST_S ago: nothing new to look at. A frame that changed is the
        reference from now on."""
        if self._box is None:
            self._changed_at = t
            return False
        x0, y0, x1, y1 = self._box
        # (bilinear at half size averages 2 × 2 pixels, then 2 × 2 of those: a 4 × 4 mean in 0.2 ms,
        # a quarter of INTER_AREA's time on the colour frame)
        half = cv2.resize(frame[y0:y1, x0:x1], ((x1 - x0) // 2, (y1 - y0) // 2), interpolation=cv2.INTER_LINEAR)
        small = cv2.resize(cv2.cvtColor(half, cv2.COLOR_BGR2GRAY), ((x1 - x0) // 4, (y1 - y0) // 4),
                           interpolation=cv2.INTER_AREA)
        ref = self._still_ref
        if ref is None or ref[0].shape != small.shape \
                or np.count_nonzero(cv2.absdiff(small, ref[0]) > STILL_GREY) > STILL_PIXELS:
            self._still_ref = (small, t)
            self._changed_at = t
            return False
        return t - ref[1] >= SETTLE_S and t - self._looked_at < LOOK_AT_LEAST_S

    def _check_camera(self, frame: np.ndarray, t: float) -> bool:
        if self._last_check is not None and t - self._last_check < self.check_every_s:
            return self.moved
        if self._last_check is not None and self._changed_at < self._last_check and not self.moved \
                and self._bad_checks == 0:
            # the markers lie on the table: nothing there changed since they were last found where
            # calibrated, so they still are (a check costs 4-6 ms here)
            self._last_check = t
            return False
        self._last_check = t
        message = self.cal.moved_message(self.cal.check_markers(frame))
        if message is None:
            self.reader.balance(frame)   # the light's colour, measured on the markers once a check
            self._bad_checks = 0
            if self.moved:
                self.moved = False
                self.status = "markers back where calibrated: watching again"
            return False
        self._bad_checks += 1
        if self._bad_checks >= 2:      # one check may catch an arm over two markers
            self.moved = True
            self.status = message
            if self.strict:
                raise CameraMoved(message)
        return self.moved

    # -------------------------------------------------------------------------------------
    def _update(self, seen: list[CupSeen], t: float, frame: np.ndarray) -> list[Proposed]:
        out: list[Proposed] = []
        labels = self.reader.last_labels
        free = list(seen)
        matched: list[tuple[Tracked, CupSeen]] = []
        # same slot first, then the nearest of the same side and colour within 60 mm
        for k in self.tracked:
            hit = next((c for c in free if c.slot == k.slot), None)
            if hit is None:
                near = [c for c in free if c.side == k.side and c.cup == k.cup
                        and math.hypot(c.x - k.x, c.y - k.y) < 45]
                hit = min(near, key=lambda c: math.hypot(c.x - k.x, c.y - k.y)) if near else None
            if hit is not None and k.cup != "silver" and math.hypot(hit.x - k.x, hit.y - k.y) > 45:
                hit = None      # a cup does not jump: that is something else of its colour
            if hit is not None:
                free.remove(hit)
                matched.append((k, hit))
        seen_now = {id(k) for k, _ in matched}
        # cups that just went out of sight (seen in the last 3 s; one unseen for longer is a cup
        # gone unconfirmed): a hand, an arm or a leaning player is likely over them
        hidden = [o for o in self.tracked if id(o) not in seen_now and o.cup != "silver" and t - o.seen_at < 3.0]
        for k, c in matched:
            if c.score >= 0.8 or k.cup == "silver":   # only a clear rim moves a cup (knocked)
                k.x, k.y = c.x, c.y
            k.found_off = math.hypot(c.x - k.x, c.y - k.y)
            k.seen_at = t
            k.clean_since, k.clean_frames = None, 0
            k.saw(c.score)
            # a ball counts only in a cup seen whole, its neighbours seen too (no hand, arm or
            # leaning player near it, nor their shadows)
            if c.score >= 0.85 and not self._neighbour_hidden(k, hidden):
                out.extend(self._ball(k, c.ball >= BALL_FRACTION, t))
        for k, _ in matched:
            out.extend(self._turned_yet_seen(k, t, frame, seen=True))
        # Many cups out of sight at once: a player leaning over the table or an arm across it,
        # whose sleeve may even look like a cup's colour where a cup still stands. Nothing is
        # called gone until they are back in sight.
        crowd = len(hidden) >= CROWD
        for k in [k for k in self.tracked if id(k) not in seen_now]:
            if k.cup == "silver":     # never removed (E11); hidden or turned for the tally
                continue
            # something over its place, or over a neighbour (an arm, a player leaning): wait
            blocked = crowd or self._neighbour_hidden(k, hidden)
            # a cup clearly seen standing and now seen turned over right on its place: that
            # explains the place (a made cup turned over, or the tally; no hand's colours)
            turned_here = self.reader.sees_turned and k.clear() \
                and self.reader.turned_at(labels, k.cup, (k.x, k.y), 0.0) is not None
            if blocked or (not turned_here and self.reader.clean(labels, k.x, k.y) < 0.9):
                k.clean_since, k.clean_frames = None, 0
                if not blocked:   # not bare, nor seen turned: the closer look may see it turned
                    out.extend(self._turned_yet_seen(k, t, frame, seen=False))
                continue
            k.clean_since = t if k.clean_since is None else k.clean_since
            k.clean_frames += 1
            if t - k.clean_since >= self.gone_s and k.clean_frames >= 3:
                closer = self.reader.second_look(frame)
                others = [(o.x, o.y) for o in self.tracked if id(o) in seen_now and o.cup == k.cup and o is not k]
                quick_turned = self.reader.turned_at(labels, k.cup, (k.x, k.y), 40.0, others) is not None
                # the quick look sees it turned over where it stood, and it no longer looks as it
                # did: a closer look that sees it standing took its bottom for its inside
                changed = quick_turned and k.clear() and self._look_changed(k, frame)
                if closer is not None and not changed and self._at(k, closer.cups):
                    # the closer look sees a cup standing there (the quick one missed it): wait,
                    # and ask again only after CLOSER_AGAIN_S (a cup the quick look never sees
                    # would cost a closer look every half second)
                    k.clean_since, k.clean_frames = t + CLOSER_AGAIN_S, 0
                    continue
                if self._leaves(k, t, "cup taken out"):
                    continue
                evidence = {"slot": k.slot, "position_mm": [round(k.x), round(k.y)],
                            "last_seen": round(k.seen_at, 3), "since": round(k.clean_since, 3),
                            "frames": k.clean_frames, "at": round(t, 3)}
                # a throw is proposed from a turned cup only where the closer look sees it too
                # (a reader with no closer look, the drawn demo table's colour search: its own)
                closer_turned = closer is not None and self._at(k, closer.upside_down)
                if closer_turned or quick_turned:
                    sure = (closer_turned or closer is None or changed) and k.clear()
                    out.extend(self._turned_in_place(k, t, {**evidence, "look_changed": changed} if changed else evidence, sure))
                    continue
                quick_tally, closer_tally = self._to_tally(k.side, k.cup), self._closer_tally(k.side, closer)
                if quick_tally or closer_tally:
                    out.extend(self._tally_cup(k, t, evidence, "cup turned over for the tally",
                                               closer_tally or closer is None))
                    continue
                out.append(Proposed({"type": "throw", "side": k.side, "cup": k.cup}, {"how": "cup gone", **evidence}))
        # cups that appear and stay (put back, or hidden at the start) are tracked from then on
        for c in free:
            self._newcomers[c.slot] = self._newcomers.get(c.slot, 0) + 1
            if self._newcomers[c.slot] >= 4 and not any(k.slot == c.slot for k in self.tracked):
                self.tracked.append(Tracked(c.side, c.cup, c.x, c.y, c.slot, t))
                self._newcomers.pop(c.slot)
        if self._frames % 8 == 0:   # newcomers are looked for on those frames only
            for slot in list(self._newcomers):
                if not any(c.slot == slot for c in free):
                    self._newcomers.pop(slot)
        return out

    def _turned_yet_seen(self, k: Tracked, t: float, frame: np.ndarray, seen: bool) -> list[Proposed]:
        """A cup seen clearly standing, now seen standing only unsurely for three looks (under
        CLEAR_STANDING, or UNSURE_DROP under how sure the watch was of it), or ``seen`` no more
        for ``gone_s`` while its place is neither bare nor seen turned by the quick look: a solid
        cup turned over where it stood can look to the quick look like a cup standing (its flat
        bottom for its inside, 0.58-0.87 sure where it was 1.0, rendered), or like nothing it
        knows, so it is never gone. Where its place no longer looks as at set-up (LOOK_CHANGED_CLOSER)
        and the closer look sees a cup turned over there and none standing, it was turned over.
        The closer look is asked about a cup once in CLOSER_AGAIN_S at most."""
        if k.cup == "silver" or not k.clear() or t - k.asked_at < CLOSER_AGAIN_S:
            return []
        if seen and (len(k.scores) < 3 or max(k.scores[-3:]) >= max(CLEAR_STANDING, k.clear_level - UNSURE_DROP)):
            return []
        if not seen and t - k.seen_at < self.gone_s:
            return []
        k.asked_at = t
        if not self._look_changed(k, frame, LOOK_CHANGED_CLOSER):
            return []
        closer = self.reader.second_look(frame)
        if closer is None:
            return []
        if not self._at(k, closer.upside_down) or self._at(k, closer.cups):
            return []
        if self._leaves(k, t, "cup turned over"):
            return []
        evidence = {"slot": k.slot, "position_mm": [round(k.x), round(k.y)], "at": round(t, 3),
                    "seen_unsurely": [round(v, 2) for v in k.scores[-3:]], "look_changed": True}
        return self._turned_in_place(k, t, evidence, True)

    def _settled(self, frame: np.ndarray, t: float) -> list[Proposed]:
        """Once each time the table settles (SETTLE_S still): every cup's place (where its cup
        was last seen, watched or not) is compared with how it looked when the table last
        settled; a cup seen standing, where the watch has it, whose look fell under LOOK_TURNED
        while no neighbour's place changed (a cup beside it taken away shows in its look), with no
        ball seen in it, was turned over where it stood. ~6 ms for 34 places, once a settle."""
        if self._settled_for == self._changed_at or not self._settled_looks:
            return []
        self._settled_for = self._changed_at
        for k in self.tracked:
            self._places[k.slot] = (k.x, k.y)
        slots = list(self._places)
        looks = self.reader.looks(frame, [self._places[slot] for slot in slots])
        if not looks:
            return []
        corr = {slot: float(cv2.matchTemplate(look, self._settled_looks[slot], cv2.TM_CCOEFF_NORMED)[0, 0])
                for slot, look in zip(slots, looks, strict=True) if slot in self._settled_looks}
        self._settled_looks = dict(zip(slots, looks, strict=True))
        changed = [self._places[slot] for slot, c in corr.items() if c < LOOK_CHANGED_CLOSER]
        reach = 1.6 * self._spacing   # a diagonal neighbour too
        seen_since = t - SETTLE_S - 2 * max(self._every, 0.1)
        out: list[Proposed] = []
        for k in list(self.tracked):
            c = corr.get(k.slot)
            if c is None or c >= LOOK_TURNED or k.cup == "silver" or not k.clear() or k.seen_at < seen_since:
                continue
            if k.found_off > FOUND_OFF_MM:
                continue   # found off its place (knocked, seen unclearly): its look is off the cup
            if k.ball_last is not None or k.ball_since is not None:
                continue   # a ball seen in it changes its look: the ball's own rule says what it was
            if any(0.0 < math.hypot(x - k.x, y - k.y) < reach for x, y in changed):
                continue   # a neighbour's place changed too (a cup taken away shows in its look)
            if self._leaves(k, t, "cup turned over"):
                continue
            evidence = {"slot": k.slot, "position_mm": [round(k.x), round(k.y)], "at": round(t, 3),
                        "settled_look": round(c, 2), "found_off_mm": round(k.found_off)}
            out.extend(self._turned_in_place(k, t, evidence, True))
        return out

    def _leaves(self, k: Tracked, t: float, what: str) -> bool:
        """The watch stops watching this cup; True (and logged) where its ball's throw was
        proposed lately: the cup leaving or turned over is that throw, not another."""
        self.tracked.remove(k)
        if k.ball_proposed_at is not None and t - k.ball_proposed_at < 30:
            self.log.append({"t": t, "slot": k.slot, "what": f"{what} after its ball was proposed"})
            return True
        return False

    def _turned_in_place(self, k: Tracked, t: float, evidence: dict[str, Any], sure: bool) -> list[Proposed]:
        """A cup turned over where it stood: the silver tally where the game says so (or a silver
        throw awaits its tally cup), else that cup made and turned over.
        Not ``sure`` (the closer look does not see it turned): nothing is proposed."""
        tally = self.turned_is_tally(k.side, k.cup) if self.turned_is_tally is not None else None
        # (a silver throw proposed a little before marks no cup the game says could be made: it
        # was a silver cup made while the rule was not in effect, and no cup is turned for it)
        if tally or (tally is None and self._silver_marked(k.side, t, peek=True)):
            return self._tally_cup(k, t, evidence, "cup turned over where it stood, for the tally", sure)
        if tally is None or not sure:
            # no game to ask, or only the quick look sees it turned (a cup coloured inside can
            # look so): a turned cup is the tally, as before, and proposes nothing
            self.log.append({"t": t, "slot": k.slot, "what": "cup turned upside down: not an event"})
            return []
        self.log.append({"t": t, "slot": k.slot, "what": "cup turned over where it stood: made"})
        return [Proposed({"type": "throw", "side": k.side, "cup": k.cup}, {"how": "cup turned over", **evidence})]

    def _tally_cup(self, k: Tracked, t: float, evidence: dict[str, Any], what: str, sure: bool) -> list[Proposed]:
        """One more cup turned for a side's silver tally: the silver cup was made. Its throw was
        proposed already when its ball was seen; otherwise it is proposed now, where the closer
        look sees the tally cup too (``sure``)."""
        if self._silver_marked(k.side, t):
            self.log.append({"t": t, "slot": k.slot, "what": f"{what}: its silver throw was proposed"})
            return []
        if not sure:
            self.log.append({"t": t, "slot": k.slot, "what": f"{what} (the quick look only): not an event"})
            return []
        self.log.append({"t": t, "slot": k.slot, "what": f"{what}: the silver cup made, its ball unseen"})
        return [Proposed({"type": "throw", "side": k.side, "cup": "silver"},
                         {"how": "tally cup turned", "tally_cup": k.cup, **evidence})]

    def _silver_marked(self, side: str, t: float, peek: bool = False) -> bool:
        """A silver throw of this side proposed from its ball (in the last TALLY_AFTER_S) that no
        tally cup has marked yet: this cup marks it (unless only peeking)."""
        waiting = [s for s in self._silver_unmarked.get(side, []) if t - s < TALLY_AFTER_S]
        self._silver_unmarked[side] = waiting
        if not waiting:
            return False
        if not peek:
            waiting.pop(0)
        return True

    def _tally(self, turned: list[CupSeen]) -> None:
        """Follow how many cups of each side and colour stand turned over (a count seen in three
        reads running is steady); the first steady counts are the base."""
        now: dict[tuple[str, str], int] = {}
        for c in turned:
            now[(c.side, c.cup)] = now.get((c.side, c.cup), 0) + 1
        for key in set(now) | set(self._turned_runs) | set(self._turned_base):
            n = now.get(key, 0)
            last, run = self._turned_runs.get(key, (n, 0))
            run = run + 1 if n == last else 1
            self._turned_runs[key] = (n, run)
            if run >= 3 and (key not in self._turned_base or n < self._turned_base[key]):
                self._turned_base[key] = n   # (fewer: a tally cup taken away or hidden)

    def _to_tally(self, side: str, cup: str) -> bool:
        """A cup of this side and colour just left its place: it went to the silver tally (a
        throw already proposed for the silver cup) where one more cup of its colour now stands
        turned over on its side than before (:meth:`_closer_tally` counts them of any colour)."""
        if not self.reader.sees_turned:
            return False
        key = (side, cup)
        n = self._turned_runs.get(key, (0, 0))[0]
        if n > self._turned_base.get(key, 0):
            self._turned_base[key] = n
            return True
        return False

    @staticmethod
    def _turned_on(side: str, closer) -> int | None:
        return None if closer is None else sum(c.side == side for c in closer.upside_down)

    def _closer_tally(self, side: str, closer) -> bool:
        """The closer look sees more cups of this side turned over than when the watch began (or
        than at its last tally cup): the cup that left went to the tally. The quick look misses a
        tally cup more often (a yellow one under a spot lamp, rendered), the closer one sees it."""
        n, base = self._turned_on(side, closer), self._closer_base.get(side)
        if n is None or base is None:
            return False
        if n > base:
            self._closer_base[side] = n
            return True
        self._closer_base[side] = n   # (fewer: a tally cup taken away or hidden)
        return False

    def _at(self, k: Tracked, cups: list[CupSeen]) -> bool:
        """One of these cups (a reading's) is at this cup's place."""
        return any(math.hypot(c.x - k.x, c.y - k.y) < self.reader.reach for c in cups)

    def _look_changed(self, k: Tracked, frame: np.ndarray, bar: float = LOOK_CHANGED) -> bool:
        """The cup's place no longer looks as it did at set-up (correlates under ``bar``); False
        where the watch has no set-up look of it (a cup put back later) or the reader cannot look."""
        before = self._set_up_looks.get(k.slot)
        now = self.reader.looks(frame, [(k.x, k.y)]) if before is not None else None
        return bool(now) and float(cv2.matchTemplate(now[0], before, cv2.TM_CCOEFF_NORMED)[0, 0]) < bar

    def _neighbour_hidden(self, k: Tracked, hidden: list[Tracked]) -> bool:
        """A neighbour just went out of sight: a hand, an arm or a leaning player is likely over
        this cup too. (By the layout's pitch, not the places' own spacing as the settled look
        counts neighbours: the wider reach waited on one more hidden neighbour and missed a
        throw of the general validation sequences.)"""
        reach = 1.6 * self.cal.layout.pitch
        return any(o is not k and math.hypot(o.x - k.x, o.y - k.y) < reach for o in hidden)

    def _ball(self, k: Tracked, ball: bool, t: float) -> list[Proposed]:
        if k.ball_blind:
            if ball:
                k.ball_last = t
            elif k.cup == "silver" and self.reader.sees_turned:
                # a silver cup whose metal showed a "ball" at set-up shows one again now and then
                # (a rendered test game's dim lamp proposed one): its balls are not trusted this
                # game, and a silver throw is read from the cup then turned over for the tally
                pass
            elif k.ball_last is None or t - k.ball_last >= 1.0:
                k.ball_blind, k.ball_last = False, None
            return []
        if ball:
            # (a gap longer than a look or two: the ball was out in between)
            if k.ball_since is None or (k.ball_last is not None and t - k.ball_last > max(0.25, 1.6 * self._every)):
                k.ball_since, k.ball_frames = t, 0
            k.ball_last = t
            k.ball_frames += 1
            if (k.ball_proposed_at is None and t - k.ball_since >= self.ball_s and k.ball_frames >= 3):
                k.ball_proposed_at = t
                if k.cup == "silver":
                    self._silver_unmarked.setdefault(k.side, []).append(t)
                return [Proposed({"type": "throw", "side": k.side, "cup": k.cup},
                                 {"how": "ball in cup", "slot": k.slot, "position_mm": [round(k.x), round(k.y)],
                                  "since": round(k.ball_since, 3), "frames": k.ball_frames, "at": round(t, 3)})]
        elif k.ball_last is not None and t - k.ball_last >= 1.0:
            # the ball has been out (the cup seen empty) for a second: the next ball is a new throw
            k.ball_since, k.ball_frames, k.ball_last, k.ball_proposed_at = None, 0, None, None
        return []


def _spacing(places: list[tuple[float, float]], default: float) -> float:
    """The median distance from each place to its nearest: neighbours' spacing as the places
    show it. A learnt table's places lie where the rims show on the table's plane, farther apart
    than the layout's pitch says (a cup taken away changed the look of one 1.9 pitches off)."""
    if len(places) < 2:
        return default
    xy = np.array(places, np.float64)
    d = np.hypot(xy[:, None, 0] - xy[None, :, 0], xy[:, None, 1] - xy[None, :, 1])
    np.fill_diagonal(d, np.inf)
    return float(np.median(d.min(axis=1)))


def _table_box(cal: Calibration) -> tuple[int, int, int, int] | None:
    """(x0, y0, x1, y1): the frame's pixels that show the table or anything standing on it (the
    calibration's frame size: the reader refuses frames of another); None when hardly any do."""
    L, m = cal.layout, STILL_MARGIN_MM
    corners = [(x, y, z) for x in (-m, L.table_w + m) for y in (-m, L.table_h + m) for z in (0.0, STILL_HEIGHT_MM)]
    px = cal.project(np.array(corners, np.float64))
    w, h = cal.image_size
    x0, y0 = np.floor(px.min(axis=0)).astype(int)
    x1, y1 = np.ceil(px.max(axis=0)).astype(int)
    box = max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1))
    return box if box[2] - box[0] >= 16 and box[3] - box[1] >= 16 else None
