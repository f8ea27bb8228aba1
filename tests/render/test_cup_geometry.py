"""The cup scenes' geometry (tools/render/cup_geometry.py, pure Python: no Blender needed): the
layouts it plans stand as a table can, the camera it plans sees every marker and cup, and its
projections and rim ellipses are OpenCV's."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.layout import CUPS, Layout

PATH = Path(__file__).resolve().parents[2] / "tools" / "render" / "cup_geometry.py"
spec = importlib.util.spec_from_file_location("cup_geometry", PATH)
cg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cg)

FORCED = [{}, {"touching": "1"}, {"cpr": "5", "rim": "115", "cup_h": "140"}, {"cpr": "3", "rim": "80", "cup_h": "90"},
          {"order": "same"}, {"order": "shuffle"}, {"table": "0.9"}]


def scene(seed: int, forced: dict, w: int = 1280, h: int = 720):
    rng = random.Random(seed)
    L = cg.plan_layout(rng, forced)
    markers = cg.marker_centres(L, rng, 2.0, 3.0)
    need = [c for m in markers for c in cg.marker_corners(m, cg.MARKER_PAPER_HALF_MM)]
    for p in L["places"]:
        for k in range(8):
            a = k * math.pi / 4
            for z in (0.0, L["cup_h"]):
                need.append((p["centre_mm"][0] + L["rim_d"] / 2 * math.cos(a),
                             p["centre_mm"][1] + L["rim_d"] / 2 * math.sin(a), z))
    cam = cg.plan_camera(rng, forced, need, (L["table_w"] / 2, L["table_h"] / 2), w, h)
    return L, markers, cam, need


@pytest.mark.parametrize("forced", FORCED)
def test_layouts_stand_as_a_table_can(forced):
    for seed in range(25):
        L, markers, _, _ = scene(seed, forced)
        r = L["rim_d"] / 2
        places = L["places"]
        for side in ("A", "B"):
            rows = L[f"rows_{side}"]
            assert sorted(rows) == sorted(CUPS)
            mine = [p for p in places if p["side"] == side]
            assert len(mine) == 4 * L["cups_per_row"] + 1
        for i, a in enumerate(places):   # no two cups in one another
            for b in places[i + 1:]:
                d = math.dist(a["centre_mm"], b["centre_mm"])
                assert d >= 2 * r - 1e-6, (seed, a, b, d)
        for p in places:                 # every cup on the table, off the markers' paper
            x, y = p["centre_mm"]
            assert -L["inset_x"] + r < x < L["table_w"] + L["inset_x"] - r
            assert -L["inset_near"] + r < y < L["table_h"] + L["inset_far"] - r
            for m in markers:
                mx, my = m["centre_mm"]
                assert max(abs(x - mx), abs(y - my)) > cg.MARKER_PAPER_HALF_MM + r * 0.7
        assert L["table_length"] >= 900 - 1e-6
        assert L["grown_to_fit"] or L["table_length"] <= 1800 + 1e-6
        assert 80 <= L["rim_d"] <= 115 and 90 <= L["cup_h"] <= 140


def test_side_b_orders():
    for order in ("mirror", "same"):
        L, *_ = scene(3, {"order": order})
        ltr_a = [p["colour"] for p in sorted((p for p in L["places"] if p["side"] == "A" and p["index"] == 0),
                                             key=lambda p: p["nominal_mm"][0])]
        ltr_b = [p["colour"] for p in sorted((p for p in L["places"] if p["side"] == "B" and p["index"] == 0),
                                             key=lambda p: p["nominal_mm"][0])]
        assert ltr_b == (ltr_a if order == "same" else ltr_a[::-1])


def test_a_layout_says_the_table_when_it_can():
    seen = 0
    for seed in range(200):
        L, *_ = scene(seed, {"order": "mirror", "touching": "1"})
        layout = Layout.from_dict(cg.project_layout(L))
        if not cg.layout_exact(L):
            continue
        seen += 1
        slots = {(s.side, s.cup, s.index): (s.x, s.y) for s in layout.slots()}
        for p in L["places"]:
            x, y = slots[(p["side"], p["colour"], p["index"])]
            assert math.dist((x, y), p["centre_mm"]) < 1e-6
    assert seen > 0


@pytest.mark.parametrize("forced", FORCED + [{"tilt": "35", "height": "0.7"}, {"tilt": "0"}])
def test_the_camera_sees_every_marker_and_cup(forced):
    for seed in range(25):
        _, _, cam, need = scene(seed, forced)
        pc = cg.PinholeCamera(cam["R"], cam["centre_mm"], cam["fx"], 1280, 720)
        assert cam["hfov_deg"] <= 100 + 1e-9
        assert 0 <= cam["tilt_deg"] <= 35
        if cam["fits"]:
            assert all(pc.in_frame(p) for p in need), seed
        assert cam["height_mm"] >= 700


def test_projection_pose_and_ellipses_are_opencv():
    for seed in range(20):
        L, markers, cam, _ = scene(seed, {})
        pc = cg.PinholeCamera(cam["R"], cam["centre_mm"], cam["fx"], 1280, 720)
        rvec = np.array(cg.rodrigues(cam["R"]))
        R = cv2.Rodrigues(rvec)[0]
        assert np.allclose(R, np.array(cam["R"]), atol=1e-9)
        pts = np.array([c for m in markers for c in cg.marker_corners(m)], np.float64)
        ours = np.array([pc.project(p)[:2] for p in pts])
        theirs = cv2.projectPoints(pts, rvec, np.array(pc.t), np.array(pc.K), None)[0].reshape(-1, 2)
        assert np.abs(ours - theirs).max() < 1e-6
        for p in L["places"][:6]:
            e = pc.circle_ellipse(p["centre_mm"], L["rim_d"] / 2, L["cup_h"])
            a, b = e["axes"]
            t = math.radians(e["angle_deg"])
            x0, y0 = e["centre"]
            for u, v in pc.circle_points(p["centre_mm"], L["rim_d"] / 2, L["cup_h"], 36):
                du, dv = u - x0, v - y0
                q = ((math.cos(t) * du + math.sin(t) * dv) / a) ** 2 + ((-math.sin(t) * du + math.cos(t) * dv) / b) ** 2
                assert abs(q - 1) < 1e-9
            x_0, y_0, x_1, y_1 = cg.ellipse_box(e)
            poly = pc.circle_points(p["centre_mm"], L["rim_d"] / 2, L["cup_h"], 720)
            assert abs(min(u for u, _ in poly) - x_0) < 0.05 and abs(max(v for _, v in poly) - y_1) < 0.05


def test_plans_repeat_and_cup_profiles_close():
    assert scene(7, {})[0] == scene(7, {})[0]
    prof = cg.cup_profile(0.0475, 0.033, 0.12, 0.001, 0.002, True)
    assert prof[0][0] == 0.0 and prof[-1][0] == 0.0          # a closed surface of revolution
    assert max(r for r, _, _ in prof) == pytest.approx(0.0475)
    assert max(z for _, z, _ in prof) == pytest.approx(0.12)
    assert cg.inner_radius(prof, 0.06) < 0.0475 and cg.inner_radius(prof, 0.01) > 0.021   # a 40 mm ball fits


def test_a_cup_beside_a_far_marker_hides_it_from_behind():
    m = {"id": 2, "centre_mm": [1200.0, 600.0], "turn_deg": 0.0}
    C = [600.0, 1400.0, 900.0]                    # behind the cups, looking at the table's middle
    R = cg.look_rotation(C, [600.0, 300.0, 0.0], [0.0, -1.0, 0.0])
    pc = cg.PinholeCamera(R, C, 700.0, 1280, 720)
    near = [([1120.0, 560.0], 47.5, 33.0, 120.0)]
    far = [([800.0, 300.0], 47.5, 33.0, 120.0)]
    assert cg.hidden_markers(pc, [m], near) == [2]
    assert cg.hidden_markers(pc, [m], far) == []
    hull = cg.convex_hull([(0, 0), (2, 0), (2, 2), (0, 2), (1, 1)])
    assert len(hull) == 4 and cg.inside_convex(hull, (1, 1)) and not cg.inside_convex(hull, (3, 1))
