"""Draw a rendered scene's labels on its image, to look at them (not imported by anything).

    .venv/bin/python tools/render/draw_labels.py DIR NAME [NAME ...] [--out /tmp/dice_labels] [--zoom 1.5]

Green box + value: a die in annotations.csv / labels (``T`` when tilted, ``S`` when lying on
another die); red cross + ``H``: a die whose top face is hidden or out of frame (no label);
magenta outline: a marker's black square. Writes ``OUT/NAME.png``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2


def draw(root: Path, name: str, zoom: float):
    img = cv2.imread(str(root / "images" / f"{name}.jpg"))
    if img is None:
        raise SystemExit(f"{root / 'images' / (name + '.jpg')}: cannot read")
    meta = json.loads((root / "meta" / f"{name}.json").read_text())
    big = cv2.resize(img, None, fx=zoom, fy=zoom, interpolation=cv2.INTER_CUBIC)

    def p(x, y):
        return int(round(x * zoom)), int(round(y * zoom))

    for d in meta["dice"]:
        if d["in_annotations"]:
            x0, y0, x1, y1 = d["box_px"]
            cv2.rectangle(big, p(x0, y0), p(x1, y1), (0, 255, 0), 1)
            tag = str(d["value"]) + (" T" if d["tilted"] else "") + (" S" if d["stacked"] == "on" else "")
            cv2.putText(big, tag, p(x1 + 2, y0 + 8), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 255, 255), 1)
        else:
            cv2.drawMarker(big, p(*d["centre_px"]), (0, 0, 255), cv2.MARKER_TILTED_CROSS, 12, 2)
            cv2.putText(big, f"H{d['value']}", p(d["centre_px"][0] + 4, d["centre_px"][1]), cv2.FONT_HERSHEY_SIMPLEX,
                        0.45, (0, 0, 255), 1)
    for m in meta.get("markers", []):
        pts = [p(*c) for c in m["corners_px"]]
        for a, b in zip(pts, pts[1:] + pts[:1], strict=True):
            cv2.line(big, a, b, (255, 0, 255), 1)
        cv2.putText(big, f"id{m['id']}", pts[0], cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 0, 255), 1)
    return big


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("names", nargs="+", help="scene names, e.g. s000001")
    ap.add_argument("--out", type=Path, default=Path("/tmp/dice_labels"))
    ap.add_argument("--zoom", type=float, default=1.5)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    for name in a.names:
        name = Path(name).stem
        path = a.out / f"{name}.png"
        cv2.imwrite(str(path), draw(a.dir, name, a.zoom))
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
