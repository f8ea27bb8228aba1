"""The default 21 Exact table layout in table millimetres (DESIGN.md's marker convention: origin at
marker 0's centre, x towards marker 1, y towards marker 3, i.e. towards the back edge).

The table is 900 × 400 mm between marker centres. Side A stands in the half nearer markers 0 and 3
(x < 450), side B in the other half (EVENTS.md). Per side, each colour is a *row* of four cups
running from the back edge towards the players; the silver cup stands between the red and yellow
rows; the side's four dice lie in front of their rows; a spot in front of the silver cup takes the
upside-down cups of the silver tally. Side B is side A mirrored about the middle line.

Every number here is a default: the calibration file stores the layout it used, and a user edits
that file (``"layout"``) to match the real table; :func:`Layout.from_dict` reads it back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

COLOURS = ("blue", "red", "green", "yellow")
CUPS = (*COLOURS, "silver")
SIDES = ("A", "B")


@dataclass(frozen=True)
class Slot:
    side: str
    cup: str          # blue | red | green | yellow | silver
    index: int        # 0 = back of the row
    x: float
    y: float

    @property
    def name(self) -> str:
        return f"{self.side}.{self.cup}.{self.index}"


@dataclass
class Layout:
    table_w: float = 900.0        # mm between marker centres, marker 0 → marker 1
    table_h: float = 400.0        # mm between marker centres, marker 0 → marker 3
    rim_d: float = 66.0           # cup rim diameter
    base_d: float = 46.0          # cup base diameter
    cup_h: float = 90.0           # cup height
    ball_d: float = 40.0
    die_mm: float = 22.0
    pitch: float = 72.0           # distance between cup centres in a row and between rows
    back_y: float = 320.0         # y of the back cup of each row
    first_x: float = 120.0        # side A: x of the first row (the one nearest the table's side edge)
    dice_y: float = 50.0          # y of the dice in front of the rows
    # Order of the rows of side A from its outer edge towards the middle; side B mirrors it.
    rows: list[str] = field(default_factory=lambda: ["blue", "red", "silver", "yellow", "green"])
    cups_per_row: int = 4

    # --- derived geometry -------------------------------------------------------------------
    def _x(self, side: str, column: int) -> float:
        x = self.first_x + column * self.pitch
        return x if side == "A" else self.table_w - x

    def slots(self) -> list[Slot]:
        out: list[Slot] = []
        for side in SIDES:
            for column, cup in enumerate(self.rows):
                x = self._x(side, column)
                if cup == "silver":
                    mid = self.back_y - self.pitch * (self.cups_per_row - 1) / 2
                    out.append(Slot(side, "silver", 0, x, mid))
                else:
                    for i in range(self.cups_per_row):
                        out.append(Slot(side, cup, i, x, self.back_y - i * self.pitch))
        return out

    def dice_spots(self) -> dict[str, dict[str, tuple[float, float]]]:
        """Where each side's die of each colour lies: in front of its row."""
        return {side: {cup: (self._x(side, column), self.dice_y)
                       for column, cup in enumerate(self.rows) if cup != "silver"} for side in SIDES}

    def tally_spot(self, side: str) -> tuple[float, float]:
        """Where the upside-down cups of the silver tally go: in front of the silver cup."""
        return (self._x(side, self.rows.index("silver")), self.dice_y + 15.0)

    def side_of(self, x: float) -> str:
        return "A" if x < self.table_w / 2 else "B"

    def zone(self, side: str) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of a side's half of the table."""
        half = self.table_w / 2
        return (0.0, 0.0, half, self.table_h) if side == "A" else (half, 0.0, self.table_w, self.table_h)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layout:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"unknown layout key(s): {', '.join(unknown)}")
        layout = cls(**known)
        if sorted(layout.rows) != sorted(CUPS):
            raise ValueError(f"layout rows must name each of {', '.join(CUPS)} once")
        return layout
