"""The camera-lost banner every page shows is the catalogue's sentence in the page's language,
chosen by the camera's state, never with the camera's English status inside ("retrying in 1.9 s",
"no frame for 12 s: …"): on a real service whose camera does not answer, in real Chromium at
390 x 844 in English, Magyar and Español; and for a camera that stopped sending, by the same
function the pages use."""

from __future__ import annotations

import pytest

from companion.web.i18n import LANGUAGES, texts
from companion.web.pages import alert_text
from tests.web.conftest import CHROMIUM, PHONE, SHOTS, phone
from tests.web.test_camera_page import service_on
from tests.web.test_game_over import LANGS, TOO_WIDE

ENGLISH_STATUS = ("retrying in", "no frame for", "the camera stopped sending", "stalled", "{")


def lost(state: str, status: str) -> dict[str, str]:
    """The alert as pages.alerts() builds it."""
    return {"code": "CAMERA_LOST", "from": "camera", "state": state, "status": status,
            "message": f"the camera is not sending pictures ({status})"}


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_banner_is_the_catalogues_sentence_for_the_cameras_state(lang):
    t = texts(lang)
    retrying = alert_text(lost("retrying", "retrying in 1.9 s"), t)
    stalled = alert_text(lost("stalled", "no frame for 12 s: the camera stopped sending"), t)
    assert retrying == t["alert_CAMERA_LOST_retrying"]
    assert stalled == t["alert_CAMERA_LOST_stalled"]
    assert retrying != stalled
    for text in (retrying, stalled):
        for english in ENGLISH_STATUS:
            assert english not in text, (lang, text)
    # an alert without a state (an older service's) still reads whole, without its status
    assert alert_text({"code": "CAMERA_LOST", "status": "x", "message": "m"}, t) == t["alert_CAMERA_LOST"]
    if lang != "en":
        english = texts("en")
        assert retrying != english["alert_CAMERA_LOST_retrying"] and stalled != english["alert_CAMERA_LOST_stalled"]


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_a_camera_that_does_not_answer_is_told_in_the_phones_language(browser, tmp_path):
    service, running = service_on(tmp_path, {"source": str(tmp_path / "no-such-video.mp4")})
    try:
        for lang, locale in LANGS:
            t = texts(lang)
            errors: list[str] = []
            page = phone(browser, "about:blank", errors, locale)
            for _ in range(20):  # the first open fails within a moment of the start
                page.goto(f"{running.url}/controller?lang={lang}")
                if page.locator('#alerts .alert[data-code="CAMERA_LOST"]').count():
                    break
                page.wait_for_timeout(250)
            banner = page.locator('#alerts .alert[data-code="CAMERA_LOST"]')
            assert banner.count() == 1
            text = banner.inner_text()
            assert text == t["alert_CAMERA_LOST_retrying"], (lang, text)
            for english in ENGLISH_STATUS:
                assert english not in text, (lang, text)
            assert page.viewport_size == PHONE and not page.evaluate(TOO_WIDE)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"camera-lost-banner-{lang}.png"))
            assert errors == []
            page.context.close()
    finally:
        running.stop()
        service.stop()
