"""The layout shows the architecture (docs/architecture.md): each folder of ``companion/`` is one
part of the picture, and dependencies point one way. Read from the source, every import counted,
the lazy ones inside functions too, so a shortcut taken for convenience fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "companion"

# part -> the parts it may import (itself always). Leaves first: what is lower never imports up.
ALLOWED: dict[str, set[str]] = {
    "files": set(),
    "config": set(),
    "games": set(),
    "table": {"games", "files"},
    "vision": {"files"},
    "hardware": set(),
    "web": {"table", "games", "config", "files"},
    "live": {"vision", "table", "games", "hardware", "config", "files", "web"},
    "sim": {"live", "vision", "table", "games"},
    "cli": {"files", "config", "games", "table", "vision", "hardware", "web", "live", "sim"},
    "bench": {"files", "config", "games", "table", "vision", "hardware", "web", "live", "sim", "cli"},
}
# Inside the live loop the web is only the app factory the service hands itself to.
NARROW = {("live", "web"): {"companion.web.app"}, ("sim", "live"): {"companion.live.camera"}}
TRAINING = {"torch", "tools", "bpy", "onnx", "onnxruntime"}


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        out.append((name, path))
    return out


def imports(name: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            if module == "companion" or node.module is None:  # `from companion import config`, `from . import x`
                found.update(f"{module}.{a.name}" for a in node.names)
    return found


def test_every_module_belongs_to_a_part_of_the_architecture():
    parts = {part_of(name) for name, _ in modules()} - {"", "__main__"}
    assert parts <= set(ALLOWED), f"a folder or module that is no part of the picture: {parts - set(ALLOWED)}"


@pytest.mark.parametrize("name,path", modules(), ids=lambda v: v if isinstance(v, str) else "")
def test_dependencies_point_one_way(name: str, path: Path):
    me = part_of(name)
    if me in ("", "__main__"):
        return
    wrong = []
    for module in imports(name, path):
        top = module.split(".")[0]
        assert top not in TRAINING, f"{name} imports {module}: training tools stay outside the runtime"
        if top != "companion" or module in ("companion", "companion.__version__"):  # the root holds no logic
            continue
        other = part_of(module)
        if other == me:
            continue
        if other not in ALLOWED[me]:
            wrong.append(module)
        elif (me, other) in NARROW and module not in NARROW[(me, other)]:
            wrong.append(module)
    assert not wrong, f"{name} ({me}) may not import {wrong}"


def test_the_check_itself_sees_a_wrong_import(tmp_path: Path):
    """The rule above is not vacuous: a vision module importing the table is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from companion.table import Table\n    from . import cups\n")
    found = imports("companion.vision.bad", bad)
    assert "companion.table" in found and "companion.vision.cups" in found
    assert "table" not in ALLOWED["vision"]
