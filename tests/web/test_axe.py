"""Every page on a phone passes axe-core (real Chromium at 390 x 844 against a real server on
loopback), in English, Magyar and Español: no serious or critical violation. The scoreboard and
the controller are checked for each of the four games as it starts, in play and once finished;
the New game page with each game chosen; History (its chart open), Players and Camera once the
four games are in the log.

axe-core comes from npm as a test-time asset (``tests/web/axe.py``): the service never serves it.
Each page's result (counts by impact, and each violation with a few of its elements) goes to
``test-output/axe/<lang>/<page>.json`` with a summary per language; a full-page screenshot of
each goes to ``test-output/screenshots/pages/<lang>/``.

On a Magyar or Español page the same visit reads every text a player sees (text, titles, labels,
placeholders, options): a word of the English catalogue that is not a word of the page's own
catalogue, nor a player's name, is English left over ("1 or 11", "throw · side A") and fails. (A
JSON example, the placeholder of Twenty One's own pad layout, is data whose keys are English by
its format, and is not read.) In every language, English too, a word of no sentence of the page's
own catalogue (a player's name and a card aside) was written into the page or its script rather
than taken from the catalogue (the PIN field's "OK", the QR codes' alternative text "QR") and
fails. The controller is also checked as a phone without the PIN sees it, its PIN field shown.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from companion.web.i18n import texts
from tests.web.axe import AXE_VERSION, ensure_axe
from tests.web.conftest import CHROMIUM, SHOTS, phone
from tests.web.test_game_over import LANGS, finishing_events, get, post

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")

OUT = Path(__file__).resolve().parents[2] / "test-output" / "axe"
PAGE_SHOTS = SHOTS / "pages"
FAILING = ("serious", "critical")
IMPACTS = ("critical", "serious", "moderate", "minor")

# The four games as a table of friends starts them: ordinary names, one long one, a team game.
GAMES: dict[str, dict[str, Any]] = {
    "exact21": {"type": "new_game", "game": "exact21",
                "sides": [{"name": "Reds", "players": ["Ann", "Ben"]}, {"name": "Blues", "players": ["Bea"]}]},
    "twentyone": {"type": "new_game", "game": "twentyone", "players": [{"name": "Ann", "sheet": "A"},
                  {"name": "Bea", "sheet": "C"}, {"name": "Konstantina Papadopoulou", "sheet": "B"}]},
    "exactly": {"type": "new_game", "game": "exactly", "players": ["Ann", "Bea", "Cy"]},
    "stack21": {"type": "new_game", "game": "stack21", "players": ["Ann", "Bo", "Cy", "Di"],
                "teams": [["Ann", "Cy"], ["Bo", "Di"]], "options": {"target": 8}},
}


def _in_play(name: str, state: dict[str, Any]) -> bool:
    """A state mid-game that shows most of the game's controls and board."""
    d = state.get("detail") or {}
    if state.get("finished"):
        return False
    if name == "exact21":
        return (d.get("last") or {}).get("type") == "throw"
    if name == "twentyone":
        return bool(d.get("roll")) and bool(d.get("waiting"))
    if name == "exactly":
        return d.get("phase") == "move"
    return bool(d.get("hand")) and bool(d.get("stacks"))


# Each page type: how long to wait before it is drawn.
def _drawn(version: str) -> Callable[[Any], None]:
    return lambda page: page.wait_for_function(f"document.body.dataset.version === '{version}'", timeout=8000)


def axe_source() -> str:
    path, why = ensure_axe()
    if path is None:
        if "not installed" in why:
            pytest.skip(why)
        pytest.fail(why)
    return path.read_text()


RUN_AXE = """async () => {
  const r = await axe.run(document, {resultTypes: ["violations", "incomplete"]});
  const list = (vs) => vs.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
    examples: v.nodes.slice(0, 4).map((n) => ({target: n.target.join(" "), html: n.html.slice(0, 160),
      summary: (n.failureSummary || "").slice(0, 300)}))}));
  // texts of one or two characters (a cell's printed number, a count) axe leaves undecided
  const short = [];
  for (const v of r.incomplete.filter((v) => v.id === "color-contrast"))
    for (const n of v.nodes)
      if (n.any.some((c) => c.data && c.data.messageKey === "shortTextContent")) short.push(n.target.join(" "));
  return {violations: list(r.violations), incomplete: list(r.incomplete), short};
}"""

# The contrast of the short texts axe-core does not judge ("too short to determine if it is actual
# text"): Twenty One's printed cell numbers, a cup's count, a coin. The ratio is WCAG's, of the
# text's colour over the backgrounds under it, each faded by the opacity of its element and of
# the elements around it; 4.5 : 1, or 3 : 1 for large text (24 px, or 18.66 px bold). A disabled
# control's text is exempt, as WCAG has it.
SHORT_TEXT = """(targets) => {
  const parse = (c) => { const m = /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1}; };
  const over = (top, a, below) => ({r: top.r * a + below.r * (1 - a), g: top.g * a + below.g * (1 - a),
    b: top.b * a + below.b * (1 - a)});
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const out = [];
  for (const sel of targets) {
    const e = document.querySelector(sel);
    if (!e || !e.textContent.trim() || e.closest("button:disabled, [aria-disabled='true']")) continue;
    const chain = [];
    for (let a = e; a; a = a.parentElement) chain.unshift(a);
    let bg = {r: 255, g: 255, b: 255}, opacity = 1;
    for (const a of chain) {
      const s = getComputedStyle(a);
      opacity *= parseFloat(s.opacity);
      const c = parse(s.backgroundColor);
      if (c && c.a > 0) bg = over(c, c.a * opacity, bg);
    }
    const s = getComputedStyle(e);
    const fg = parse(e instanceof SVGElement ? s.fill : s.color);
    if (!fg) continue;
    const text = over(fg, fg.a * opacity, bg);
    const [hi, lo] = [lum(text), lum(bg)].sort((x, y) => y - x);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) out.push({target: sel, text: e.textContent.trim().slice(0, 12),
      ratio: Math.round(ratio * 100) / 100, need, px: size});
  }
  return out;
}"""


# Every text a player sees on the page: text nodes outside hidden parts, and titles, labels,
# placeholders, alternative texts and a select's options.
SEEN = """() => { const out = [], w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    const e = n.parentElement, t = n.textContent.trim();
    if (t && e && !e.closest("script, style, [hidden]")) out.push(t);
  }
  for (const e of document.querySelectorAll("[title], [aria-label], [placeholder], [alt]"))
    for (const a of ["title", "aria-label", "placeholder", "alt"]) if (e.getAttribute(a)) out.push(e.getAttribute(a));
  for (const o of document.querySelectorAll("option")) out.push(o.textContent);
  return out; }"""
WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")

def _names(game: dict[str, Any]) -> list[str]:
    out = []
    for unit in game.get("players") or game.get("sides") or []:
        out += [unit] if isinstance(unit, str) else [unit["name"], *unit.get("players", [])]
    return out


NAMES = {w.lower() for g in GAMES.values() for n in _names(g) for w in WORD.findall(n)}


def catalogue_words(lang: str) -> set[str]:
    """The words of a catalogue's sentences, their placeholders ("{side}") left out."""
    return {w.lower() for v in texts(lang).values() for w in WORD.findall(re.sub(r"\{[^}]*\}", " ", v))}


def english_left(seen: list[str], lang: str) -> list[str]:
    """The texts of a page in ``lang`` that hold a word of the English catalogue its own
    catalogue does not have (a player's name aside), each with that word."""
    english, own = catalogue_words("en"), catalogue_words(lang)
    out = []
    for text in seen:
        if text.startswith(("{", "[")):  # a JSON example (Twenty One's own pad layout): data, its keys English by format
            continue
        left = sorted({w for w in WORD.findall(text) if w.lower() in english and w.lower() not in own
                       and w.lower() not in NAMES})
        if left:
            out.append(f"{'/'.join(left)} in {text[:80]!r}")
    return out


CARD = re.compile(r"(A|ZB|I21|10|[2-9])B?K?")  # a Stack 21 card as written on a chip ("AB", "ZB")


def unexplained(seen: list[str], lang: str) -> list[str]:
    """The texts of a page in ``lang`` (English too) that hold a word of no sentence of its own
    catalogue, a player's name and a card aside: a text written into a page or a script instead
    of taken from the catalogue (the PIN field's "OK", the QR codes' alternative text "QR")."""
    own = catalogue_words(lang)
    out = []
    for text in seen:
        if text.startswith(("{", "[")) or CARD.fullmatch(text):  # a JSON example; a card
            continue
        left = sorted({w for w in WORD.findall(text) if w.lower() not in own
                       and w.lower().removesuffix("'s") not in NAMES})  # "Ann's turn"
        if left:
            out.append(f"{'/'.join(left)} in {text[:80]!r}")
    return out


class Checker:
    """Opens each page in a phone, runs axe-core, records the result and a screenshot."""

    def __init__(self, browser: Any, url: str, lang: str, locale: str, axe: str) -> None:
        self.browser, self.url, self.lang, self.locale, self.axe = browser, url, lang, locale, axe
        self.errors: list[str] = []
        self.summary: dict[str, dict[str, int]] = {}
        self.failing: list[str] = []
        for folder in (OUT / lang, PAGE_SHOTS / lang):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)

    def check(self, key: str, path: str, ready: Callable[[Any], None], before: Callable[[Any], None] | None = None) -> None:
        sep = "&" if "?" in path else "?"
        page = phone(self.browser, f"{self.url}{path}{sep}lang={self.lang}", self.errors, self.locale)
        try:
            if before:
                before(page)
            ready(page)
            page.wait_for_timeout(150)  # a transition or a late layout settles
            page.add_script_tag(content=self.axe)
            found = page.evaluate(RUN_AXE)
            short = page.evaluate(SHORT_TEXT, found["short"])
            seen = page.evaluate(SEEN)
            english = english_left(seen, self.lang) if self.lang != "en" else []
            stray = unexplained(seen, self.lang)
            page.screenshot(path=str(PAGE_SHOTS / self.lang / f"{key}.png"), full_page=True)
        finally:
            page.context.close()
        violations = found["violations"]
        counts = {i: sum(1 for v in violations if v["impact"] == i) for i in IMPACTS}
        nodes = {i: sum(v["nodes"] for v in violations if v["impact"] == i) for i in IMPACTS}
        record = {"page": key, "path": path, "lang": self.lang, "viewport": "390x844", "axe": AXE_VERSION,
                  "violations_by_impact": counts, "elements_by_impact": nodes, "violations": violations,
                  # what axe could not decide by itself (text over an image or a gradient, ...): not counted
                  "needs_review": found["incomplete"],
                  # of those, the short texts below their contrast by the test's own measure: counted as serious
                  "short_text_contrast": short,
                  # on a Magyar or Español page: texts holding English words left over (fail)
                  "english_left": english,
                  # in any language: texts holding a word of none of the page's catalogue (fail)
                  "not_from_catalogue": stray}
        (OUT / self.lang / f"{key}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        self.summary[key] = {**counts, "short_text_contrast": len(short), "english_left": len(english),
                             "not_from_catalogue": len(stray)}
        for v in violations:
            if v["impact"] in FAILING:
                where = "; ".join(f"{e['target']} ({e['summary'].splitlines()[-1] if e['summary'] else ''})"
                                  for e in v["examples"][:2])
                self.failing.append(f"{self.lang} {key}: {v['impact']} {v['id']} x{v['nodes']}: {where}")
        if english:
            self.failing.append(f"{self.lang} {key}: English left: " + "; ".join(english[:3]))
        if stray:
            self.failing.append(f"{self.lang} {key}: not from the catalogue: " + "; ".join(stray[:3]))
        if short:
            where = "; ".join(f"{e['target']} '{e['text']}' {e['ratio']}:1 < {e['need']}:1 at {e['px']}px" for e in short[:3])
            self.failing.append(f"{self.lang} {key}: serious short-text contrast x{len(short)}: {where}")

    def game_pages(self, game: str, phase: str, state: dict[str, Any]) -> None:
        ready = _drawn(state["version"])
        self.check(f"scoreboard-{game}-{phase}", "/", ready)
        self.check(f"controller-{game}-{phase}", "/controller", ready)


def _play(checker: Checker, port: int, name: str) -> None:
    events = finishing_events(GAMES[name])
    state = post(port, "/api/games", GAMES[name])
    checker.game_pages(name, "start", state)
    shown = False
    for i, event in enumerate(events):
        state = post(port, "/api/events", event)
        if not shown and i >= len(events) // 3 and _in_play(name, state):
            checker.game_pages(name, "play", state)
            shown = True
    assert shown, f"{name}: no state in play to check"
    assert state["finished"]
    checker.game_pages(name, "over", state)


@pytest.mark.parametrize("lang,locale", LANGS)
def test_every_page_passes_axe_core_at_phone_size(browser, server, lang, locale):
    axe = axe_source()
    checker = Checker(browser, server.url, lang, locale, axe)
    for name in GAMES:
        _play(checker, server.port, name)
    for name in GAMES:
        def choose(page, name=name):
            page.wait_for_selector("#game")
            page.select_option("#game", name)
        checker.check(f"setup-{name}", "/setup", lambda page: page.wait_for_selector("#who :is(input, textarea)"), choose)
    # the controller as a phone without the PIN sees it once a change is refused for it: the PIN
    # field and its button (the page served to the Pi's own screen, on loopback, knows the PIN)
    checker.check("controller-pin", "/controller", lambda page: page.wait_for_selector("#login:not([hidden])"),
                  lambda page: page.evaluate("() => { C.pin = null; C.onPinNeeded(); }"))
    checker.check("history", "/history", lambda page: page.wait_for_selector("#chart:not([hidden]) svg"))
    checker.check("players", "/players", lambda page: page.wait_for_selector("#people .person"))
    checker.check("camera", "/health", lambda page: page.wait_for_selector("#health > *"))
    assert get(server.port, "/api/state")["finished"]
    (OUT / f"summary-{lang}.json").write_text(json.dumps(
        {"lang": lang, "axe": AXE_VERSION, "viewport": "390x844", "pages": checker.summary}, indent=1) + "\n")
    assert checker.errors == []
    assert not checker.failing, "serious or critical axe-core violations:\n" + "\n".join(checker.failing)
