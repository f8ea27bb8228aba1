"""The rendered game through the real `companion serve`: the scoreboard API ends showing the
scripted winner, and every throw into a cup came from the camera (misses from the button)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from companion.sim.rendered_table import RenderedTable
from tests.loopback import free_port, get_json

pytestmark = pytest.mark.slow  # a whole rendered game through companion serve, ~1 min


def test_E12_rendered_game_through_companion_serve_ends_with_the_scripted_winner(tmp_path):
    seed, speed = 10, 1.0   # real time, as the demo plays (at 2x a ball rests under the watch's 0.5 s)
    script = RenderedTable(seed, speed)
    config = tmp_path / "companion.toml"
    config.write_text(f"""
[server]
pin = "4321"
[data]
dir = "{tmp_path / 'data'}"
[camera]
source = "render"
render_seed = {seed}
render_speed = {speed}
[confirm]
auto_seconds = 0.3
[panel]
enabled = false
""")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--config", str(config),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + (script.duration + script.intro) / speed + 60
        state: dict = {}
        while time.monotonic() < deadline:
            try:
                state = get_json(base + "/api/state")
            except OSError:
                state = {}
            if state.get("finished"):
                break
            time.sleep(0.5)
        assert state.get("finished"), f"the game did not finish: {state.get('scores')}"
        assert state["winners"] == [script.winner]
        assert state["scores"][script.winner] == 21
        health = get_json(base + "/api/health")["camera"]
        assert health["camera"]["state"] == "ok" and health["frames"] > 100
        with urllib.request.urlopen(f"{base}/api/games/{state['game_id']}/log.jsonl?raw=1", timeout=10) as resp:
            rows = [json.loads(line) for line in resp.read().decode().splitlines() if line.strip()]
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    throws = [r for r in rows if r["type"] == "throw"]
    from_camera = [(r["side"], r["cup"]) for r in throws if r["cup"] != "miss"]
    assert from_camera == [(t.side, t.cup) for t in script.seq.truth]
    assert all(r["proposed_by"] == "camera" and r["source"] == "auto" for r in throws if r["cup"] != "miss")
    assert all(r["source"] == "button" for r in throws if r["cup"] == "miss")
    dice = [r for r in rows if r["type"] == "dice"]
    assert len(dice) == 2 and all(r["proposed_by"] == "camera" for r in dice), "the camera read the set-up dice"
    assert "Traceback" not in out
