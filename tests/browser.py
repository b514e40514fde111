"""Headless Chromium for page tests: load a page offline, record every network request and script error."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (Debian: apt-get install chromium); .ci/run installs it")


def run_chromium(*args: str, profile: Path) -> subprocess.CompletedProcess:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


BROWSER_HOSTS = ("google.com", "googleapis.com", "gvt1.com")  # the browser's own update and time checks


class RecordingProxy:
    """Every request the browser sends through its proxy: a page that fetches anything shows up here."""

    def __init__(self):
        import http.server
        import threading

        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hits.append(self.path)
                self.send_response(404)
                self.end_headers()

            do_POST = do_HEAD = do_GET

            def do_CONNECT(self):
                hits.append(self.path)
                self.send_response(403)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def page_requests(self) -> list[str]:
        return [h for h in self.hits if not any(host in h.split("/")[2 if "//" in h else 0] for host in BROWSER_HOSTS)]

    def close(self):
        self.server.shutdown()


def load_in_chromium(url: str, profile: Path) -> tuple[str, list[str], list[str]]:
    """The DOM after load, the network requests the page made and the script errors it logged."""
    proxy = RecordingProxy()
    try:
        proc = run_chromium(f"--proxy-server={proxy.url}", "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr",
                            "--v=0", "--virtual-time-budget=3000", "--dump-dom", url, profile=profile)
    finally:
        proxy.close()
    errors = [line for line in proc.stderr.splitlines() if "CONSOLE" in line and ("Uncaught" in line or "Error" in line)]
    return proc.stdout, proxy.page_requests(), errors
