"""A minimal Chrome DevTools Protocol client over a stdlib websocket, for the browser test.

Why not ``--dump-dom`` and log scraping: the protocol reports console errors, exceptions and
every network request as structured events, and evaluates scripts in the live page, so the test
checks what the browser did rather than parsing its log. Nothing here needs a package: the
websocket handshake and framing (RFC 6455, client side: masked frames, no extensions) take a
few dozen lines. Headless Chromium is started with ``--remote-debugging-port=0`` and tells the
port it picked in ``DevToolsActivePort`` in its profile folder.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "CHROMIUM_CANDIDATES",
    "CHROMIUM_FLAGS",
    "Browser",
    "DevToolsError",
    "chromium",
    "chromium_or_skip",
]

# Debian's package first; the names other distributions use after it.
CHROMIUM_CANDIDATES = ("chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome")

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


class DevToolsError(RuntimeError):
    pass


class _WebSocket:
    def __init__(self, url: str, timeout: float) -> None:
        rest = url.removeprefix("ws://")
        hostport, _, path = rest.partition("/")
        host, _, port = hostport.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise DevToolsError("the DevTools endpoint closed during the handshake")
            response += chunk
        head, _, self.buffer = response.partition(b"\r\n\r\n")
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise DevToolsError(f"websocket handshake refused: {head[:200]!r}")

    def _exact(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise DevToolsError("the DevTools connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text: str, opcode: int = 0x1) -> None:
        payload = text.encode()
        header = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack("!H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack("!Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._exact(2)
            opcode, n = first & 0x0F, second & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)  # server frames are never masked
            if opcode == 0x9:  # ping
                self.send(payload.decode(errors="replace"), opcode=0xA)
                continue
            if opcode == 0x8:
                raise DevToolsError("the browser closed the DevTools connection")
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One page of a running Chromium: send commands, collect the events they cause."""

    def __init__(self, ws_url: str, timeout: float = 30.0) -> None:
        self.ws = _WebSocket(ws_url, timeout)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == ident:
                if "error" in message:
                    raise DevToolsError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for seen in self.events:
            if seen["method"] == event:
                return seen
        while time.monotonic() < deadline:
            message = json.loads(self.ws.receive())
            if "method" in message:
                self.events.append(message)
                if message["method"] == event:
                    return message
        raise DevToolsError(f"no {event} within {timeout:g} s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression!r} raised {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self.ws.close()


def _debugging_port(profile: Path, process: subprocess.Popen[bytes], timeout: float) -> int:
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DevToolsError(f"Chromium exited with status {process.returncode}")
        if marker.exists() and marker.read_text().strip():
            return int(marker.read_text().split()[0])
        time.sleep(0.05)
    raise DevToolsError(f"Chromium did not open its DevTools port within {timeout:g} s")


@contextmanager
def chromium(executable: str, profile: Path, timeout: float = 30.0) -> Iterator[Browser]:
    """Start headless Chromium on about:blank and yield its page; stop it afterwards."""
    process = subprocess.Popen(
        [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port = _debugging_port(profile, process, timeout)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout) as r:
            targets = json.load(r)
        page = next(t for t in targets if t.get("type") == "page")
        browser = Browser(page["webSocketDebuggerUrl"], timeout)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def chromium_or_skip(candidates: tuple[str, ...] = CHROMIUM_CANDIDATES) -> str:
    """The Chromium to drive. Missing on a developer's machine: skip with the reason, so the
    README's test command passes on a fresh clone. Missing where ``CI`` is set: fail, since a
    report nobody has seen rendered is not tested (``.ci/run`` installs it and sets ``CI``)."""
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return found
    reason = "Chromium is missing: install Debian's `chromium` package (.ci/run does)"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}; CI is set, so this is a failure, not a skip.")
    pytest.skip(f"{reason}; skipped because CI is not set.")
