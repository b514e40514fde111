"""A scripted HTTP server on 127.0.0.1 for API fault tests: each POST is answered by a function of the test's."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

from fake_openai import LocalServer


class Scripted:
    """A server whose POST handler is ``respond(handler, server)``; it records each request's headers."""

    def __init__(self, respond):
        self.respond, self.headers = respond, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.headers.append(dict(self.headers))
                try:
                    outer.respond(self, outer)
                except (BrokenPipeError, ConnectionResetError, OSError):  # the client hung up
                    pass

            do_GET = do_POST

        self.httpd = LocalServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_port}/v1"


def send(handler, status, body, headers=()):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)
