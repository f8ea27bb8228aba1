"""The examples in the engines' docstrings are run, so they cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib

import pytest

from companion.games import ENGINES

MODULES = ["companion.games.base"] + [spec.split(":")[0] for spec in ENGINES.values()]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module)
    assert result.failed == 0
