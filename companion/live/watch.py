"""Watch: turn a stream of per-frame observations into proposed events, only once things have
settled. The dice part (settled rolls) is in ``watch_dice``; the cups part (a cup gone and
staying gone, a ball resting in a cup) in ``watch_cups``. Both hand out :class:`Proposed`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Proposed:
    """An event the camera proposes, with the evidence a player can check (which slot, how many
    frames, when). ``event`` is an EVENTS.md event without ``source``."""

    event: dict[str, Any]
    evidence: dict[str, Any] = field(default_factory=dict)
