"""Refusals on a phone, translated by their code (real Chromium at 390 x 844 against a real
server on loopback): a Hungarian or Spanish phone reads the catalogue's sentence for the code in
its own language, never "Elutasítva: Ann and Bea tie for the highest roll…"; an English phone
reads the rules' own sentence, which names the players; a code the catalogue does not know falls
back to the server's sentence. Every code the rules and the table can refuse with has its
sentence in all three languages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from companion.web.i18n import HERE, LANGUAGES, texts
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, SHOTS, phone
from tests.web.test_game_over import LANGS, post

ROOT = Path(__file__).resolve().parents[2]
EXACTLY = {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea"]}
browser_only = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")


def raised_codes() -> set[str]:
    """Every code a RuleError is raised with in the engines and the table (its constant's name is
    its value throughout)."""
    codes = set()
    for path in [*(ROOT / "companion/games").glob("*.py"), ROOT / "companion/table/table.py"]:
        codes |= set(re.findall(r"RuleError\(\s*\"?([A-Z][A-Z0-9_]+)\"?\s*,", path.read_text(encoding="utf-8")))
    return codes


def test_every_refusal_code_has_its_sentence_in_every_language():
    codes = raised_codes()
    assert {"START_TIE", "NOT_YOUR_TURN", "CARD_MISMATCH", "NOTHING_TO_UNDO", "BAD_VALUE"} <= codes
    for lang in LANGUAGES:
        own = json.loads((HERE / f"{lang}.json").read_text(encoding="utf-8"))  # not English filling a gap
        missing = sorted(c for c in codes if f"rule_{c}" not in own and f"code_{c}" not in own)
        assert not missing, (lang, missing)
        for code in ("NOT_STORED", "LOG_UNREADABLE", "TOO_MANY_STREAMS", "INTERNAL", "BAD_EVENT"):
            assert f"rule_{code}" in own, (lang, code)
    for code in codes:
        hu, es, en = (texts(lang).get(f"rule_{code}") for lang in ("hu", "es", "en"))
        if hu is not None:
            assert len({hu, es, en}) == 3, (code, "the same words in two languages")


def toast(page) -> str:
    page.wait_for_selector("#toast:not([hidden])")
    return page.inner_text("#toast")


@browser_only
def test_a_tie_for_the_start_is_told_in_the_phones_language(browser, server):
    post(server.port, "/api/games", EXACTLY)
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, locale in LANGS:
        t = texts(lang)
        ctl = phone(browser, f"{server.url}/controller?lang={lang}", errors, locale)
        ctl.wait_for_selector(".x-start-box[open]")  # open before the first roll
        for name in ("Ann", "Bea"):
            ctl.click(f'.x-start button[data-player="{name}"][data-face="50"]')
        ctl.click(".x-start button[type=submit]")
        said = toast(ctl)
        if lang == "en":
            assert said == "Refused: Ann and Bea tie for the highest roll: roll again"
        else:
            assert said == t["error"] + ": " + t["rule_START_TIE"]
            assert "tie" not in said and "roll again" not in said, "no English half"
        ctl.screenshot(path=str(SHOTS / f"refusal-start-tie-{lang}.png"))
        ctl.context.close()
    assert errors == []


@browser_only
def test_a_camera_proposal_the_rules_refuse_is_told_in_the_phones_language(browser, server):
    """The camera proposed a throw for the side not on turn; a phone confirms it."""
    post(server.port, "/api/games", NEW_EXACT21)
    post(server.port, "/api/events", DICE_A)
    post(server.port, "/api/events", DICE_B)
    table = server.app.extensions["companion"].table
    errors: list[str] = []
    for lang, locale in LANGS:
        t = texts(lang)
        proposal = table.propose({"type": "throw", "side": "B", "cup": "blue"})
        ctl = phone(browser, f"{server.url}/controller?lang={lang}", errors, locale)
        ctl.click(f'[data-proposal="{proposal.id}"] button.okb')
        said = toast(ctl)
        if lang == "en":
            assert said == "Refused: it is side A's turn"
        else:
            assert said == t["error"] + ": " + t["rule_NOT_YOUR_TURN"]
            assert "side A's turn" not in said and "it is" not in said, "no English half"
        ctl.context.close()
    assert errors == []


@browser_only
def test_an_unknown_code_falls_back_to_the_servers_sentence(browser, server):
    errors: list[str] = []
    ctl = phone(browser, f"{server.url}/controller?lang=hu", errors, "hu-HU")
    ctl.wait_for_function("!!window.C && !!C.refusal")
    assert ctl.evaluate("C.refusal({code: 'A_CODE_FROM_A_NEWER_SERVER', message: 'a sentence'})") == "a sentence"
    assert ctl.evaluate("C.refusal({code: 'START_TIE', message: 'Ann and Bea tie'})") == texts("hu")["rule_START_TIE"]
    assert ctl.evaluate("C.refusal({code: 'STALE', message: 'x'})") == texts("hu")["code_STALE"]
    assert errors == []
