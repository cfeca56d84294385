"""Retries, backoff, Retry-After and timeouts.

503 `busy` comes from a real `quarry serve --max-connections 1` whose one slot is held by a
connection in the middle of its request (src/server/http_loop.cpp answers the next connection
503 busy with Retry-After: 1). The server answers 429 only when a remote embedding provider
keeps refusing, which a test cannot arrange offline, so 429 and the non-`busy` 503 cases run
against a tiny in-test http.server that answers a scripted sequence of statuses.
Waits are recorded by replacing the transport's sleep, so nothing here sleeps or times.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
import unittest
from typing import List, Optional, Tuple
from unittest import mock

from _server import Server

from quarry_client import Busy, Client, ClientTimeout, QuarryError, RateLimited, _http


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next (status, Retry-After, code) of `script`."""

    protocol_version = "HTTP/1.1"
    script: List[Tuple[int, Optional[str], str]] = []
    seen: List[str] = []
    hang_up = False  # close each connection after answering, without saying so

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        type(self).seen.append(self.command + " " + self.path)
        status, retry_after, code = type(self).script.pop(0)
        body = (json.dumps({"error": {"code": code, "message": code, "details": {}}})
                if status >= 400 else json.dumps({"status": "ok", "version": "test"})).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = type(self).hang_up

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


class ScriptedServer(unittest.TestCase):
    def setUp(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        Scripted.seen = []
        Scripted.hang_up = False
        self.waits: List[float] = []
        patcher = mock.patch.object(_http, "_sleep", self.waits.append)
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def client(self, **kw: object) -> Client:
        c = Client("http://127.0.0.1:%d" % self.httpd.server_address[1], **kw)
        self.addCleanup(c.close)
        return c

    def test_429_then_200_honours_retry_after(self) -> None:
        Scripted.script = [(429, "2", "rate_limited"), (503, "1", "busy"), (200, None, "")]
        self.assertEqual(self.client().health()["status"], "ok")
        self.assertEqual(len(Scripted.seen), 3)
        self.assertEqual(len(self.waits), 2)
        self.assertTrue(2.0 <= self.waits[0] <= 2.2, self.waits)  # Retry-After + <=10% jitter
        self.assertTrue(1.0 <= self.waits[1] <= 1.1, self.waits)

    def test_backoff_without_retry_after_is_exponential_and_bounded(self) -> None:
        Scripted.script = [(503, None, "engine_unavailable")] * 5 + [(200, None, "")]
        self.client(max_retries=5, backoff=1.0, max_backoff=4.0).health()
        caps = [1.0, 2.0, 4.0, 4.0, 4.0]
        for wait, cap in zip(self.waits, caps):
            self.assertTrue(cap / 2 <= wait <= cap, (self.waits, caps))

    def test_gives_up_after_max_retries(self) -> None:
        Scripted.script = [(429, "0", "rate_limited")] * 3
        with self.assertRaises(RateLimited) as cm:
            self.client(max_retries=2).health()
        self.assertEqual((cm.exception.status, cm.exception.retry_after), (429, 0.0))
        self.assertEqual(len(Scripted.seen), 3)

    def test_no_retries_when_turned_off(self) -> None:
        Scripted.script = [(503, "1", "busy")]
        with self.assertRaises(Busy):
            self.client(max_retries=0).health()
        self.assertEqual(self.waits, [])

    def test_a_write_is_not_retried_unless_busy(self) -> None:
        # A 429 on an upload may come after work was done: not sent again.
        Scripted.script = [(429, "1", "rate_limited")]
        with self.assertRaises(RateLimited):
            self.client().add_document("kb", "a.md", "# A\n")
        self.assertEqual(len(Scripted.seen), 1)
        # `busy` is answered before any work: the same upload is sent again.
        Scripted.script = [(503, "1", "busy"), (201, None, "")]
        self.client().add_document("kb", "a.md", "# A\n")
        self.assertEqual(len(Scripted.seen), 3)

    def test_search_is_retried_although_it_is_a_post(self) -> None:
        Scripted.script = [(429, "1", "rate_limited"), (200, None, "")]
        self.client().search("kb", "q")
        self.assertEqual(Scripted.seen, ["POST /api/v1/kbs/kb/search"] * 2)

    def test_a_keep_alive_connection_closed_while_idle_is_reopened(self) -> None:
        Scripted.hang_up = True
        Scripted.script = [(200, None, ""), (201, None, "")]
        client = self.client()
        client.health()
        client.add_document("kb", "a.md", "# A\n")  # the first send finds the socket closed
        self.assertEqual(Scripted.seen, ["GET /api/v1/health", "POST /api/v1/kbs/kb/documents"])
        self.assertEqual(self.waits, [])

    def test_base_url_with_or_without_the_api_prefix(self) -> None:
        port = self.httpd.server_address[1]
        for url in ("http://127.0.0.1:%d" % port, "http://127.0.0.1:%d/api/v1/" % port):
            Scripted.script = [(200, None, "")]
            with Client(url) as client:
                client.health()
        self.assertEqual(Scripted.seen, ["GET /api/v1/health"] * 2)


class Timeouts(unittest.TestCase):
    """A listener that accepts and never answers: the client's timeout fires."""

    def setUp(self) -> None:
        self.silent = socket.socket()
        self.silent.bind(("127.0.0.1", 0))
        self.silent.listen(8)
        self.url = "http://127.0.0.1:%d" % self.silent.getsockname()[1]

    def tearDown(self) -> None:
        self.silent.close()

    def test_client_timeout(self) -> None:
        with self.assertRaises(ClientTimeout) as cm:
            Client(self.url, timeout=0.2, max_retries=0).health()
        self.assertIsNone(cm.exception.status)
        self.assertIsInstance(cm.exception, QuarryError)

    def test_per_call_timeout_overrides_the_client(self) -> None:
        client = Client(self.url, timeout=600)
        with self.assertRaises(ClientTimeout) as cm:
            client.status(timeout=0.2)
        self.assertIn("0.2", cm.exception.message)


class RealServerBusy(unittest.TestCase):
    """503 busy from a real server at its connection limit, then success once there is room."""

    def setUp(self) -> None:
        self.server = Server("--max-connections", "1")
        self.addCleanup(self.server.stop)

    def hold_the_only_slot(self) -> socket.socket:
        """A connection stuck mid-request (never idle, so never evicted), checked by a probe
        that must be turned away.

        The blocker sends a request's head with `Expect: 100-continue` and waits for the
        server's `100 Continue`: from then on the server holds it as a request waiting for its
        body. (Half a head, unanswered, is not enough: under load the server may accept the
        probe before it has read the blocker's bytes, take the blocker for an idle connection
        and evict it to make room.)
        """
        head = (b"POST /api/v1/kbs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 16\r\nExpect: 100-continue\r\n\r\n")
        for _ in range(50):
            blocker = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
            blocker.sendall(head)
            if not blocker.recv(64).startswith(b"HTTP/1.1 100"):
                blocker.close()
                continue
            with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as probe:
                probe.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
                if probe.recv(64).startswith(b"HTTP/1.1 503"):
                    self.addCleanup(blocker.close)
                    return blocker
            blocker.close()  # the server still counted an earlier connection: try again
        raise AssertionError("could not fill the server's one connection slot")

    def test_busy_without_retries(self) -> None:
        self.hold_the_only_slot()
        client = Client(self.server.url, max_retries=0)
        with self.assertRaises(Busy) as cm:
            client.create_kb("never")
        self.assertEqual((cm.exception.status, cm.exception.retry_after), (503, 1.0))

    def test_busy_is_retried_after_retry_after(self) -> None:
        blocker = self.hold_the_only_slot()
        waits: List[float] = []

        def wait(seconds: float) -> None:
            waits.append(seconds)
            blocker.close()  # make room, as a client finishing its request would
            time.sleep(0.05)  # let the server see the close before the retry connects

        client = Client(self.server.url, max_retries=10)
        self.addCleanup(client.close)
        with mock.patch.object(_http, "_sleep", wait):
            kb = client.create_kb("after-busy")  # a POST, retried because the code is busy
        self.assertEqual(kb.name, "after-busy")
        self.assertGreaterEqual(len(waits), 1)
        self.assertTrue(all(w >= 1.0 for w in waits), waits)  # Retry-After: 1


if __name__ == "__main__":
    unittest.main()
