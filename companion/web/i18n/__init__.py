"""Page texts in the rule sheets' languages: English, Hungarian, Spanish.

Each language is one JSON file of ``key -> text`` (``{name}`` placeholders filled by the
pages). English is complete; a key missing from another language falls back to English. The
language is the phone's (``Accept-Language``), or ``?lang=xx``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

LANGUAGES = {"en": "English", "hu": "Magyar", "es": "Español"}
DEFAULT = "en"
HERE = Path(__file__).resolve().parent


@cache
def texts(lang: str) -> dict[str, str]:
    """Every text of ``lang``, English filling the gaps."""
    english = json.loads((HERE / "en.json").read_text(encoding="utf-8"))
    if lang == DEFAULT or lang not in LANGUAGES:
        return english
    own = json.loads((HERE / f"{lang}.json").read_text(encoding="utf-8"))
    return {**english, **own}


def choose(asked: str | None, accept_languages) -> str:
    """``?lang=`` if it is one of ours, else the phone's best match, else English."""
    if asked in LANGUAGES:
        return asked
    return accept_languages.best_match(list(LANGUAGES), default=DEFAULT)
