"""The HTTP transport: one keep-alive connection per thread, timeouts, retries.

Retry rule (also in docs/clients.md):

* An answer of 429 or 503 is retried, up to ``max_retries`` times, when the request is
  idempotent (GET, PUT, DELETE, and the read-only POSTs ``search`` and ``grep``) or when the
  answer's code is ``busy``: the server answers ``busy`` before doing any work (connection or
  queue limit, or the data directory's writer lock; a write that cannot take the lock does
  nothing), so even an upload is safe to send again.
* The wait is the answer's ``Retry-After`` (seconds) when present, plus up to 10% jitter;
  otherwise ``backoff * 2**attempt`` capped at ``max_backoff``, with "equal jitter" (half of it
  fixed, half random).
* A reused keep-alive connection that fails before any answer arrives is reopened and the
  request sent once more, whatever the method: the server closes only connections that are
  idle between requests (``--idle-timeout``, or making room at ``--max-connections``), so such a
  request was never read.
* Client timeouts and other transport failures are never retried: the server may have done
  the work.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import quote, urlencode, urlsplit

from .errors import ClientTimeout, TransportError, error_from_response

API_PREFIX = "/api/v1"
RETRY_STATUSES = frozenset((429, 503))
# How a connection the server closed shows up (RemoteDisconnected is a ConnectionResetError).
_DROPPED = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
USER_AGENT = "quarry-client-python/0.1.0"

# Indirection so that tests can observe the waits without sleeping.
_sleep = time.sleep


class Response:
    """An answer: status, headers (lower-case names) and the raw body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def text(self) -> str:
        return self.body.decode("utf-8")


def path(*segments: Any) -> str:
    """``path("kbs", kb, "documents")`` -> ``"/kbs/<kb>/documents"``, each segment escaped."""
    return "".join("/" + quote(str(s), safe="") for s in segments)


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP-date: fall back to the backoff


class Transport:
    """Sends requests to one server; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        token: Optional[str],
        timeout: float,
        max_retries: int,
        backoff: float,
        max_backoff: float,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("base_url must be http(s)://host[:port][/prefix], got %r" % base_url)
        self.base_url = base_url
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        prefix = parts.path.rstrip("/")
        # The server root or the API root may be given: both mean the same API.
        self._prefix = prefix if prefix.endswith(API_PREFIX) else prefix + API_PREFIX
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = "Bearer " + token
        self._local = threading.local()

    # -- connections ---------------------------------------------------------------------

    def _connection(self) -> Tuple[http.client.HTTPConnection, bool]:
        """This thread's connection, and whether it has served a request before."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = conn
            self._local.used = False
        return conn, self._local.used and conn.sock is not None

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        self._drop()

    # -- requests ------------------------------------------------------------------------

    def request(
        self,
        method: str,
        route: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        json_body: Any = None,
        body: Optional[bytes] = None,
        content_type: Optional[str] = None,
        timeout: Optional[float] = None,
        idempotent: Optional[bool] = None,
    ) -> Response:
        """Send one request and return its answer; raise the error class for a 4xx/5xx.

        ``idempotent`` defaults to True for GET, PUT and DELETE.
        """
        target = self._prefix + route
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
            if pairs:
                target += "?" + urlencode(pairs)
        headers = dict(self._headers)
        if json_body is not None:
            body = json.dumps(json_body, separators=(",", ":")).encode("utf-8")
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        if idempotent is None:
            idempotent = method in ("GET", "HEAD", "PUT", "DELETE")

        attempt = 0
        while True:
            res = self._send(method, target, body, headers, timeout)
            if res.status < 400:
                return res
            err = error_from_response(res.status, res.body, _retry_after(res.headers))
            if (attempt >= self.max_retries or res.status not in RETRY_STATUSES
                    or not (idempotent or err.code == "busy")):
                raise err
            _sleep(self._delay(attempt, err.retry_after))
            attempt += 1

    def _delay(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return retry_after + random.uniform(0, retry_after * 0.1)
        step = min(self.max_backoff, self.backoff * (2 ** attempt))
        return step / 2 + random.uniform(0, step / 2)

    def _send(self, method: str, target: str, body: Optional[bytes],
              headers: Dict[str, str], timeout: Optional[float]) -> Response:
        for resend in (False, True):
            conn, reused = self._connection()
            wait = self.timeout if timeout is None else timeout
            if conn.timeout != wait:  # settimeout costs system calls: only on a change
                conn.timeout = wait
                if conn.sock is not None:
                    conn.sock.settimeout(wait)
            try:
                raw, data = _exchange(conn, method, target, body, headers)
            except socket.timeout as e:
                self._drop()
                raise ClientTimeout("no answer from %s within %s s (%s %s)"
                                    % (self.base_url, wait, method, target)) from e
            except _DROPPED as e:
                self._drop()
                if reused and not resend:
                    continue  # the server closed an idle keep-alive connection: send again
                raise TransportError("connection to %s lost: %s" % (self.base_url, e)) from e
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                raise TransportError("cannot reach %s: %s" % (self.base_url, e)) from e
            self._local.used = True
            if raw.will_close:
                self._drop()
            headers_out = {k.lower(): v for k, v in raw.getheaders()}
            return Response(raw.status, headers_out, data)
        raise AssertionError("unreachable")


def _exchange(conn: http.client.HTTPConnection, method: str, target: str,
              body: Optional[bytes], headers: Dict[str, str]
              ) -> Tuple[http.client.HTTPResponse, bytes]:
    """Send one request and read its answer.

    A server at its connection limit answers 503 ``busy`` and closes without reading the
    request, so sending may fail with a broken pipe although the answer is already there to
    read: it is read before the failure is reported.
    """
    try:
        conn.request(method, target, body=body, headers=headers)
    except _DROPPED:
        if conn.sock is None:
            raise
        early = http.client.HTTPResponse(conn.sock, method=method)
        try:
            early.begin()
        except (OSError, http.client.HTTPException):
            early.close()
            raise
        return early, early.read()
    raw = conn.getresponse()
    return raw, raw.read()


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)

