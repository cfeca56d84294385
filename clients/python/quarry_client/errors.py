"""Exceptions: one class per stable error code of docs/errors.md.

Every error the server answers has the body
``{"error": {"code": ..., "message": ..., "details": {...}}}``. The client raises the class
registered for ``code`` (``NotFound`` for ``not_found``, and so on); a code this version does
not know yet raises :class:`QuarryError` itself, so new server codes never break old clients.
Failures that never got an answer (refused connection, socket timeout) raise
:class:`TransportError` or its subclass :class:`ClientTimeout`.
"""

from __future__ import annotations

import json
from typing import Dict, Mapping, Optional, Type


class QuarryError(Exception):
    """An error answered by the server, or a transport failure.

    Attributes:
        code: the stable error code (``"not_found"``, ...), or ``"transport"`` /
            ``"client_timeout"`` for failures that got no answer.
        message: what went wrong and what to do, in the server's words.
        details: a dict of strings, such as ``field``, ``kb``, ``doc_id``.
        status: the HTTP status, or ``None`` when there was no answer.
        retry_after: the ``Retry-After`` header in seconds, when the server sent one.
    """

    code = "unknown"

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        details: Optional[Dict[str, str]] = None,
        status: Optional[int] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.details = dict(details or {})
        self.status = status
        self.retry_after = retry_after

    def __str__(self) -> str:
        prefix = "[%s]" % self.code if self.status is None else "[%s %d]" % (self.code, self.status)
        return "%s %s" % (prefix, self.message)

    def __repr__(self) -> str:
        return "%s(code=%r, status=%r, message=%r, details=%r)" % (
            type(self).__name__, self.code, self.status, self.message, self.details)


class TransportError(QuarryError):
    """No answer came back: the connection was refused or dropped."""

    code = "transport"


class ClientTimeout(TransportError):
    """The server did not answer within the client's timeout (see ``Client(timeout=...)``).

    Not to be confused with :class:`Timeout`, which the *server* answers (504) when a request
    runs past its own deadline.
    """

    code = "client_timeout"


class InvalidArgument(QuarryError):
    """400: the request is malformed; ``details["field"]`` names the culprit."""

    code = "invalid_argument"


class NotFound(QuarryError):
    """404: no such KB, document, token, secret or pump use case."""

    code = "not_found"


class AlreadyExists(QuarryError):
    """409: the KB name is taken."""

    code = "already_exists"


class Conflict(QuarryError):
    """409: the request clashes with stored state (a changed file uploaded without ``replace``)."""

    code = "conflict"


class UnsupportedFormat(QuarryError):
    """422: no converter for this kind of file."""

    code = "unsupported_format"


class EngineUnavailable(QuarryError):
    """503: a converter's library is missing, or the server runs without its indexer."""

    code = "engine_unavailable"


class CorruptInput(QuarryError):
    """422: the bytes are not what the file name says."""

    code = "corrupt_input"


class PayloadTooLarge(QuarryError):
    """413: the body or the file is over a size limit."""

    code = "payload_too_large"


class NoContent(QuarryError):
    """422: nothing to index (an empty file or edit)."""

    code = "no_content"


class TooManyChunks(QuarryError):
    """422: the document or call is over a chunk limit."""

    code = "too_many_chunks"


class ModeUnavailable(QuarryError):
    """422: the KB cannot serve this search mode (``vector`` without an embedder)."""

    code = "mode_unavailable"


class DimensionMismatch(QuarryError):
    """422: embedder and store dimensions disagree."""

    code = "dimension_mismatch"


class Busy(QuarryError):
    """503: the server is at a connection or queue limit, or another writer holds the data
    directory. The server did no work; the client retries it (see ``max_retries``)."""

    code = "busy"


class IoError(QuarryError):
    """500: the server's file system refused a read or write."""

    code = "io_error"


class Unauthorized(QuarryError):
    """401: no valid bearer token (or, as 502, a provider refused the server's key)."""

    code = "unauthorized"


class Forbidden(QuarryError):
    """403: the token lacks the scope, or may not reach this KB."""

    code = "forbidden"


class RateLimited(QuarryError):
    """429: a remote embedding provider or store kept answering 429."""

    code = "rate_limited"


class UpstreamError(QuarryError):
    """502: a remote embedding provider or store refused the request."""

    code = "upstream_error"


class Timeout(QuarryError):
    """504 (or 408): the request ran past the server's deadline, or a remote call timed out."""

    code = "timeout"


class BlockedAddress(QuarryError):
    """403: the SSRF guard refused an outbound address."""

    code = "blocked_address"


class ContentTooLarge(QuarryError):
    """413: a chunk or upload is longer than allowed."""

    code = "content_too_large"


class InputRejected(QuarryError):
    """422: the embedder refused this document's text."""

    code = "input_rejected"


class Cancelled(QuarryError):
    """409: a long operation was stopped; it resumes where it stopped."""

    code = "cancelled"


class ContractViolation(QuarryError):
    """422: a pump use case's source broke the pump contract."""

    code = "contract_violation"


class BudgetExhausted(QuarryError):
    """402: the pump's monthly spend budget is used up."""

    code = "budget_exhausted"


class Internal(QuarryError):
    """500: a bug or an unexpected failure in the server."""

    code = "internal"


#: The class for each server error code.
ERROR_CLASSES: Dict[str, Type[QuarryError]] = {
    cls.code: cls
    for cls in QuarryError.__subclasses__()
    if cls is not TransportError
}

__all__ = ["QuarryError", "TransportError", "ClientTimeout", "ERROR_CLASSES",
           "error_from_response"] + sorted(cls.__name__ for cls in ERROR_CLASSES.values())


def error_from_response(
    status: int, body: bytes, retry_after: Optional[float] = None
) -> QuarryError:
    """Build the exception for an error answer (status >= 400).

    A body that is not the error envelope (a proxy's HTML page, say) still gives a
    :class:`QuarryError`, with code ``"http_<status>"`` and the start of the body as message.
    """
    envelope: Mapping = {}
    try:
        decoded = json.loads(body.decode("utf-8")) if body else {}
        if isinstance(decoded, dict) and isinstance(decoded.get("error"), dict):
            envelope = decoded["error"]
    except (ValueError, UnicodeDecodeError):
        pass
    if not envelope:
        text = body[:200].decode("utf-8", "replace").strip()
        return QuarryError(text or "HTTP %d" % status, code="http_%d" % status, status=status,
                           retry_after=retry_after)
    code = str(envelope.get("code", "unknown"))
    details = envelope.get("details") or {}
    cls = ERROR_CLASSES.get(code, QuarryError)
    return cls(str(envelope.get("message", "")), code=code, details=details, status=status,
               retry_after=retry_after)
