"""What ``companion serve`` runs: the table, the panel and its confirm step, the camera loop and
the scoreboard app, wired from ``companion.toml``.

The service is the web's one way into the live loop: it implements
:class:`companion.web.app.LiveLink` (health, frames, the buzzer's "refused", the demo's next
game), so the web never reaches into the loop, the panel or the rendered table."""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from companion.live.camera import ResilientCamera, Source
from companion.live.loop import Live
from companion.table import Table

log = logging.getLogger(__name__)


class Rendered(Protocol):
    """A rendered table played as the camera (the demo; ``companion.sim.rendered_table``)."""

    reader: Any
    duration: float

    def source(self) -> Source: ...

    def colour_profiles(self) -> Any: ...

    def new_game_event(self) -> dict[str, Any]: ...

    def start_players(self, table: Table, press: Any) -> None: ...

    def stop(self) -> None: ...

    def next(self) -> Rendered: ...


class Service:
    """What ``companion serve`` runs: the table, the panel and its confirm step, the camera loop
    (when ``[camera] source`` names one) and the scoreboard app. ``rendered`` is the demo's
    rendered table, required when ``source = "render"``: it is the camera, and its players press
    the button for misses."""

    def __init__(self, config: dict[str, Any], table: Table | None = None, pin_factory: Any = None,
                 rendered: Rendered | None = None):
        from companion.config import data_path
        from companion.hardware.panel import make_panel
        from companion.live.confirm import Confirmer
        from companion.web.app import create_app

        if (config["camera"]["source"] == "render") != (rendered is not None):
            raise ValueError("a rendered table is the camera exactly when [camera] source is 'render'")
        self.config = config
        self._demo_lock = threading.Lock()  # one "new demo game" at a time
        self._usr1: Any = None  # SIGUSR1's handler before start, put back at stop
        self.table = table or Table(data_path(config, "table.sqlite"))
        self.panel = make_panel(config, pin_factory=pin_factory)
        self.confirmer = Confirmer(self.table, self.panel, config["confirm"]["auto_seconds"])
        self.rendered = rendered
        camera = self._camera()
        self.live = Live(camera, self.table, self._processors() if camera else [], self.confirmer, self.panel,
                         max_fps=float(config["camera"]["fps"]))  # frames past it cost a Pi core and see nothing new
        self.app = create_app(config, self.table, self)

    # -- LiveLink: what the web may ask of the running service
    @property
    def demo(self) -> bool:
        return self.rendered is not None

    def health(self) -> dict[str, Any]:
        return self.live.health()

    def latest_jpeg(self, quality: int = 80, raw: bool = False) -> bytes | None:
        return self.live.latest_jpeg(quality, raw)

    def refused(self) -> None:
        """A phone's confirm the rules refused: the buzzer says so, as for the button's."""
        self.panel.sound("refused")

    def remeasure_camera(self) -> bool:
        """The camera measures exposure, white balance and focus again, then holds them (after
        the light changed, or a lamp was switched on); False when there is no camera open to ask."""
        camera = self.live.camera
        asked = camera is not None and camera.remeasure()
        log.info("camera: re-measure %s", "asked" if asked else "not possible: no camera open with such controls")
        return asked

    def new_demo_game(self) -> dict[str, Any]:
        """A new rendered game from the next seed (the demo's "new game"). Calls are served one
        at a time, and each stops the players of the game before, so two taps at once never
        leave two sets of simulated players pressing the button."""
        if self.rendered is None:
            raise RuntimeError("not the demo")
        with self._demo_lock:
            self.live.stop()
            self.rendered.stop()
            self.rendered = self.rendered.next()
            self.live.camera = ResilientCamera(self.rendered.source, "render")
            self.live.processors = self._processors()
            state = self.table.start(self.rendered.new_game_event(), source="cli")
            self.rendered.start_players(self.table, self.confirmer.short_press)
            self.live.start()
            return state

    # -- wiring
    def _camera(self) -> ResilientCamera | None:
        from companion.live.camera import open_source

        render = self.rendered.source if self.rendered is not None else None
        return open_source(self.config["camera"]["source"], self.config, render=render)

    def _processors(self) -> list[Any]:
        from companion.config import calibration_file
        from companion.live.pipeline import TableVision
        from companion.vision.colour import ColourFileError, default_profiles, load_profiles

        if self.rendered is not None:
            # the rendered table is its own table: never mix its calibration with a real one;
            # its colours are learned from its own frame, as a person would at a real table
            profiles = self.rendered.colour_profiles()
            return [TableVision(self.table, None, profiles=profiles, reader=self.rendered.reader, learn_cups=False)]
        try:
            profiles = load_profiles(self.config["calibration"]["colours"] or None, self.config["data"]["dir"])
        except ColourFileError as err:
            # the service always starts: a colours file it cannot use (a bad edit, a power cut
            # while it was written) leaves the shipped defaults and says so, as a stored row does
            profiles = default_profiles()
            self.table.notices.append(f"dice colour profiles: {err}; using the shipped defaults "
                                      "(companion calibrate colours to learn them again)")
            log.warning("%s", self.table.notices[-1])
        vision = TableVision(self.table, calibration_file(self.config, "table"), profiles=profiles,
                             camera_view=self._camera_view)
        self.table.notices.extend(vision.notices)
        return [vision]

    def _camera_view(self) -> Any:
        """What the open camera's frames are taken under (None: no camera open, or it does not say)."""
        live = getattr(self, "live", None)   # (asked from the loop, which runs once live exists)
        camera = live.camera if live is not None else None
        return camera.view() if camera is not None else None

    def start(self) -> None:
        if self.rendered is not None:
            state = self.table.state()
            if state.get("game") is None or state.get("finished") or state.get("game") != "exact21":
                self.table.start(self.rendered.new_game_event(), source="cli")
            self.rendered.start_players(self.table, self.confirmer.short_press)
        self.live.start()
        self._listen_for_remeasure()

    def _listen_for_remeasure(self) -> None:
        """SIGUSR1 asks the camera to measure again (``systemctl kill -s USR1 companion``): the
        one way in from outside that needs no new page or endpoint. Without a handler SIGUSR1
        would end the service, so it is taken whatever the camera; only the main thread may."""
        import signal

        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGUSR1"):
            return
        self._usr1 = signal.signal(signal.SIGUSR1, lambda _signum, _frame: self.remeasure_camera())

    def stop(self) -> None:
        import signal

        previous, self._usr1 = self._usr1, None
        if previous is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGUSR1, previous)
        if self.rendered is not None:
            self.rendered.stop()
        self.live.stop()
        close = getattr(self.panel, "close", None)
        if close is not None:
            close()
