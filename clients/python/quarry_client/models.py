"""Typed results: dataclasses for the API's main shapes.

Each class has the fields of its schema in docs/openapi.json, and ``raw``: the JSON object as
the server sent it. A field a newer server adds is not lost, it is in ``raw``; a field an older
server leaves out is ``None``. Build one with ``Cls.from_json(obj)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import (
    Any, Callable, ClassVar, Dict, Generic, Iterator, List, Optional, Tuple, TypeVar,
)

__all__ = [
    "Model", "IndexStatus", "KB", "KbChangePlan", "ReindexProgress", "ReindexState", "KbStatus",
    "ServerStatus", "Document", "Chunk", "IngestItem", "IngestReport", "SearchHit",
    "SearchResult", "GrepLine", "GrepMatch", "GrepResult", "ActivityEntry", "Token", "NewToken",
    "Me", "PumpUseCase", "PumpUseCases", "PumpRun", "PumpEmbedding", "Page",
]

T = TypeVar("T")
Json = Dict[str, Any]


@dataclass
class Model:
    """Base of every result class: ``raw`` keeps the whole JSON object."""

    raw: Json = field(default_factory=dict, repr=False, compare=False)

    # Field name -> converter for nested objects, filled in by subclasses.
    _nested: ClassVar[Dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_json(cls: Any, data: Optional[Json]) -> Any:
        if data is None:
            return None
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls) if f.name != "raw")
        nested = cls._nested
        kwargs = {name: data[name] for name in names if name in data}
        for name, convert in nested.items():
            if kwargs.get(name) is not None:
                kwargs[name] = convert(kwargs[name])
        return cls(raw=data, **kwargs)


# The fields of each Model subclass, looked up once (dataclasses.fields is slow per call).
_FIELD_NAMES: Dict[type, Tuple[str, ...]] = {}


def _list_of(cls: Any) -> Callable[[List[Json]], List[Any]]:
    return lambda items: [cls.from_json(item) for item in items]


@dataclass
class IndexStatus(Model):
    """State of a KB's or document's indexes: ``not_built``, ``building``, ``ready``,
    ``stale`` or ``failed``."""

    keyword: Optional[str] = None
    vector: Optional[str] = None


@dataclass
class KB(Model):
    """A knowledge base (``KbInfo``)."""

    name: Optional[str] = None
    description: Optional[str] = None
    config: Optional[Json] = None
    documents: Optional[int] = None
    chunks: Optional[int] = None
    markdown_bytes: Optional[int] = None
    source_bytes: Optional[int] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    index_status: Optional[IndexStatus] = None
    revision: Optional[str] = None
    config_revision: Optional[str] = None
    vectors: Optional[Json] = None

    _nested = {"index_status": IndexStatus.from_json}


@dataclass
class KbChangePlan(Model):
    """What ``update_kb(..., dry_run=True)`` would do."""

    dry_run: Optional[bool] = None
    kb: Optional[str] = None
    description: Optional[str] = None
    config: Optional[Json] = None
    revision: Optional[Json] = None
    config_revision: Optional[Json] = None
    vectors: Optional[str] = None
    re_embed: Optional[bool] = None
    re_cut: Optional[bool] = None
    re_cut_at: Optional[str] = None
    documents: Optional[int] = None
    chunks: Optional[int] = None
    chunks_after: Optional[int] = None


@dataclass
class ReindexProgress(Model):
    """A running embedding sweep: ``done`` of ``total`` chunks."""

    kb: Optional[str] = None
    revision: Optional[str] = None
    total: Optional[int] = None
    done: Optional[int] = None
    failed: Optional[int] = None
    rate: Optional[float] = None
    eta_s: Optional[float] = None


@dataclass
class ReindexState(Model):
    """The background indexer's state for one KB; ``last`` is the last sweep's report."""

    kb: Optional[str] = None
    running: Optional[bool] = None
    progress: Optional[ReindexProgress] = None
    last: Optional[Json] = None
    consecutive_failures: Optional[int] = None
    next_attempt: Optional[str] = None

    _nested = {"progress": ReindexProgress.from_json}


@dataclass
class KbStatus(Model):
    """One KB's counts, index state and indexer state."""

    kb: Optional[str] = None
    documents: Optional[int] = None
    chunks: Optional[int] = None
    index_status: Optional[IndexStatus] = None
    revision: Optional[str] = None
    config_revision: Optional[str] = None
    vectors: Optional[Json] = None
    reindex: Optional[ReindexState] = None

    _nested = {"index_status": IndexStatus.from_json, "reindex": ReindexState.from_json}


@dataclass
class ServerStatus(Model):
    """``GET /status``: the server's version and every KB the caller may reach."""

    version: Optional[str] = None
    uptime_s: Optional[float] = None
    kbs: List[KbStatus] = field(default_factory=list)

    _nested = {"kbs": _list_of(KbStatus)}


@dataclass
class Document(Model):
    """A document of a KB. ``markdown`` is set only by ``get_document(..., markdown=True)``."""

    id: Optional[str] = None
    kb: Optional[str] = None
    filename: Optional[str] = None
    title: Optional[str] = None
    source_sha256: Optional[str] = None
    content_sha256: Optional[str] = None
    metadata: Optional[Json] = None
    subject: Optional[Json] = None
    converter: Optional[str] = None
    source_bytes: Optional[int] = None
    markdown_bytes: Optional[int] = None
    chunk_count: Optional[int] = None
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    index_status: Optional[IndexStatus] = None
    vector_error: Optional[Json] = None
    markdown: Optional[str] = None

    _nested = {"index_status": IndexStatus.from_json}


@dataclass
class Chunk(Model):
    """A chunk of a document, with offsets into the Markdown (``body_offset``) and the file."""

    index: Optional[int] = None
    chunk_id: Optional[str] = None
    parent_chunk: Optional[str] = None
    heading_path: Optional[List[str]] = None
    offset: Optional[int] = None
    body_offset: Optional[int] = None
    length: Optional[int] = None
    token_count: Optional[int] = None
    text: Optional[str] = None


@dataclass
class IngestItem(Model):
    """One file of an upload: ``status`` is added, updated, unchanged or failed."""

    path: Optional[str] = None
    status: Optional[str] = None
    doc_id: Optional[str] = None
    chunks: Optional[int] = None
    error: Optional[Json] = None
    warnings: Optional[List[Any]] = None
    vector_status: Optional[str] = None
    vector_error: Optional[Json] = None


@dataclass
class IngestReport(Model):
    """The answer to an upload: counts and one item per file."""

    added: Optional[int] = None
    updated: Optional[int] = None
    unchanged: Optional[int] = None
    failed: Optional[int] = None
    bytes: Optional[int] = None
    took_ms: Optional[float] = None
    items: List[IngestItem] = field(default_factory=list)

    _nested = {"items": _list_of(IngestItem)}


@dataclass
class SearchHit(Model):
    """A chunk that matched, with a ``score`` in [0, 1] and a snippet."""

    kb: Optional[str] = None
    doc_id: Optional[str] = None
    filename: Optional[str] = None
    title: Optional[str] = None
    chunk_id: Optional[str] = None
    chunk_index: Optional[int] = None
    parent_chunk: Optional[str] = None
    heading_path: Optional[List[str]] = None
    offset: Optional[int] = None
    length: Optional[int] = None
    snippet: Optional[str] = None
    snippet_text: Optional[str] = None
    highlights: Optional[List[List[int]]] = None
    score: Optional[float] = None
    raw_score: Optional[float] = None
    metric: Optional[str] = None
    subject: Optional[Json] = None
    metadata: Optional[Json] = None


@dataclass
class SearchResult(Model):
    """A search's answer. ``mode`` is the mode that answered; ``degraded`` says why it is not
    the one asked for (empty when it is). A hybrid search also has each mode's own hits in
    ``per_mode``; ``index_status`` tells whether the indexes are ``ready``."""

    kb: Optional[str] = None
    mode: Optional[str] = None
    hits: List[SearchHit] = field(default_factory=list)
    degraded: List[str] = field(default_factory=list)
    hint: Optional[str] = None  # auto only: the query looks like a regex or code identifier
    per_mode: Dict[str, List[SearchHit]] = field(default_factory=dict)
    index_status: Optional[IndexStatus] = None
    took_ms: Optional[float] = None

    _nested = {
        "hits": _list_of(SearchHit),
        "per_mode": lambda modes: {m: _list_of(SearchHit)(hits) for m, hits in modes.items()},
        "index_status": IndexStatus.from_json,
    }

    @property
    def is_degraded(self) -> bool:
        return bool(self.degraded)

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)


@dataclass
class GrepLine(Model):
    """A context line around a grep match."""

    line: Optional[int] = None
    text: Optional[str] = None


@dataclass
class GrepMatch(Model):
    """A matching line: its number, text, match ``ranges`` and context lines."""

    kb: Optional[str] = None
    doc_id: Optional[str] = None
    filename: Optional[str] = None
    line: Optional[int] = None
    text: Optional[str] = None
    ranges: Optional[List[List[int]]] = None
    highlights: Optional[List[List[int]]] = None
    before: List[GrepLine] = field(default_factory=list)
    after: List[GrepLine] = field(default_factory=list)
    subject: Optional[Json] = None

    _nested = {"before": _list_of(GrepLine), "after": _list_of(GrepLine)}


@dataclass
class GrepResult(Model):
    """A grep's answer; ``truncated`` when ``max_matches`` cut it short."""

    kb: Optional[str] = None
    matches: List[GrepMatch] = field(default_factory=list)
    truncated: Optional[bool] = None
    files_searched: Optional[int] = None
    files_matched: Optional[int] = None
    took_ms: Optional[float] = None

    _nested = {"matches": _list_of(GrepMatch)}

    def __iter__(self) -> Iterator[GrepMatch]:
        return iter(self.matches)

    def __len__(self) -> int:
        return len(self.matches)


@dataclass
class ActivityEntry(Model):
    """One audited write: who, what, when, through which surface."""

    id: Optional[int] = None
    at: Optional[str] = None
    actor: Optional[str] = None
    surface: Optional[str] = None
    action: Optional[str] = None
    kb: Optional[str] = None
    target: Optional[str] = None
    details: Optional[Json] = None


@dataclass
class Token(Model):
    """A token's public fields (``TokenInfo``); the secret is never listed."""

    id: Optional[str] = None
    name: Optional[str] = None
    scope: Optional[str] = None
    kbs: Optional[List[str]] = None
    created_at: Optional[str] = None
    revoked_at: Optional[str] = None


@dataclass
class NewToken(Model):
    """A token just created, with its ``secret``: shown this once only."""

    token: Optional[Token] = None
    secret: Optional[str] = None

    _nested = {"token": Token.from_json}


@dataclass
class Me(Model):
    """Who the caller is: actor, scope, the KBs its token is limited to, and ``can``."""

    actor: Optional[str] = None
    anonymous: Optional[bool] = None
    token_id: Optional[str] = None
    scope: Optional[str] = None
    kbs: Optional[List[str]] = None
    can: Optional[Dict[str, bool]] = None


@dataclass
class PumpUseCase(Model):
    """A deployed pump use case and its state (see docs/pump.md)."""

    use_case: Optional[str] = None
    config: Optional[Json] = None
    embedder: Optional[Json] = None
    revision: Optional[str] = None
    config_revision: Optional[str] = None
    model_error: Optional[Json] = None
    running: Optional[bool] = None
    pending: Optional[bool] = None
    parked: Optional[bool] = None
    next_run_at: Optional[str] = None
    attempts: Optional[int] = None
    tombstoned: Optional[int] = None
    last_run_at: Optional[str] = None
    last_error: Optional[Json] = None
    last_failed: Optional[int] = None
    last_skipped: Optional[int] = None
    usage_entries: Optional[int] = None
    usage_chunks: Optional[int] = None
    deployed_at: Optional[str] = None


@dataclass
class PumpUseCases(Model):
    """``GET /pump/use-cases``: the use cases, the spend budget and whether this server
    schedules runs."""

    use_cases: List[PumpUseCase] = field(default_factory=list)
    spend: Optional[Json] = None
    scheduler: Optional[bool] = None

    _nested = {"use_cases": _list_of(PumpUseCase)}


@dataclass
class PumpRun(Model):
    """What a ``_run`` did."""

    status: Optional[str] = None
    use_case: Optional[str] = None
    processed: Optional[int] = None
    failed: Optional[int] = None
    skipped: Optional[int] = None
    blocked: Optional[int] = None
    batches: Optional[int] = None
    drained: Optional[bool] = None
    chunks: Optional[int] = None
    revision: Optional[str] = None
    usage_entries: Optional[int] = None


@dataclass
class PumpEmbedding(Model):
    """A query embedded with a use case's model, and the revision to filter vectors on."""

    embedding: Optional[List[float]] = None
    revision: Optional[str] = None


@dataclass
class Page(Model, Generic[T]):
    """One page of a cursor-paged list. ``next_cursor`` is what to pass back for the next page
    (``cursor`` of documents, ``before`` of activity), ``None`` on the last page."""

    items: List[T] = field(default_factory=list)
    next_cursor: Optional[Any] = None

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
