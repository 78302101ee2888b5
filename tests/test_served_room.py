"""`kbtui --serve` answers only the page it served (issue 29 item 5, issue 28 item 8).

A real server on 127.0.0.1 and real WebSocket handshakes (aiohttp's client, installed with
textual-serve): a socket from another origin, or with no token, is refused before any room
starts; the page opened from the printed URL gets its socket and the room's first frames.
"""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("textual_serve")

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(demo):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kbtui", "--serve", str(demo), "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    banner, deadline = [], time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                line = proc.stdout.readline()
                if not line:
                    break
                banner.append(line)
                if line.startswith("serving "):
                    break
        assert banner and banner[-1].startswith("serving "), "".join(banner) + proc.stderr.read() if proc.poll() is not None else banner
        # wait for the listening socket (the banner is printed on startup, before the bind)
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port, banner
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _handshake(url: str, origin: str | None) -> int:
    async def go() -> int:
        headers = {"Origin": origin} if origin else {}
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(url, headers=headers, timeout=aiohttp.ClientWSTimeout(ws_close=5)):
                    return 101
            except aiohttp.WSServerHandshakeError as e:
                return e.status
    return asyncio.run(go())


def test_the_banner_is_one_clean_url_with_a_token(served):
    port, banner = served
    assert re.fullmatch(rf"serving http://127\.0\.0\.1:{port}/\?token=[A-Za-z0-9_-]{{40,}}\n", banner[-1]), banner
    assert not any("'" in line or "python" in line for line in banner), banner  # no quoted command line


def test_a_socket_from_another_origin_is_refused(served):
    port, banner = served
    token = banner[-1].split("token=", 1)[1].strip()
    assert _handshake(f"ws://127.0.0.1:{port}/ws?token={token}&", "http://evil.example") == 403
    assert _handshake(f"ws://127.0.0.1:{port}/ws?token={token}&", None) == 403  # no Origin at all


def test_a_socket_without_the_token_is_refused(served):
    port, _banner = served
    origin = f"http://127.0.0.1:{port}"
    assert _handshake(f"ws://127.0.0.1:{port}/ws", origin) == 403
    assert _handshake(f"ws://127.0.0.1:{port}/ws?token=guess&", origin) == 403


def test_the_page_without_the_token_is_refused(served):
    port, _banner = served

    async def go():
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/") as r:
                return r.status
    assert asyncio.run(go()) == 403


def test_the_served_page_loads_nothing_from_another_host_and_its_socket_opens_the_room(served):
    port, banner = served
    url = banner[-1].split(" ", 1)[1].strip()
    origin = f"http://127.0.0.1:{port}"

    async def go():
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as r:
                assert r.status == 200
                page = await r.text()
            # every URL the page names is this server's (relative, or ws:// to this origin)
            named = re.findall(r"""(?:src|href|url)\s*[=(]\s*["']?([^"') >]+)""", page)
            assert named, page
            assert not [u for u in named if re.match(r"(https?:)?//", u)], named
            assert "googleapis" not in page
            ws_url = re.search(r'data-session-websocket-url="([^"]+)"', page).group(1)
            assert ws_url.startswith(f"ws://127.0.0.1:{port}/ws?token=")
            # as the page's script does: it appends the terminal's size
            async with session.ws_connect(ws_url + "?width=100&height=30", headers={"Origin": origin}) as ws:
                got = b""
                deadline = time.monotonic() + 90
                while len(got) < 200 and time.monotonic() < deadline:
                    msg = await ws.receive(timeout=max(1.0, deadline - time.monotonic()))
                    if msg.type == aiohttp.WSMsgType.BINARY:
                        got += msg.data
                    elif msg.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                        break
                return got
    frames = asyncio.run(go())
    assert len(frames) >= 200, frames[:500]  # the room drew on the page's socket
