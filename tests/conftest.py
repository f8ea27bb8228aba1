"""Shared test fixtures: the data the tests read lives in the repository (``tests/data/``, with
its licences; the game sheets in ``docs/seeds/``), so a clone with nothing beside it runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="session")
def byler_dir() -> Path:
    """Real dice photos (BSD-3-Clause, tests/data/dice/byler/LICENSE): images/, labels/, annotations.csv."""
    return DATA / "dice" / "byler"


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The games' original sheets."""
    return ROOT / "docs" / "seeds"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that opens real Chromium is a ``browser`` test, whichever file it is in."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
