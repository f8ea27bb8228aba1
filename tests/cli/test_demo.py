"""The demo's "new game on request": a button on the controller and POST /api/demo/new start
another rendered game; outside the demo neither exists."""

from __future__ import annotations

import subprocess
import sys

import pytest

from companion.config import load
from companion.live.service import Service
from companion.sim.rendered_table import for_config
from companion.web.app import create_app


def config_for(tmp_path, **camera):
    return load(None, {"camera": camera, "data": {"dir": str(tmp_path / "data")}, "server": {"pin": "2468"},
                       "panel": {"enabled": False}, "confirm": {"auto_seconds": 0.3}})


def test_demo_command_documents_its_options():
    out = subprocess.run([sys.executable, "-m", "companion", "demo", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0
    for flag in ("--port", "--data-dir", "--seed", "--speed"):
        assert flag in out.stdout


@pytest.mark.slow
def test_new_demo_game_on_request(tmp_path):
    config = config_for(tmp_path, source="render", render_seed=10, render_speed=4.0)
    service = Service(config, rendered=for_config(config))
    try:
        service.start()
        client = service.app.test_client()
        first = client.get("/api/state").get_json()
        assert first["game"] == "exact21" and first["players"] == ["A", "B"]
        assert "new-demo" in client.get("/controller").get_data(as_text=True)
        assert client.post("/api/demo/new").status_code == 403, "changing the game needs the PIN"
        answer = client.post("/api/demo/new", headers={"X-Table-Pin": "2468"})
        assert answer.status_code == 201
        second = client.get("/api/state").get_json()
        assert second["game_id"] != first["game_id"] and second["seq"] == 1
        assert service.rendered is not None and service.rendered.seq.seed != 10
    finally:
        service.stop()


def test_no_demo_outside_the_demo(tmp_path):
    app = create_app(config_for(tmp_path, source="none"))
    client = app.test_client()
    answer = client.post("/api/demo/new", headers={"X-Table-Pin": "2468"})
    assert answer.status_code == 404 and answer.get_json()["code"] == "NOT_FOUND"
    assert "new-demo" not in client.get("/controller").get_data(as_text=True)


@pytest.mark.slow
def test_two_new_demo_requests_at_once_leave_one_set_of_players(tmp_path):
    """Two taps on "New demo game" at once used to start two simulated-player threads that both
    kept pressing the button (phantom misses). Now they take turns, each stopping the last."""
    import threading

    config = config_for(tmp_path, source="render", render_seed=10, render_speed=4.0)
    service = Service(config, rendered=for_config(config))
    try:
        service.start()
        client = service.app.test_client()
        answers: list[int] = []

        def tap() -> None:
            answers.append(client.post("/api/demo/new", headers={"X-Table-Pin": "2468"}).status_code)

        taps = [threading.Thread(target=tap) for _ in range(3)]
        for t in taps:
            t.start()
        for t in taps:
            t.join()
        assert answers == [201, 201, 201]
        players = [t for t in threading.enumerate() if t.name == "demo-players" and t.is_alive()]
        assert len(players) == 1
        assert service.rendered is not None and service.rendered.seq.seed == 13
        assert client.get("/api/state").get_json()["game_id"] == 4
    finally:
        service.stop()


@pytest.mark.slow
def test_the_live_loop_keeps_to_the_configured_frame_rate(tmp_path):
    """`[camera] fps` caps the loop: the rendered table, which renders about 15 frames a second
    here when left alone, is read at 4."""
    import time

    config = config_for(tmp_path, source="render", render_seed=10, fps=4)
    service = Service(config, rendered=for_config(config))
    try:
        service.start()
        time.sleep(6)
        health = service.app.test_client().get("/api/health").get_json()
        assert 2.5 <= health["camera"]["fps"] <= 4.4
        assert health["companion"]
    finally:
        service.stop()


def test_version_is_the_installed_package_version():
    """`companion --version` names the version pip installed (the one the health page shows)."""
    from importlib.metadata import version

    out = subprocess.run([sys.executable, "-m", "companion", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == f"companion {version('companion')}"


def test_dice_the_camera_reads_just_before_the_players_type_them_do_not_stop_the_demo(tmp_path) -> None:
    """On a busy machine the demo's players found side B's dice still to enter after 8 s, and the
    camera's reading of them was confirmed between their look and their entry: the entry was
    refused (DICE_ALREADY_SET), the players' thread died and the demo stopped playing (seen in a
    full test run on a fresh clone). Now the refusal is what a phone would be told, and they play
    on: side A's dice entered, side B's the camera's."""
    from companion.sim.rendered_table import RenderedTable, seq_values
    from companion.table import Table

    demo = RenderedTable(seed=0, intro_seconds=0.0, clock=lambda: 100.0)
    demo.started = 0.0   # the camera's 8 s of grace long over
    values = seq_values(demo.seq)

    class CameraFirst(Table):
        """The table as the players see it, the camera confirming side B's dice right after their
        look at them (a look of theirs: not the table's own while it applies an event)."""
        applying = False

        def apply(self, *args, **kwargs):
            self.applying = True
            try:
                return super().apply(*args, **kwargs)
            finally:
                self.applying = False

        def state(self):
            seen = super().state()
            open_ = {a.get("side") for a in seen.get("legal", []) if a.get("type") == "dice"}
            if open_ == {"B"} and not self.applying:   # (the players enter side A's first)
                self.apply({"type": "dice", "side": "B", "values": values["B"]}, source="camera")
            return seen

    table = CameraFirst(tmp_path / "table.sqlite")
    try:
        table.start(demo.new_game_event())
        demo._dice_fallback(table)
        dice = sorted(e["side"] for e in table.history() if e.get("type") == "dice")
    finally:
        table.close()
    assert dice == ["A", "B"]
