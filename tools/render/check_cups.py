"""Check rendered cup scenes against the project's own marker detection and calibration, and draw
their labels to look at (not imported by anything; run with the project's venv):

    .venv/bin/python tools/render/check_cups.py DIR [NAME ...] [--draw /tmp/cup_labels] [--json]

Per image (``DIR/meta/NAME.json``):

* ``markers``: how many of the four ``companion.vision.markers.find_markers`` finds, and its
  corners' distance from the labelled corners (mean / max px; ``dx dy`` the mean signed offset,
  which would show a half-pixel convention slip);
* ``table``: ``companion.vision.cups.discover.measure_table`` (the table's size from the markers'
  own 80 mm sides) against the labelled distance between marker centres (mm);
* ``pnp rim px``: the cups' rim centres projected through the pose that ``cv2.solvePnP`` finds
  from the found corners and the markers' true corners (as laid, off the rectangle by a few mm
  and degrees) with the true focal length, against the labelled rim centres: the labels and the
  detection together, apart from any layout (mean / max px);
* ``cal``: ``companion.vision.calibrate.calibrate`` with the labelled table size and the true focal
  length: its marker error (mm), the camera centre's distance from the labelled one (mm), and the
  cups' rim centres projected through it against the labelled rim centres (mean / max px over
  every place); ``cal@default f`` the same with the project's default focal length (what a user
  who does not pass ``--focal`` gets);
* ``layout``: how far the slots of ``Layout`` built from the labelled layout fields
  (``project_layout``) lie from the cups' true places (max mm) -- large where a Layout cannot say
  the table (side B in A's order, unequal pitches, cups set askew).

``--draw OUT``: OUT/NAME.png with every cup place's labelled rim ellipse in its colour (thin:
gone, dashed look: turned, with the turned cup's top), S/G/T and the ball (B bottom, F floating),
loose balls (L), the ball in the air (A), the markers' labelled corners (magenta) and the found
ones (green dots), and the rim centres as the known-focal calibration projects them (white +).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np

from companion.vision.calibrate import DEFAULT_FOCAL_1280, CalibrationError, calibrate
from companion.vision.cups.discover import measure_table
from companion.vision.layout import Layout
from companion.vision.markers import find_markers

BGR = {"blue": (255, 90, 0), "red": (0, 0, 255), "green": (0, 200, 0), "yellow": (0, 230, 255),
       "silver": (210, 210, 210)}


def layout_of(meta: dict) -> Layout:
    return Layout.from_dict(meta["layout"]["project_layout"])


def rim_points(meta: dict) -> tuple[np.ndarray, np.ndarray]:
    """Every place's true rim centre (table mm, x y z) and its labelled pixel."""
    mm = np.array([c["rim_centre_mm"] for c in meta["cups"]], np.float64)
    px = np.array([c["rim_centre_px"] for c in meta["cups"]], np.float64)
    return mm, px


def cal_errors(img: np.ndarray, meta: dict, focal: float | None) -> dict:
    try:
        cal = calibrate(img, layout_of(meta), focal=focal)
    except CalibrationError as err:
        return {"error": f"{err.code}: {err.message}"}
    mm, px = rim_points(meta)
    d = np.linalg.norm(cal.project(mm) - px, axis=1)
    R = cv2.Rodrigues(cal.rvec)[0]
    centre = (-R.T @ cal.tvec).ravel()
    true_c = np.array(meta["camera"]["centre_mm"])
    return {"marker_error_mm": cal.error_mm, "camera_centre_mm": float(np.linalg.norm(centre - true_c)),
            "rim_px_mean": float(d.mean()), "rim_px_max": float(d.max()), "cal": cal}


def pnp_errors(found: dict, meta: dict) -> dict:
    """The pose from the found corners and the markers' *true* corners (as laid, from the labels)
    with the true focal length: what the detection alone allows, apart from any layout."""
    ids = [m for m in meta["markers"] if m["id"] in found]
    if len(ids) < 2:
        return {}
    obj = np.array([[x, y, 0.0] for m in ids for x, y in m["corners_mm"]], np.float64)
    img = np.vstack([found[m["id"]] for m in ids]).astype(np.float64)
    K = np.array(meta["camera"]["K"], np.float64)
    ok, rvec, tvec = cv2.solvePnP(obj, img, K, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return {}
    ok, rvec, tvec = cv2.solvePnP(obj, img, K, None, rvec, tvec, True, cv2.SOLVEPNP_ITERATIVE)
    mm, px = rim_points(meta)
    d = np.linalg.norm(cv2.projectPoints(mm, rvec, tvec, K, None)[0].reshape(-1, 2) - px, axis=1)
    return {"rim_px_mean": float(d.mean()), "rim_px_max": float(d.max())}


def layout_error(meta: dict) -> float:
    slots = {(s.side, s.cup, s.index): (s.x, s.y) for s in layout_of(meta).slots()}
    worst = 0.0
    for c in meta["cups"]:
        key = (c["side"], c["colour"], c["index"] if c["colour"] != "silver" else 0)
        if key not in slots:
            return math.inf
        x, y = slots[key]
        worst = max(worst, math.hypot(x - c["rim_centre_mm"][0], y - c["rim_centre_mm"][1]))
    return worst


def check(root: Path, name: str) -> dict:
    meta = json.loads((root / "meta" / f"{name}.json").read_text())
    img = cv2.imread(str(root / meta["image"]))
    if img is None:
        raise SystemExit(f"{root / meta['image']}: cannot read")
    out: dict = {"name": name, "factors": meta["factors"], "meta": meta, "img": img}
    found = find_markers(img)
    errs, dxy = [], []
    for m in meta["markers"]:
        if m["id"] in found:
            diff = found[m["id"]] - np.array(m["corners_px"])
            errs += list(np.linalg.norm(diff, axis=1))
            dxy.append(diff.mean(axis=0))
    out["found"] = found
    out["markers_found"] = len(found)
    out["corner_px_mean"] = float(np.mean(errs)) if errs else math.nan
    out["corner_px_max"] = float(np.max(errs)) if errs else math.nan
    out["corner_dxy"] = np.mean(dxy, axis=0).tolist() if dxy else [math.nan, math.nan]
    true_w, true_h = meta["table"]["between_markers_mm"]
    try:
        w, h = measure_table(img)
        out["table_err_mm"] = [float(w - true_w), float(h - true_h)]
    except CalibrationError as err:
        out["table_err_mm"] = None
        out["table_error"] = err.code
    out["pnp"] = pnp_errors(found, meta)
    out["cal_true_f"] = cal_errors(img, meta, meta["camera"]["fx_px"])
    out["cal_default_f"] = cal_errors(img, meta, None)
    out["layout_max_mm"] = layout_error(meta)
    return out


def draw(r: dict, out_dir: Path) -> Path:
    meta, img = r["meta"], r["img"].copy()

    def P(p):
        return int(round(p[0])), int(round(p[1]))

    for c in meta["cups"] + meta["tally_cups"]:
        e = c["rim_ellipse_px"]
        col = BGR[c["colour"]]
        thick = 1 if c["state"] == "gone" else 2
        axes = (int(round(e["axes"][0])), int(round(e["axes"][1])))
        if c["state"] == "turned":
            t = c["top_ellipse_px"]
            cv2.ellipse(img, P(t["centre"]), (int(round(t["axes"][0])), int(round(t["axes"][1]))), t["angle_deg"],
                        0, 360, col, 1, cv2.LINE_AA)
            for a0 in range(0, 360, 30):   # dashed rim on the table
                cv2.ellipse(img, P(e["centre"]), axes, e["angle_deg"], a0, a0 + 15, col, 2, cv2.LINE_AA)
        else:
            cv2.ellipse(img, P(e["centre"]), axes, e["angle_deg"], 0, 360, col, thick, cv2.LINE_AA)
        tag = {"standing": "S", "gone": "G", "turned": "T"}[c["state"]]
        if c.get("ball"):
            b = c["ball"]
            cv2.circle(img, P(b["centre_px"]), int(round(b["radius_px"])), (255, 0, 255), 1, cv2.LINE_AA)
            tag += "B" if b["mode"] == "bottom" else "F"
        if c.get("water"):
            tag += "w"
        x, y = P(c["rim_centre_px"])
        cv2.putText(img, tag, (x - 8, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(img, tag, (x - 8, y + 4), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1, cv2.LINE_AA)
    for b, tag in [(b, "L") for b in meta["loose_balls"]] + ([(meta["ball_in_air"], "A")] if meta.get("ball_in_air") else []):
        cv2.circle(img, P(b["centre_px"]), int(round(b["radius_px"])), (255, 0, 255), 2, cv2.LINE_AA)
        cv2.putText(img, tag, P((b["centre_px"][0] + b["radius_px"], b["centre_px"][1])), cv2.FONT_HERSHEY_SIMPLEX,
                    0.5, (255, 0, 255), 1, cv2.LINE_AA)
    for m in meta["markers"]:
        pts = np.array(m["corners_px"])
        cv2.polylines(img, [np.round(pts).astype(np.int32)], True, (255, 0, 255), 1, cv2.LINE_AA)
        cv2.putText(img, f"id{m['id']}", P(pts[0]), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 0, 255), 1, cv2.LINE_AA)
    for corners in r["found"].values():
        for p in corners:
            cv2.circle(img, P(p), 2, (0, 255, 0), -1)
    cal = r["cal_true_f"].get("cal")
    if cal is not None:
        mm, _ = rim_points(meta)
        for p in cal.project(mm):
            cv2.drawMarker(img, P(p), (255, 255, 255), cv2.MARKER_CROSS, 8, 1)
    for d in meta["dice"]:
        cv2.putText(img, str(d["value"]), P(d["top_centre_px"]), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (255, 255, 255), 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{r['name']}.png"
    cv2.imwrite(str(path), img)
    return path


def fmt(x, nd=1) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("names", nargs="*", help="scene names (default: every scene in DIR/meta)")
    ap.add_argument("--draw", type=Path, help="write the labels drawn over each image here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    names = [Path(n).stem for n in a.names] or sorted(p.stem for p in (a.dir / "meta").glob("s*.json"))
    if not names:
        raise SystemExit(f"{a.dir}/meta: no scenes")
    rows = []
    print(f"{'scene':16} {'markers':>7} {'corner px':>10} {'dx,dy':>11} {'table err mm':>13} "
          f"{'pnp rim px':>10} {'cal mm':>6} {'cam mm':>7} {'rim px':>11} {'default f: rim px':>17} {'layout mm':>9}  factors")
    for name in names:
        r = check(a.dir, name)
        t, d = r["cal_true_f"], r["cal_default_f"]
        te = r["table_err_mm"]
        print(f"{name:16} {r['markers_found']:>5}/4 {fmt(r['corner_px_mean'], 2):>5}/{fmt(r['corner_px_max'], 2):<4} "
              f"{fmt(r['corner_dxy'][0], 2):>5},{fmt(r['corner_dxy'][1], 2):<5} "
              f"{(fmt(te[0]) + ',' + fmt(te[1])) if te else r.get('table_error', '-'):>13} "
              f"{fmt(r['pnp'].get('rim_px_mean'), 2):>5}/{fmt(r['pnp'].get('rim_px_max'), 1):<4} "
              f"{fmt(t.get('marker_error_mm'), 2):>6} {fmt(t.get('camera_centre_mm')):>7} "
              f"{fmt(t.get('rim_px_mean'), 2):>5}/{fmt(t.get('rim_px_max'), 1):<5} "
              f"{fmt(d.get('rim_px_mean'), 1):>8}/{fmt(d.get('rim_px_max'), 1):<8} {fmt(r['layout_max_mm'], 0):>9}  "
              f"tilt={r['factors']['tilt']} fov={r['factors']['fov']} h={r['factors']['height']} "
              f"table={r['factors']['table']} make={r['factors']['make']} light={r['factors']['light']}")
        for key in ("cal_true_f", "cal_default_f"):
            if "error" in r[key]:
                print(f"    {key}: {r[key]['error']}")
        if a.draw:
            print(f"    drawn: {draw(r, a.draw)}")
        rows.append(r)

    def stat(vals):
        vals = [v for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
        return (statistics.mean(vals), max(vals)) if vals else (math.nan, math.nan)

    cm = stat([r["corner_px_mean"] for r in rows])
    cmax = stat([r["corner_px_max"] for r in rows])
    rp = stat([r["cal_true_f"].get("rim_px_mean") for r in rows])
    rmax = stat([r["cal_true_f"].get("rim_px_max") for r in rows])
    dp = stat([r["cal_default_f"].get("rim_px_mean") for r in rows])
    tw = stat([abs(r["table_err_mm"][0]) for r in rows if r["table_err_mm"]])
    th = stat([abs(r["table_err_mm"][1]) for r in rows if r["table_err_mm"]])
    cc = stat([r["cal_true_f"].get("camera_centre_mm") for r in rows])
    pp = stat([r["pnp"].get("rim_px_mean") for r in rows])
    pmax = stat([r["pnp"].get("rim_px_max") for r in rows])
    summary = {"scenes": len(rows), "markers_all_found": sum(r["markers_found"] == 4 for r in rows),
               "corner_px_mean": cm[0], "corner_px_max": cmax[1], "rim_px_mean_true_f": rp[0],
               "rim_px_max_true_f": rmax[1], "rim_px_mean_default_f": dp[0], "table_abs_err_mm_w": tw,
               "table_abs_err_mm_h": th, "camera_centre_mm_mean": cc[0],
               "calibrated": sum("error" not in r["cal_true_f"] for r in rows),
               "calibrated_default_f": sum("error" not in r["cal_default_f"] for r in rows),
               "layout_expresses_table": sum(r["layout_max_mm"] < 1 for r in rows),
               "rim_px_mean_pnp_true_markers": pp[0], "rim_px_max_pnp_true_markers": pmax[1]}
    print(f"\n{summary['scenes']} scenes: all four markers found in {summary['markers_all_found']}; corners "
          f"{fmt(cm[0], 2)} px mean, {fmt(cmax[1], 2)} max; table size from the markers off by "
          f"{fmt(tw[0])} / {fmt(th[0])} mm (w / h, mean abs; max {fmt(tw[1])} / {fmt(th[1])}); rim centres through a "
          f"pose from the found corners and the markers' true places: {fmt(pp[0], 2)} px mean, {fmt(pmax[1], 1)} max; "
          f"calibrated "
          f"{summary['calibrated']} (true focal), {summary['calibrated_default_f']} (default {DEFAULT_FOCAL_1280:.0f} px "
          f"at 1280); rim centres {fmt(rp[0], 2)} px mean, {fmt(rmax[1], 1)} max with the true focal, "
          f"{fmt(dp[0], 1)} px mean with the default; camera centre {fmt(cc[0])} mm off (mean); "
          f"a Layout expresses {summary['layout_expresses_table']} of the tables (slots within 1 mm)")
    if a.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
