"""`kbtui --serve`: the reading room served to one browser page, and to nothing else.

textual-serve binds to localhost, but a WebSocket is not held to the same-origin rule: any
page the person visits could open `/ws`, type a question into a room running as them and
read the notes back from the frames. So the server here is textual-serve's own `Server`,
with its public handlers overridden in a subclass (no private name touched):

- the page and the socket ask for a token made per run (`secrets`), printed once in the URL
  the banner shows, as Jupyter does, compared with `hmac.compare_digest`;
- the socket's handshake must carry the `Origin` of the page served (a browser always sends
  it, and a page cannot forge it);
- the page is our own template, so it loads its font from the server's own static folder,
  not a public font host (an offline server, a tunnel, a room that calls out to nobody).
"""

from __future__ import annotations

import hmac
import secrets
import sys
from pathlib import Path
from typing import Any

PAGE_FOLDER = Path(__file__).with_name("served_page")
TOKEN_BYTES = 32
INSTALL_SERVE = "pip install -e '.[serve]'"  # the one wording, README's too (run in the kbtui checkout)


def origin_of(host: str, port: int) -> str:
    """The page's origin, as a browser writes it in `Origin:` (no default port shown)."""
    if port == 80:
        return f"http://{host}"
    return f"http://{host}:{port}"


def token_matches(given: str | None, token: str) -> bool:
    """Constant-time: the time a wrong token takes says nothing about the right one."""
    return given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode())


def ws_token(query: Any) -> str | None:
    """The token of a `/ws` handshake. The page's script appends `?width=..&height=..` to the
    socket URL it is given, so the URL carries `?token=T&` and the script's `?width` lands
    as a key of its own; a bare `token=T?width=..` is read too."""
    given = query.get("token")
    return given.split("?", 1)[0] if isinstance(given, str) else None


def make_server(command: str, *, host: str, port: int, title: str = "kbtui", token: str | None = None):
    """The textual-serve Server for `command`, guarded by origin and token."""
    from aiohttp import web
    import aiohttp_jinja2
    from textual_serve.server import Server

    class GuardedServer(Server):
        def __init__(self) -> None:
            super().__init__(command, host=host, port=port, title=title, templates_path=PAGE_FOLDER)
            self.token = token or secrets.token_urlsafe(TOKEN_BYTES)
            self.origin = origin_of(host, port)

        @property
        def page_url(self) -> str:
            return f"{self.origin}/?token={self.token}"

        async def on_startup(self, app: web.Application) -> None:
            # One clean line a person can click, in place of the library's logo and quoted command.
            print(f"serving {self.page_url}", flush=True)
            print("Ctrl+C to stop", flush=True)

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            if f"http://{request.host}" != self.origin or not token_matches(request.query.get("token"), self.token):
                # Another host name (a rebinding DNS name) or no token: only the printed URL opens it.
                raise web.HTTPForbidden(text="kbtui: open the URL kbtui --serve printed (it carries the token)\n")
            size = request.query.get("fontsize", "16")
            context = {
                "font_size": int(size) if size.isdigit() and 4 <= int(size) <= 64 else 16,
                "static_url": "/static/",
                "websocket_url": f"ws{self.origin.removeprefix('http')}/ws?token={self.token}&",
                "title": title,
            }
            response = aiohttp_jinja2.render_template("app_index.html", request, context)
            # The page may talk to this server alone; nothing it loads comes from elsewhere.
            response.headers["Content-Security-Policy"] = (
                "default-src 'self'; connect-src 'self' ws" + self.origin.removeprefix("http") + "; "
                "style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                "font-src 'self'; frame-ancestors 'none'"
            )
            response.headers["Referrer-Policy"] = "no-referrer"  # the token stays out of any Referer
            return response

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            if request.headers.get("Origin") != self.origin:
                raise web.HTTPForbidden(text=f"kbtui: a socket from {request.headers.get('Origin')!r} is not this page's\n")
            if not token_matches(ws_token(request.query), self.token):
                raise web.HTTPForbidden(text="kbtui: no token, or not this server's\n")
            return await super().handle_websocket(request)

    return GuardedServer()


def serve(command: str, *, host: str, port: int) -> int:
    try:
        server = make_server(command, host=host, port=port)
    except ImportError:
        print(f"kbtui --serve needs textual-serve: {INSTALL_SERVE}", file=sys.stderr)
        return 2
    server.serve()
    return 0
