"""The players page on a phone (real Chromium at 390 x 844 against a real server on loopback, a
real SQLite log): games played and won per player and per game, best scores, winning streaks and
head to head, worked out here from the games played, not read back from the server's own
figures; every word from the catalogue in English, Magyar and Español; linked from every page's
menu, which still fits a phone with one more link. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from companion.table import stats
from companion.web.i18n import texts
from tests.web.conftest import CHROMIUM, SHOTS, phone
from tests.web.test_game_over import LANGS, TOO_WIDE, WORD, finishing_events, get, post

browser_only = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

EXACTLY = {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea", "Cy"], "options": {"target": 1}}
EXACT21 = {"type": "new_game", "game": "exact21",
           "sides": [{"name": "Reds", "players": ["Ann", WORD]}, {"name": "Blues", "players": ["Bea"]}]}
# who stands behind each unit, as the set-up above says
PEOPLE = {"exactly": lambda unit: [unit], "exact21": lambda unit: {"Reds": ["Ann", WORD], "Blues": ["Bea"]}[unit]}
KEYS = ("nav_players", "p_played", "p_won", "p_best", "p_head_to_head")


def play(port: int, new_game: dict[str, Any]) -> dict[str, Any]:
    state = post(port, "/api/games?replace=1", new_game)
    for event in finishing_events(new_game):
        state = post(port, "/api/events", event)
    assert state["finished"]
    return state


def expected(finals: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each person's figures, counted by hand from the finished games, oldest first."""
    out: dict[str, dict[str, Any]] = {}
    for f in finals:
        for unit in f["players"]:
            won = unit in f["winners"]
            for name in PEOPLE[f["game"]](unit):
                p = out.setdefault(name, {"played": 0, "won": 0, "streak": 0, "best_streak": 0, "games": {}})
                p["played"] += 1
                p["won"] += won
                p["streak"] = p["streak"] + 1 if won else 0
                p["best_streak"] = max(p["best_streak"], p["streak"])
                g = p["games"].setdefault(f["game"], {"played": 0, "won": 0, "best": None})
                g["played"] += 1
                g["won"] += won
                g["best"] = max(f["scores"][unit], g["best"] if g["best"] is not None else -1)
    return out


def test_figures_from_summaries_partners_are_not_opponents_and_a_shared_win_counts_for_neither():
    games = [
        {"id": 1, "game": "stack21", "finished": True, "players": ["A+C", "B+D"], "winners": ["A+C"],
         "members": {"A+C": ["A", "C"], "B+D": ["B", "D"]}, "scores": {"A+C": 21, "B+D": 9}},
        {"id": 2, "game": "exactly", "finished": True, "players": ["A", "B"], "winners": ["A", "B"],
         "members": {"A": ["A"], "B": ["B"]}, "scores": {"A": 3, "B": 3}},
        {"id": 3, "game": "exactly", "finished": False, "players": ["A", "B"], "winners": [],
         "members": {"A": ["A"], "B": ["B"]}, "scores": {"A": 0, "B": 0}},
    ]
    out = stats.players(games)
    assert (out["counted"], out["unfinished"]) == (2, 1)
    pairs = {(h["a"], h["b"]): h for h in out["head_to_head"]}
    assert ("A", "C") not in pairs and ("B", "D") not in pairs, "partners"
    assert pairs[("A", "B")] == {"a": "A", "b": "B", "played": 2, "a_won": 1, "b_won": 0}
    a = next(p for p in out["players"] if p["name"] == "A")
    assert (a["played"], a["won"], a["streak"], a["best_streak"]) == (2, 2, 2, 2)
    assert a["games"] == {"stack21": {"played": 1, "won": 1, "best": 21}, "exactly": {"played": 1, "won": 1, "best": 3}}


@browser_only
def test_players_page_counts_games_wins_bests_streaks_and_head_to_head(browser, server):
    finals = [play(server.port, EXACTLY), play(server.port, EXACT21), play(server.port, EXACTLY)]
    post(server.port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Dan", "Eve"]})  # not counted
    want = expected(finals)
    errors: list[str] = []
    SHOTS.mkdir(parents=True, exist_ok=True)
    for lang, locale in LANGS:
        t, english = texts(lang), texts("en")
        board = phone(browser, f"{server.url}/?lang={lang}", errors, locale)
        link = board.locator("nav.bottom a[href='/players']")
        assert link.inner_text() == t["nav_players"]
        assert not board.evaluate(TOO_WIDE), "the menu with one more link still fits"
        link.click()
        board.wait_for_url("**/players")
        page = board
        page.wait_for_selector("#people .person")
        assert page.get_attribute("nav.bottom a[aria-current]", "href") == "/players"
        assert t["p_counted"].replace("{n}", "3") in page.inner_text("#counted")
        assert t["p_unfinished"].replace("{n}", "1") in page.inner_text("#counted")
        shown = page.eval_on_selector_all("#people .person", """(cards) => cards.map((c) => ({
            name: c.dataset.player, played: +c.querySelector('[data-played]').dataset.played,
            won: +c.querySelector('[data-won]').dataset.won,
            streak: +c.querySelector('.p-streak').dataset.streak, best: +c.querySelector('.p-streak').dataset.bestStreak,
            games: Object.fromEntries(Array.from(c.querySelectorAll('tbody tr')).map((r) => [r.dataset.game,
              Array.from(r.querySelectorAll('td')).map((d) => d.textContent)]))}))""")
        assert {s["name"] for s in shown} == set(want) and "Dan" not in want
        for s in shown:
            w = want[s["name"]]
            assert (s["played"], s["won"], s["streak"], s["best"]) == (w["played"], w["won"], w["streak"], w["best_streak"]), s
            assert s["games"] == {g: [str(v["played"]), str(v["won"]), str(v["best"])] for g, v in w["games"].items()}, s
        wins = [s["won"] for s in shown]
        assert wins == sorted(wins, reverse=True), "most wins first"
        # Ann and Bea met in all three games
        ann_bea = page.locator('#h2h li[data-a="Ann"][data-b="Bea"]')
        ann_won = sum(any(u in f["winners"] for u in f["players"] if "Ann" in PEOPLE[f["game"]](u)) for f in finals)
        bea_won = sum(any(u in f["winners"] for u in f["players"] if "Bea" in PEOPLE[f["game"]](u)) for f in finals)
        assert ann_bea.locator(".h2h-score").inner_text() == f"{ann_won} : {bea_won}"
        assert t["p_h2h_games"].replace("{n}", "3") in ann_bea.inner_text()
        assert page.locator(f'#h2h li[data-a="Ann"][data-b="{WORD}"]').count() == 0, "partners are not opponents"
        text = page.inner_text("main")
        for key in KEYS[1:]:
            assert t[key] in text, (lang, key)
        if lang != "en":
            for key in ("p_head_to_head", "p_played", "p_won", "p_best"):
                assert english[key] not in text, (lang, key, "English left")
            for game in ("exactly", "exact21"):
                assert page.locator(f'tr[data-game="{game}"] th').first.inner_text() == t["game_" + game]
        page.screenshot(path=str(SHOTS / f"players-{lang}.png"), full_page=True)
        wide = page.evaluate(TOO_WIDE)
        assert not wide, "\n".join(wide)
        page.context.close()
    assert json.dumps(get(server.port, "/api/players"))  # the API answers what the page read
    assert errors == []


@browser_only
def test_players_page_before_any_finished_game(browser, server):
    post(server.port, "/api/games", {"type": "new_game", "game": "exactly", "players": ["Dan", "Eve"]})
    errors: list[str] = []
    for lang, locale in LANGS:
        page = phone(browser, f"{server.url}/players?lang={lang}", errors, locale)
        page.wait_for_selector("#people .empty")
        assert page.inner_text("#people") == texts(lang)["p_none"]
        page.context.close()
    assert errors == []
