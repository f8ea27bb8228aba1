"""The live loop with a real Table (SQLite file), a real camera source (an image folder, frames
from Python) and a small real vision processor written for the test: a coloured square on the
table that disappears is a cup made."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.hardware import NullPanel
from companion.live.camera import CallableSource, ImageFolderSource, ResilientCamera
from companion.live.confirm import Confirmer
from companion.live.loop import Live
from companion.live.watch import Proposed
from companion.table import Table

NEW_GAME = {"type": "new_game", "game": "exact21", "sides": [{"name": "A"}, {"name": "B"}]}
DICE = [{"type": "dice", "side": "A", "values": {"blue": 3, "red": 4, "green": 2, "yellow": 5}},
        {"type": "dice", "side": "B", "values": {"blue": 1, "red": 2, "green": 3, "yellow": 6}}]
RED = (0, 0, 220)  # BGR


def scene(red_cup: bool, noise: int = 0) -> np.ndarray:
    img = np.full((120, 160, 3), 200, np.uint8)
    if red_cup:
        cv2.circle(img, (40, 60), 15, RED, -1)
    if noise:
        rng = np.random.default_rng(noise)
        img = cv2.add(img, rng.integers(0, 12, img.shape, dtype=np.uint8))
    return img


class RedCupWatch:
    """A tiny real processor: side A's red cup (a red disc) gone for ``settle`` frames in a row
    is a throw into it. Draws the disc it tracks."""

    name = "redcup"

    def __init__(self, settle: int = 3):
        self.settle = settle
        self.gone = 0
        self.present = True
        self.at: tuple[int, int] | None = None

    def _find(self, frame: np.ndarray) -> tuple[int, int] | None:
        mask = cv2.inRange(frame, (0, 0, 150), (80, 80, 255))
        if cv2.countNonZero(mask) < 200:
            return None
        m = cv2.moments(mask)
        return int(m["m10"] / m["m00"]), int(m["m01"] / m["m00"])

    def feed(self, frame: np.ndarray, t: float) -> list[Proposed]:
        at = self._find(frame)
        if at is not None:
            self.at, self.gone, self.present = at, 0, True
            return []
        self.gone += 1
        if self.present and self.gone >= self.settle:
            self.present = False
            return [Proposed({"type": "throw", "side": "A", "cup": "red"},
                             {"slot": "A/red", "frames": self.gone, "t": t})]
        return []

    def draw(self, frame: np.ndarray) -> np.ndarray:
        if self.at is not None:
            cv2.circle(frame, self.at, 20, (0, 255, 0), 2)
        return frame

    def health(self) -> dict:
        return {"present": self.present}


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    t = Table(tmp_path / "table.sqlite")
    t.start(NEW_GAME)
    for e in DICE:
        t.apply(e)
    yield t
    t.close()


def folder_of(tmp_path: Path, frames: list[np.ndarray]) -> Path:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, f in enumerate(frames):
        cv2.imwrite(str(folder / f"{i:04d}.png"), f)
    return folder


def test_a_cup_gone_from_the_frames_is_proposed_with_its_evidence(table: Table, tmp_path: Path):
    frames = [scene(True, i) for i in range(1, 5)] + [scene(False, i) for i in range(5, 10)]
    camera = ResilientCamera(lambda: ImageFolderSource(folder_of(tmp_path, frames)))
    live = Live(camera, table, [RedCupWatch(settle=3)])
    while live.step():
        pass
    (pending,) = table.pending()
    assert pending.event == {"type": "throw", "side": "A", "cup": "red"}
    assert pending.source == "camera"
    assert pending.evidence["by"] == "redcup" and pending.evidence["frames"] == 3
    h = live.health()
    assert h["frames"] == 9 and h["proposed"] == 1 and h["dropped"] == 0
    assert set(h["stages"]) == {"capture", "redcup", "propose", "total"}
    assert h["stages"]["total"]["n"] == 9 and h["stages"]["total"]["median_ms"] > 0
    assert h["camera"]["state"] == "ended"
    json.dumps(h)  # the health page serves it as JSON


def test_live_with_auto_confirm_scores_the_throw(table: Table):
    frames = iter([scene(True)] * 3 + [scene(False)] * 20)
    confirmer = Confirmer(table, NullPanel("test"), auto_seconds=0.05)
    camera = ResilientCamera(lambda: CallableSource(frames))
    live = Live(camera, table, [RedCupWatch()], confirmer=confirmer, max_fps=200)
    live.start()
    try:
        deadline = time.monotonic() + 5
        while table.state()["scores"]["A"] != 4 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        live.stop()
    assert table.state()["scores"]["A"] == 4
    assert table.export(table.game_id or 0, raw=True)[-1]["source"] == "auto"
    assert not live.running


def test_a_proposal_the_table_refuses_is_counted_not_fatal(tmp_path: Path):
    t = Table(tmp_path / "t.sqlite")  # no game started: every proposal is refused (NO_GAME)
    frames = [scene(True)] * 2 + [scene(False)] * 4
    camera = ResilientCamera(lambda: CallableSource(iter(frames)))
    live = Live(camera, t, [RedCupWatch(settle=2)])
    while live.step():
        pass
    h = live.health()
    assert h["dropped"] == 1 and h["proposed"] == 0
    assert "no game" in h["recent"][-1]["dropped"]
    t.close()


def test_a_processor_that_raises_is_reported_and_the_others_go_on(table: Table):
    class Broken:
        name = "broken"

        def feed(self, frame, t):
            raise ValueError("cannot parse this frame")

    frames = [scene(True)] * 2 + [scene(False)] * 4
    camera = ResilientCamera(lambda: CallableSource(iter(frames)))
    live = Live(camera, table, [Broken(), RedCupWatch(settle=2)])
    while live.step():
        pass
    h = live.health()
    assert h["errors"]["broken"] == {"last": "ValueError: cannot parse this frame", "count": 6}
    assert h["proposed"] == 1 and len(table.pending()) == 1


def test_the_camera_glitching_in_the_middle_does_not_stop_the_loop(table: Table):
    script: list = [scene(True)] * 3 + [None, RuntimeError("timeout"), np.zeros((4, 4), np.float64)] + \
        [scene(False)] * 4

    def read():
        if not script:
            raise StopIteration
        item = script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    camera = ResilientCamera(lambda: CallableSource(read), backoff=0.01)
    live = Live(camera, table, [RedCupWatch(settle=3)], idle_seconds=0.005)
    live.start()
    try:
        deadline = time.monotonic() + 5
        while not table.pending() and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        live.stop()
    assert len(table.pending()) == 1
    h = live.health()
    assert h["camera"]["failures"] >= 1 and h["camera"]["bad_frames"] >= 1
    assert live.frames == 7


def test_latest_jpeg_shows_the_frame_with_what_was_detected(table: Table):
    live = Live(ResilientCamera(lambda: CallableSource(iter([scene(True)]))), table, [RedCupWatch()])
    assert live.latest_jpeg() is None
    assert live.step()
    data = live.latest_jpeg()
    assert data is not None and data[:2] == b"\xff\xd8"
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (120, 160, 3)
    b, g, r = img[60, 20].tolist()  # on the ring, 20 px left of the cup's centre (40, 60)
    assert g > 150 and r < 120  # the green ring drawn around the tracked cup
    assert live.latest_jpeg() is data  # cached until the next frame
    assert live.latest_frame()[60, 20].tolist() != [b, g, r]  # the original frame is untouched


def test_no_camera_configured_is_a_state_not_an_error(table: Table):
    live = Live(None, table, [])
    live.start()
    assert not live.running and not live.step()
    assert live.health()["camera"] == {"state": "none", "status": "no camera configured"}
    live.stop()


def test_a_camera_whose_frames_stop_mid_game_is_shown_stalled_on_the_health_page(table: Table, tmp_path: Path):
    """A driver read that never returns (frames stopped coming) must not leave /api/health saying
    "ok" at the last frame rate: the set-up person must see that the camera stopped. The game
    is untouched and every tap still works."""
    import threading
    import urllib.request

    from companion.web import create_app
    from companion.web.server import start

    hang = threading.Event()
    release = threading.Event()

    def read():
        if hang.is_set():
            release.wait(10)
        return scene(True)

    camera = ResilientCamera(lambda: CallableSource(read), stall_seconds=0.3)
    live = Live(camera, table, [RedCupWatch()], idle_seconds=0.005, max_fps=50)
    app = create_app({"data": {"dir": str(tmp_path)}, "server": {"pin": "4321"}}, table, live)
    server = start(app, "127.0.0.1", 0, threads=8)

    def health() -> dict:
        with urllib.request.urlopen(server.url + "/api/health", timeout=5) as r:
            return json.load(r)["camera"]

    live.start()
    try:
        deadline = time.monotonic() + 5
        while live.frames < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert health()["camera"]["state"] == "ok" and health()["fps"] > 0
        hang.set()
        time.sleep(0.6)
        h = health()
        assert h["camera"]["state"] == "stalled" and "no frame for" in h["camera"]["status"]
        assert h["fps"] == 0.0 and h["camera"]["fps"] == 0.0
        seq = table.state()["seq"]
        table.apply({"type": "throw", "side": "A", "cup": "miss"}, source="button")
        assert table.state()["seq"] == seq + 1  # the game goes on without the camera
        hang.clear()
        release.set()
        deadline = time.monotonic() + 5
        while health()["camera"]["state"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert health()["camera"]["state"] == "ok"
    finally:
        release.set()
        live.stop()
        server.stop()
