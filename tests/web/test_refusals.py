"""Refusals on a phone, translated by their code (real Chromium at 390 x 844 against a real
server on loopback): a Hungarian or Spanish phone reads the catalogue's sentence for the code in
its own language, never "Elutasítva: Ann and Bea tie for the highest roll…", and with the
players and values the refusal names (its ``args``: "Ann, Bea", "50c"); an English phone reads
the rules' own sentence; a code the catalogue does not know falls back to the server's sentence.
Every code the rules and the table can refuse with has its sentence in all three languages, and
every set of ``args`` a refusal is raised with has its sentence too, with those placeholders."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from companion.web.i18n import HERE, LANGUAGES, texts
from tests.web.conftest import CHROMIUM, DICE_A, DICE_B, NEW_EXACT21, PIN, SHOTS, phone
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


def raised_args() -> set[tuple[str, tuple[str, ...]]]:
    """(code, sorted names of its args) of every RuleError raised with a dict of specifics in the
    engines and the table: the call's text up to its closing bracket, its last argument a dict."""
    found = set()
    for path in [*(ROOT / "companion/games").glob("*.py"), ROOT / "companion/table/table.py"]:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"RuleError\(\s*\"?([A-Z][A-Z0-9_]+)\"?\s*,", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            call = text[m.end():i - 1]
            last = re.search(r",\s*\{([^{}]*)\}\s*$", call)
            if last:
                found.add((m.group(1), tuple(sorted(re.findall(r'"(\w+)":', last.group(1))))))
    return found


def test_every_refusal_with_specifics_has_its_sentence_with_them_in_every_language():
    raised = raised_args()
    assert ("START_TIE", ("players",)) in raised and ("NOT_YOUR_TURN", ("player", "side")) in raised
    codes = raised_codes()
    for lang in LANGUAGES:
        own = json.loads((HERE / f"{lang}.json").read_text(encoding="utf-8"))
        for code, names in raised:
            key = f"rule_{code}@{','.join(names)}"
            assert key in own, (lang, key)
        for key, text in own.items():
            if key.startswith("rule_") and "@" in key:
                code, names = key[5:].split("@")
                assert code in codes, (lang, key)
                assert set(re.findall(r"\{(\w+)\}", text)) == set(names.split(",")), (lang, key, text)


def test_a_refusal_keeps_code_and_message_and_adds_its_args(client):
    """Backward compatible: ``code`` and ``message`` as before, the specifics beside them."""
    headers = {"X-Table-Pin": PIN}
    client.post("/api/games", json=NEW_EXACT21, headers=headers)
    client.post("/api/events", json=DICE_A, headers=headers)
    client.post("/api/events", json=DICE_B, headers=headers)
    r = client.post("/api/events", json={"type": "throw", "side": "B", "cup": "blue"}, headers=headers)
    assert r.status_code == 409
    assert r.get_json() == {"code": "NOT_YOUR_TURN", "message": "it is side A's turn", "args": {"side": "A"}}
    for _ in range(3):
        client.post("/api/undo", headers=headers)
    r = client.post("/api/undo", headers=headers)
    assert r.get_json()["code"] == "NOTHING_TO_UNDO" and set(r.get_json()) == {"code", "message"}  # nothing named


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
            assert said == t["error"] + ": " + t["rule_START_TIE@players"].replace("{players}", "Ann, Bea")
            assert "Ann" in said and "Bea" in said, "the names are kept"
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
            assert said == t["error"] + ": " + t["rule_NOT_YOUR_TURN@side"].replace("{side}", "A")
            assert "A" in said.split(": ", 1)[1], "the side is named"
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


@browser_only
def test_refusals_name_the_player_and_the_values_in_hungarian_and_spanish(browser, server):
    """exactly: the camera proposes Bea's roll on Ann's turn (NOT_YOUR_TURN: Ann), then, after
    Ann rolled 50, a move of a 20c token (WRONG_VALUE: 50 and 20); a phone confirms each."""
    post(server.port, "/api/games", EXACTLY)
    table = server.app.extensions["companion"].table
    errors: list[str] = []
    checks = []
    for lang, locale in LANGS[1:]:
        t = texts(lang)
        proposal = table.propose({"type": "roll", "player": "Bea", "face": "50"})
        ctl = phone(browser, f"{server.url}/controller?lang={lang}", errors, locale)
        ctl.click(f'[data-proposal="{proposal.id}"] button.okb')
        said = toast(ctl)
        assert said == t["error"] + ": " + t["rule_NOT_YOUR_TURN@player"].replace("{player}", "Ann")
        assert "Ann" in said and "Ann's" not in said
        checks.append(said)
        ctl.context.close()
    post(server.port, "/api/events", {"type": "roll", "player": "Ann", "face": "50"})
    for lang, locale in LANGS[1:]:
        t = texts(lang)
        proposal = table.propose({"type": "move", "player": "Ann", "value": 20, "from": "Ann", "to": "center"})
        ctl = phone(browser, f"{server.url}/controller?lang={lang}", errors, locale)
        ctl.click(f'[data-proposal="{proposal.id}"] button.okb')
        said = toast(ctl)
        want = t["rule_WRONG_VALUE@face,value"].replace("{face}", "50").replace("{value}", "20")
        assert said == t["error"] + ": " + want
        assert "50" in said and "20" in said and "the die shows" not in said
        ctl.screenshot(path=str(SHOTS / f"refusal-wrong-value-{lang}.png"))
        checks.append(said)
        ctl.context.close()
    assert len(set(checks)) == 4
    assert errors == []
