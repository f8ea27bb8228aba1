"""The scoreboard service: Flask app factory, JSON API, SSE stream, pages (issue 7)."""

from companion.web.app import create_app

__all__ = ["create_app"]
