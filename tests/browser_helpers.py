"""Shared pieces of the browser tests: Playwright with Debian's chromium, and an app served by
uvicorn on a thread."""

from __future__ import annotations

import contextlib
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest


def browser_kit():
    """Playwright's sync API and Debian's chromium, or a failure saying how to get them."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright (the Python package): `make test` "
                    "installs it (pip install -e '.[dev]')")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.fail("the browser tests need Debian's chromium: `make test` installs it "
                    "(tools/install-browser.sh, with apt-get)")
    return sync_playwright, chromium


@contextlib.contextmanager
def serving(app):
    """``app`` served by uvicorn on a free port, on a thread: its base URL."""
    import uvicorn
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # (TCP_NODELAY)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)  # (the poll of a wait on server.started)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
