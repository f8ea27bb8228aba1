"""The rendered table: deterministic, the dice drawn the one way the dice reader expects, scripted
games that carry what really happened, and frames cheap enough for a live camera stand-in."""

from __future__ import annotations

import cv2
import numpy as np

from companion.sim.render import DIE_BGR, Look, Renderer, draw_die, full_table, game_sequence
from companion.vision.layout import Layout

LAYOUT = Layout()


def test_same_seed_same_frames_other_seed_other_game() -> None:
    a, b = game_sequence(4, max_throws=3), game_sequence(4, max_throws=3)
    assert len(a) == len(b) and a.truth == b.truth and a.look == b.look
    fa = [f for _, f in zip(range(3), a.frames(), strict=False)]
    fb = [f for _, f in zip(range(3), b.frames(), strict=False)]
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(fa, fb, strict=True))
    c = game_sequence(5, max_throws=3)
    assert (c.look, c.truth) != (a.look, a.truth)


def test_frames_are_1280x720_bgr_and_show_the_four_markers() -> None:
    frame = Renderer(Look(tilt_deg=30, light=0.5)).frame(full_table(LAYOUT))
    assert frame.shape == (720, 1280, 3) and frame.dtype == np.uint8
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                  cv2.aruco.DetectorParameters())
    _, ids, _ = det.detectMarkers(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY))
    assert sorted(ids.ravel().tolist()) == [0, 1, 2, 3]


def test_a_die_shows_its_pips_in_the_right_colour() -> None:
    for colour in DIE_BGR:
        for value in range(1, 7):
            img = np.full((60, 60, 3), 128, np.uint8)
            quad = np.array([[15.0, 15.0], [45.0, 15.0], [45.0, 45.0], [15.0, 45.0]])
            draw_die(img, quad, colour, value)
            body = np.array(DIE_BGR[colour], np.float64)
            dark_body = colour not in ("white", "yellow")
            pip = (img.min(axis=2) > 200) if dark_body else (img.max(axis=2) < 60)
            if colour == "white":
                pip = img.max(axis=2) < 60
            n, _ = cv2.connectedComponents(pip[12:48, 12:48].astype(np.uint8))
            assert n - 1 == value, (colour, value)
            assert np.abs(img[16:18, 30].astype(float) - body).max() < 40   # body colour at the edge


def test_dice_are_about_30_px_wide_at_1280x720() -> None:
    r = Renderer(Look())
    x, y = LAYOUT.dice_spots()["A"]["blue"]
    a = r.camera.project(np.array([[x - 11, y, 22.0], [x + 11, y, 22.0]]))
    assert 24 <= np.hypot(*(a[1] - a[0])) <= 34


def test_a_game_records_its_throws_and_its_nasty_moments() -> None:
    seq = game_sequence(7, max_throws=12, nasty=3.0)
    assert seq.truth and all(t.side in "AB" for t in seq.truth)
    assert all(t.kind in ("made", "stays") for t in seq.truth)
    made = [t for t in seq.truth if t.kind == "made"]
    assert all(t.left_t is not None and t.left_t > t.t for t in made)
    assert sum(seq.nasty.values()) >= 2
    # cups only ever leave when a throw was made
    first, last = seq.scenes[0], seq.scenes[-1]
    upright = [c for c in last.cups if c.upright]
    assert len(first.cups) - len(upright) == len(made)


def test_uneven_light_and_half_light_change_the_frame() -> None:
    bright = Renderer(Look(light=1.0, gradient=0.0, noise=0)).frame(full_table(LAYOUT))
    half = Renderer(Look(light=0.5, gradient=0.0, noise=0)).frame(full_table(LAYOUT))
    assert 0.4 < half.mean() / bright.mean() < 0.6
    uneven = Renderer(Look(light=1.0, gradient=0.6, gradient_angle=0, noise=0)).frame(full_table(LAYOUT))
    assert uneven[:, 1000:].mean() > 1.2 * uneven[:, :250].mean()
