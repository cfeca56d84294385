"""``Client``: one method per REST operation of docs/openapi.json.

    from quarry_client import Client
    client = Client()                       # QUARRY_URL, QUARRY_TOKEN, or the local default
    for hit in client.search("notes", "installer", mode="keyword"):
        print(hit.score, hit.filename, hit.snippet_text)

``OPERATIONS`` maps every ``operationId`` to the method(s) that call it; a test keeps it in
step with docs/openapi.json. Every method takes ``timeout=`` (seconds) to override the client's.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from typing import Any, BinaryIO, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from . import _http
from ._http import path
from .models import (
    KB, ActivityEntry, Chunk, Document, GrepResult, IngestReport, KbChangePlan, KbStatus, Me,
    NewToken, Page, PumpEmbedding, PumpRun, PumpUseCases, ReindexState, SearchResult,
    ServerStatus, Token,
)

DEFAULT_URL = "http://127.0.0.1:7720"

#: operationId (docs/openapi.json) -> the Client method(s) that call it.
OPERATIONS: Dict[str, Union[str, Tuple[str, ...]]] = {
    "getHealth": "health",
    "getOpenApi": "openapi",
    "getStatus": "status",
    "getMe": "me",
    "listPlugins": "plugins",
    "getMetrics": "metrics",
    "listActivity": ("list_activity", "iter_activity"),
    "listKbs": "list_kbs",
    "createKb": "create_kb",
    "getKb": "get_kb",
    "updateKb": "update_kb",
    "deleteKb": "delete_kb",
    "getKbStatus": "kb_status",
    "listDocuments": ("list_documents", "iter_documents"),
    "addDocuments": ("add_document", "upload"),
    "deleteDocumentsWhere": "delete_documents_where",
    "getDocument": "get_document",
    "editDocument": "edit_document",
    "deleteDocument": "delete_document",
    "getDocumentMarkdown": "get_markdown",
    "listDocumentChunks": "list_chunks",
    "reconvertDocument": "reconvert_document",
    "search": "search",
    "grep": "grep",
    "getReindex": "reindex_status",
    "startReindex": "start_reindex",
    "listTokens": "list_tokens",
    "createToken": "create_token",
    "revokeToken": "revoke_token",
    "listSecrets": "list_secrets",
    "putSecret": "put_secret",
    "deleteSecret": "delete_secret",
    "listPumpUseCases": "list_pump_use_cases",
    "runPumpUseCase": "run_pump_use_case",
    "embedPumpText": "embed_pump_text",
    "postEvent": "post_event",
}

#: A file to upload: a path, or ``(filename, bytes | binary file object)``.
FileSpec = Union[str, "os.PathLike[str]", Tuple[str, Union[bytes, BinaryIO]]]


class Client:
    """A client for one Quarry server.

    Args:
        base_url: the server, such as ``http://127.0.0.1:7720`` (``/api/v1`` is added unless
            the URL already ends with it). Default: ``$QUARRY_URL``, else ``DEFAULT_URL``.
        token: a bearer token (``qry_...``). Default: ``$QUARRY_TOKEN``; none on loopback runs
            as the local admin.
        timeout: seconds to connect and for each read of an answer; every method takes
            ``timeout=`` to override it for one call.
        max_retries: how many times a 429 or 503 answer is retried (see ``_http`` for which
            requests are); 0 turns retries off.
        backoff, max_backoff: the first wait and the cap of the exponential backoff, in
            seconds, used when the answer has no ``Retry-After``.

    One keep-alive connection is kept per thread, so a client may be shared between threads.
    """

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
    ) -> None:
        base_url = base_url or os.environ.get("QUARRY_URL") or DEFAULT_URL
        token = token if token is not None else os.environ.get("QUARRY_TOKEN")
        self._t = _http.Transport(base_url, token, timeout, max_retries, backoff, max_backoff)

    @property
    def base_url(self) -> str:
        return self._t.base_url

    def close(self) -> None:
        """Close this thread's keep-alive connection."""
        self._t.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _json(self, method: str, route: str, **kw: Any) -> Any:
        return self._t.request(method, route, **kw).json()

    # -- server ----------------------------------------------------------------------------

    def health(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """``{"status": "ok", "version": ...}``; answers without a token."""
        return self._json("GET", "/health", timeout=timeout)

    def openapi(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return self._json("GET", "/openapi.json", timeout=timeout)

    def status(self, *, timeout: Optional[float] = None) -> ServerStatus:
        """Version, uptime and the status of every KB the caller may reach."""
        return ServerStatus.from_json(self._json("GET", "/status", timeout=timeout))

    def me(self, *, timeout: Optional[float] = None) -> Me:
        """Who the caller is and what it may do."""
        return Me.from_json(self._json("GET", "/me", timeout=timeout))

    def plugins(self, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """The embedding providers and stores a KB can name: ``{"providers", "stores"}``."""
        return self._json("GET", "/plugins", timeout=timeout)

    def metrics(self, *, timeout: Optional[float] = None) -> str:
        """Prometheus metrics, in the text format."""
        return self._t.request("GET", "/metrics", timeout=timeout).text()

    def list_activity(self, *, kb: Optional[str] = None, limit: Optional[int] = None,
                      before: Optional[int] = None,
                      timeout: Optional[float] = None) -> Page[ActivityEntry]:
        """One page of the activity log, newest first; ``next_cursor`` is the next ``before``."""
        data = self._json("GET", "/activity", query={"kb": kb, "limit": limit, "before": before},
                          timeout=timeout)
        return Page(raw=data, items=[ActivityEntry.from_json(e) for e in data["entries"]],
                    next_cursor=data.get("next_before"))

    def iter_activity(self, *, kb: Optional[str] = None, limit: Optional[int] = None,
                      timeout: Optional[float] = None) -> Iterator[ActivityEntry]:
        """Every activity entry, newest first, fetching pages of ``limit`` as it goes."""
        before = None
        while True:
            page = self.list_activity(kb=kb, limit=limit, before=before, timeout=timeout)
            yield from page.items
            if page.next_cursor is None:
                return
            before = page.next_cursor

    # -- knowledge bases -------------------------------------------------------------------

    def list_kbs(self, *, timeout: Optional[float] = None) -> List[KB]:
        """The KBs the caller may reach."""
        return [KB.from_json(k) for k in self._json("GET", "/kbs", timeout=timeout)["kbs"]]

    def create_kb(self, name: str, *, description: Optional[str] = None,
                  config: Optional[Dict[str, Any]] = None,
                  timeout: Optional[float] = None) -> KB:
        """Create a KB; ``config`` is any part of the configuration schema."""
        body: Dict[str, Any] = {"name": name}
        if description is not None:
            body["description"] = description
        if config is not None:
            body["config"] = config
        return KB.from_json(self._json("POST", "/kbs", json_body=body, timeout=timeout))

    def get_kb(self, kb: str, *, timeout: Optional[float] = None) -> KB:
        """Describe a KB."""
        return KB.from_json(self._json("GET", path("kbs", kb), timeout=timeout))

    def update_kb(self, kb: str, settings: Dict[str, Any], *, cutover: Optional[str] = None,
                  dry_run: bool = False,
                  timeout: Optional[float] = None) -> Union[KB, KbChangePlan]:
        """Change settings given as dotted keys (``{"chunking.max_tokens": 384}``).

        With ``dry_run=True`` nothing is written and the answer is a :class:`KbChangePlan`;
        otherwise the changed :class:`KB`. ``cutover="immediate"`` skips the blue-green build.
        """
        body: Dict[str, Any] = {"settings": settings}
        if cutover is not None:
            body["cutover"] = cutover
        data = self._json("PATCH", path("kbs", kb), json_body=body,
                          query={"dry_run": True} if dry_run else None, timeout=timeout)
        return KbChangePlan.from_json(data) if dry_run else KB.from_json(data)

    def delete_kb(self, kb: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Delete a KB with its documents, chunks and vectors: ``{"deleted": kb}``."""
        return self._json("DELETE", path("kbs", kb), timeout=timeout)

    def kb_status(self, kb: str, *, timeout: Optional[float] = None) -> KbStatus:
        """A KB's counts, index state and indexer state."""
        return KbStatus.from_json(self._json("GET", path("kbs", kb, "status"), timeout=timeout))

    # -- documents -------------------------------------------------------------------------

    def list_documents(self, kb: str, *, limit: Optional[int] = None,
                       cursor: Optional[str] = None, filter: Optional[Dict[str, Any]] = None,
                       timeout: Optional[float] = None) -> Page[Document]:
        """One page of a KB's documents, optionally restricted by a metadata ``filter``."""
        data = self._json("GET", path("kbs", kb, "documents"),
                          query={"limit": limit, "cursor": cursor, "filter": filter},
                          timeout=timeout)
        return Page(raw=data, items=[Document.from_json(d) for d in data["documents"]],
                    next_cursor=data.get("next_cursor"))

    def iter_documents(self, kb: str, *, limit: Optional[int] = None,
                       filter: Optional[Dict[str, Any]] = None,
                       timeout: Optional[float] = None) -> Iterator[Document]:
        """Every document of a KB, following ``next_cursor`` page by page (``limit`` each)."""
        cursor = None
        while True:
            page = self.list_documents(kb, limit=limit, cursor=cursor, filter=filter,
                                       timeout=timeout)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def add_document(self, kb: str, filename: str, content: Union[str, bytes], *,
                     metadata: Optional[Dict[str, Any]] = None, replace: bool = False,
                     timeout: Optional[float] = None) -> IngestReport:
        """Add one document from a JSON body. ``str`` content goes as text, ``bytes`` as
        base64; ``filename``'s extension picks the converter."""
        body: Dict[str, Any] = {"filename": filename}
        if isinstance(content, bytes):
            body["content_base64"] = base64.b64encode(content).decode("ascii")
        else:
            body["content"] = content
        if metadata is not None:
            body["metadata"] = metadata
        if replace:
            body["replace"] = True
        return IngestReport.from_json(
            self._json("POST", path("kbs", kb, "documents"), json_body=body, timeout=timeout))

    def upload(self, kb: str, files: Iterable[FileSpec], *,
               metadata: Optional[Dict[str, Any]] = None, replace: bool = False,
               timeout: Optional[float] = None) -> IngestReport:
        """Upload one or more files in one ``multipart/form-data`` request.

        Each file is a path or ``(filename, bytes or binary file)``. ``metadata`` applies to
        every file. With several files a file that fails becomes a ``failed`` item of the
        report; a single file that fails raises its error.
        """
        body, content_type = _multipart(files, metadata, replace)
        res = self._t.request("POST", path("kbs", kb, "documents"), body=body,
                              content_type=content_type, timeout=timeout)
        return IngestReport.from_json(res.json())

    def delete_documents_where(self, kb: str, filter: Dict[str, Any], *,
                               timeout: Optional[float] = None) -> List[str]:
        """Delete every document whose metadata matches ``filter`` (not empty); the ids."""
        return self._json("POST", path("kbs", kb, "documents", "delete"),
                          json_body={"filter": filter}, timeout=timeout)["deleted"]

    def get_document(self, kb: str, doc_id: str, *, markdown: bool = True,
                     timeout: Optional[float] = None) -> Document:
        """A document; with ``markdown=True`` its Markdown is in ``.markdown``."""
        data = self._json("GET", path("kbs", kb, "documents", doc_id),
                          query={"markdown": markdown}, timeout=timeout)
        doc = Document.from_json(data["document"])
        doc.markdown = data.get("markdown")
        return doc

    def edit_document(self, kb: str, doc_id: str, markdown: str, *,
                      timeout: Optional[float] = None) -> Document:
        """Replace a document's Markdown; it is re-chunked and re-indexed."""
        return Document.from_json(self._json("PUT", path("kbs", kb, "documents", doc_id),
                                             json_body={"markdown": markdown}, timeout=timeout))

    def delete_document(self, kb: str, doc_id: str, *,
                        timeout: Optional[float] = None) -> Dict[str, Any]:
        """Delete a document: ``{"deleted": doc_id}``."""
        return self._json("DELETE", path("kbs", kb, "documents", doc_id), timeout=timeout)

    def get_markdown(self, kb: str, doc_id: str, *, timeout: Optional[float] = None) -> str:
        """A document's Markdown alone."""
        return self._t.request("GET", path("kbs", kb, "documents", doc_id, "markdown"),
                               timeout=timeout).text()

    def list_chunks(self, kb: str, doc_id: str, *,
                    timeout: Optional[float] = None) -> List[Chunk]:
        """A document's chunks, in order."""
        data = self._json("GET", path("kbs", kb, "documents", doc_id, "chunks"), timeout=timeout)
        return [Chunk.from_json(c) for c in data["chunks"]]

    def reconvert_document(self, kb: str, doc_id: str, *,
                           timeout: Optional[float] = None) -> Document:
        """Convert the original upload again, dropping edits to the Markdown."""
        return Document.from_json(self._json(
            "POST", path("kbs", kb, "documents", doc_id, "reconvert"), timeout=timeout))

    # -- search ----------------------------------------------------------------------------

    def search(self, kb: str, query: str, *, mode: Optional[str] = None,
               top_k: Optional[int] = None, min_score: Optional[float] = None,
               filter: Optional[Dict[str, Any]] = None, fusion: Optional[str] = None,
               semantic_ratio: Optional[float] = None, advanced: Optional[bool] = None,
               timeout: Optional[float] = None) -> SearchResult:
        """Search a KB. ``mode``: ``grep``, ``keyword``, ``vector``, ``hybrid`` or ``auto``
        (the server's default). Unset arguments take the server's defaults."""
        body = _drop_none({"query": query, "mode": mode, "top_k": top_k,
                           "min_score": min_score, "filter": filter, "fusion": fusion,
                           "semantic_ratio": semantic_ratio, "advanced": advanced})
        return SearchResult.from_json(self._json("POST", path("kbs", kb, "search"),
                                                 json_body=body, idempotent=True,
                                                 timeout=timeout))

    def grep(self, kb: str, pattern: str, *, literal: Optional[bool] = None,
             ignore_case: Optional[bool] = None, context: Optional[int] = None,
             before_context: Optional[int] = None, after_context: Optional[int] = None,
             max_matches: Optional[int] = None, filter: Optional[Dict[str, Any]] = None,
             timeout: Optional[float] = None) -> GrepResult:
        """Run an RE2 pattern (or a ``literal`` string) over the KB's Markdown."""
        body = _drop_none({"pattern": pattern, "literal": literal, "ignore_case": ignore_case,
                           "context": context, "before_context": before_context,
                           "after_context": after_context, "max_matches": max_matches,
                           "filter": filter})
        return GrepResult.from_json(self._json("POST", path("kbs", kb, "grep"), json_body=body,
                                               idempotent=True, timeout=timeout))

    # -- indexing --------------------------------------------------------------------------

    def reindex_status(self, kb: str, *, timeout: Optional[float] = None) -> ReindexState:
        """The indexer's state: ``running``, ``progress``, the ``last`` sweep's report."""
        return ReindexState.from_json(self._json("GET", path("kbs", kb, "reindex"),
                                                 timeout=timeout))

    def start_reindex(self, kb: str, *, timeout: Optional[float] = None) -> ReindexState:
        """Ask the background indexer for a sweep now (202); poll :meth:`reindex_status`."""
        return ReindexState.from_json(self._json("POST", path("kbs", kb, "reindex"),
                                                 timeout=timeout))

    # -- tokens and secrets ----------------------------------------------------------------

    def list_tokens(self, *, timeout: Optional[float] = None) -> List[Token]:
        """Every token, revoked ones included (never their secrets)."""
        return [Token.from_json(t) for t in self._json("GET", "/tokens", timeout=timeout)["tokens"]]

    def create_token(self, name: str, scope: str = "read", *, kbs: Optional[List[str]] = None,
                     timeout: Optional[float] = None) -> NewToken:
        """Create a token of ``scope`` read, write or admin, limited to ``kbs`` if given."""
        body: Dict[str, Any] = {"name": name, "scope": scope}
        if kbs is not None:
            body["kbs"] = kbs
        return NewToken.from_json(self._json("POST", "/tokens", json_body=body, timeout=timeout))

    def revoke_token(self, token_id: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Revoke a token: ``{"revoked": token_id}``."""
        return self._json("DELETE", path("tokens", token_id), timeout=timeout)

    def list_secrets(self, *, timeout: Optional[float] = None) -> List[str]:
        """The names of the stored secrets (values are never returned)."""
        return self._json("GET", "/secrets", timeout=timeout)["secrets"]

    def put_secret(self, name: str, value: str, *,
                   timeout: Optional[float] = None) -> Dict[str, Any]:
        """Store a secret (encrypted at rest): ``{"name", "stored"}``."""
        return self._json("PUT", path("secrets", name), json_body={"value": value},
                          timeout=timeout)

    def delete_secret(self, name: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Delete a secret: ``{"deleted": name}``."""
        return self._json("DELETE", path("secrets", name), timeout=timeout)

    # -- the embedding pump ----------------------------------------------------------------

    def list_pump_use_cases(self, *, timeout: Optional[float] = None) -> PumpUseCases:
        """The deployed pump use cases, the spend budget and whether the server schedules."""
        return PumpUseCases.from_json(self._json("GET", "/pump/use-cases", timeout=timeout))

    def run_pump_use_case(self, use_case: str, *, timeout: Optional[float] = None) -> PumpRun:
        """Run a use case now, in the request, and say what it did."""
        return PumpRun.from_json(self._json("POST", path("pump", "use-cases", use_case, "_run"),
                                            timeout=timeout))

    def embed_pump_text(self, use_case: str, text: str, *,
                        timeout: Optional[float] = None) -> PumpEmbedding:
        """Embed query text with the use case's model (counts against the pump budget)."""
        return PumpEmbedding.from_json(self._json(
            "POST", path("pump", "use-cases", use_case, "_embed"), json_body={"text": text},
            timeout=timeout))

    def post_event(self, name: str, *, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Post an event; the answer names the use cases it triggered."""
        return self._json("POST", "/events", json_body={"name": name}, timeout=timeout)


def _drop_none(body: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _multipart(files: Iterable[FileSpec], metadata: Optional[Dict[str, Any]],
               replace: bool) -> Tuple[bytes, str]:
    """The form docs/rest.md describes: ``file`` parts, then ``metadata`` and ``replace``."""
    boundary = "quarry-" + uuid.uuid4().hex
    parts: List[bytes] = []

    def part(disposition: str, content_type: str, data: bytes) -> None:
        parts.append(("--%s\r\nContent-Disposition: form-data; %s\r\nContent-Type: %s\r\n\r\n"
                      % (boundary, disposition, content_type)).encode("utf-8") + data + b"\r\n")

    count = 0
    for spec in files:
        if isinstance(spec, tuple):
            name, content = spec
            data = content if isinstance(content, bytes) else content.read()
        else:
            name = os.path.basename(os.fspath(spec))
            with open(spec, "rb") as f:
                data = f.read()
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        part('name="file"; filename="%s"' % quoted, "application/octet-stream", data)
        count += 1
    if count == 0:
        raise ValueError("upload() needs at least one file")
    if metadata is not None:
        part('name="metadata"', "application/json", json.dumps(metadata).encode("utf-8"))
    if replace:
        part('name="replace"', "text/plain", b"true")
    parts.append(("--%s--\r\n" % boundary).encode("ascii"))
    return b"".join(parts), "multipart/form-data; boundary=" + boundary
