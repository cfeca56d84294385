// Types of quarry-client. The result shapes follow the schemas of docs/openapi.json, field for
// field, in the API's own snake_case; request options are camelCase.

// --- options -------------------------------------------------------------------------------

/** Options of a QuarryClient. Each falls back to the environment or a default. */
export interface ClientOptions {
  /** The server's root URL. Default: `QUARRY_URL`, else http://127.0.0.1:7720. */
  baseUrl?: string;
  /** The bearer token's secret. Default: `QUARRY_TOKEN`; `null` sends no token. */
  token?: string | null;
  /** Time limit of a call in ms, retries and their waits included. Default 30000; 0: none. */
  timeoutMs?: number;
  /** Retries after a 429/503 answer (see README, "Retries"). Default 3; 0: never retry. */
  maxRetries?: number;
  /** First step of the exponential backoff in ms. Default 250. */
  retryBaseMs?: number;
  /** Longest wait between attempts in ms; a longer Retry-After is not waited for. Default 30000. */
  retryMaxMs?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch implementation. Default: the global fetch. */
  fetch?: typeof fetch;
}

/** Options every method accepts, for that call only. */
export interface RequestOptions {
  /** Aborts the call; it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
}

export type Scope = 'read' | 'write' | 'admin';
export type SearchMode = 'grep' | 'keyword' | 'vector' | 'hybrid' | 'auto';
export type IndexStatusValue = 'not_built' | 'building' | 'ready' | 'stale' | 'failed';
/** Document metadata: any JSON object. */
export type Metadata = Record<string, unknown>;
/** A metadata filter (docs/search.md#metadata-filters): `{lang: "en", year: {$gte: 2020}}`. */
export type Filter = Record<string, unknown>;
/** A KB configuration, or any part of it (docs/configuration.md). */
export type KbConfig = Record<string, any>;

export interface SearchOptions extends RequestOptions {
  /** Default (server): auto, that is hybrid with a working embedder, else keyword. */
  mode?: SearchMode;
  /** 1-1000, default 10. */
  topK?: number;
  /** 0-1, default 0. */
  minScore?: number;
  filter?: Filter;
  fusion?: 'interpolation' | 'rrf';
  semanticRatio?: number;
  /** Keyword: FTS5 syntax (phrases, AND/OR/NOT, prefix*, NEAR). */
  advanced?: boolean;
}

export interface GrepOptions extends RequestOptions {
  literal?: boolean;
  ignoreCase?: boolean;
  context?: number;
  beforeContext?: number;
  afterContext?: number;
  maxMatches?: number;
  filter?: Filter;
}

export interface ListDocumentsOptions extends RequestOptions {
  /** 1-1000, default 100. */
  limit?: number;
  cursor?: string | null;
  filter?: Filter;
}

export interface IterDocumentsOptions extends RequestOptions {
  filter?: Filter;
  /** Documents per request (the `limit` of each page). */
  pageSize?: number;
}

export interface ListActivityOptions extends RequestOptions {
  /** Only this KB's entries (required for an admin token limited to some KBs). */
  kb?: string;
  limit?: number;
  before?: number | null;
}

export interface IterActivityOptions extends RequestOptions {
  kb?: string;
  pageSize?: number;
}

/** A file of a multipart upload: a path on this machine, a File, or a name with content. */
export type UploadFile = string | File | { name: string; content: string | Blob | ArrayBuffer | ArrayBufferView };

export interface UploadOptions extends RequestOptions {
  /** Metadata applied to every uploaded document. */
  metadata?: Metadata;
  /** Let changed bytes replace the document of the same name (else 409 conflict). */
  replace?: boolean;
}

export interface CreateKbOptions extends RequestOptions {
  description?: string;
  config?: KbConfig;
}

export interface UpdateKbOptions extends RequestOptions {
  cutover?: 'on-complete' | 'immediate';
  /** Answer the change plan (KbChangePlan) and write nothing. */
  dryRun?: boolean;
}

export interface CreateTokenOptions extends RequestOptions {
  /** Default read. */
  scope?: Scope;
  /** Limit the token to these KBs. */
  kbs?: string[];
}

// --- results -------------------------------------------------------------------------------

export interface IndexStatus { keyword: IndexStatusValue; vector: IndexStatusValue; }
export interface Subject { key: string; value: string; }

export interface VectorFailure { doc_id: string; code: string; message: string; at: string; }
export interface VectorIndexInfo {
  serving_revision: string | null;
  building_revision: string | null;
  previous_revision: string | null;
  documents: number;
  ready: number;
  stale: number;
  pending: number;
  failed: number;
  stored_vectors: number;
  failures: VectorFailure[];
  unavailable?: Record<string, unknown> | null;
}

export interface KbInfo {
  name: string;
  description: string;
  config: KbConfig;
  documents: number;
  chunks: number;
  markdown_bytes: number;
  source_bytes: number;
  created_at: string;
  updated_at: string;
  index_status: IndexStatus;
  revision: string;
  config_revision: string;
  vectors: VectorIndexInfo;
}
export interface KbList { kbs: KbInfo[]; }

export interface KbChangePlan {
  dry_run: boolean;
  kb: string;
  description: string;
  config: KbConfig;
  revision: { before: string; after: string };
  config_revision: { before: string; after: string };
  vectors: 'none' | 'unchanged' | 'first' | 'blue_green' | 'replace' | 'switch_back' | 'drop';
  re_embed: boolean;
  re_cut: boolean;
  re_cut_at: 'now' | 'cutover' | null;
  documents: number;
  chunks: number;
  chunks_after: number;
}

export interface Document {
  id: string;
  kb: string;
  filename: string;
  title: string;
  source_sha256: string;
  content_sha256: string;
  metadata: Metadata;
  subject: Subject | null;
  converter: string;
  source_bytes: number;
  markdown_bytes: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
  index_status: IndexStatus;
  vector_error?: Record<string, unknown>;
}
export interface DocumentPage { documents: Document[]; next_cursor: string | null; }
export interface DocumentWithMarkdown { document: Document; markdown?: string; }

export interface Chunk {
  index: number;
  chunk_id: string;
  parent_chunk: string | null;
  heading_path: string[];
  offset: number;
  body_offset: number;
  length: number;
  token_count: number;
  text: string;
}
export interface DocumentChunks { kb: string; doc_id: string; chunks: Chunk[]; }

export interface CodeMessage { code: string; message: string; }
export interface IngestItem {
  path: string;
  status: 'added' | 'updated' | 'unchanged' | 'failed';
  doc_id?: string;
  chunks?: number;
  error?: CodeMessage;
  warnings?: string[];
  vector_status?: IndexStatusValue;
  vector_error?: Record<string, unknown>;
}
export interface IngestReport {
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
  bytes: number;
  took_ms: number;
  items: IngestItem[];
}

export interface Deleted { deleted: string; }
export interface DeletedMany { deleted: string[]; }
export interface Revoked { revoked: string; }

export interface Hit {
  kb: string;
  doc_id: string;
  filename: string;
  title: string;
  chunk_id: string;
  chunk_index: number;
  parent_chunk: string | null;
  /** Heading breadcrumbs. */
  heading_path: string[];
  offset: number;
  length: number;
  /** About 32 tokens around the match, matched terms in `** **`. */
  snippet: string;
  snippet_text: string;
  /** [begin, end) ranges into snippet_text, in Unicode code points. */
  highlights: Array<[number, number]>;
  /** Normalised to [0, 1], higher is better. */
  score: number;
  raw_score: number;
  metric: string;
  subject: Subject | null;
  metadata: Metadata;
}
export interface SearchResponse {
  kb: string;
  mode: Exclude<SearchMode, 'auto'>;
  hits: Hit[];
  degraded: string[];
  /** auto only: present when the query looks like a regular expression or a code identifier. */
  hint?: string;
  per_mode: Record<string, Hit[]>;
  index_status: IndexStatus;
  took_ms: number;
}

export interface GrepLine { line: number; text: string; }
export interface GrepMatch {
  kb: string;
  doc_id: string;
  filename: string;
  line: number;
  text: string;
  ranges: Array<[number, number]>;
  highlights: Array<[number, number]>;
  before: GrepLine[];
  after: GrepLine[];
  subject: Subject | null;
}
export interface GrepResponse {
  kb: string;
  matches: GrepMatch[];
  truncated: boolean;
  files_searched: number;
  files_matched: number;
  took_ms: number;
}

export interface ReindexReport {
  kb: string;
  serving_revision: string;
  target_revision: string;
  documents: number;
  chunks: number;
  chunks_embedded: number;
  chunks_cached: number;
  provider_calls: number;
  failed: number;
  pending: number;
  orphans: number;
  cancelled: boolean;
  cut_over: boolean;
  took_ms: number;
  rested_ms?: number;
  error?: CodeMessage;
}
export interface ReindexProgress {
  kb: string;
  revision: string;
  total: number;
  done: number;
  failed: number;
  rate: number;
  eta_s: number;
}
export interface ReindexState {
  kb: string;
  running: boolean;
  progress: ReindexProgress | null;
  last: ReindexReport | null;
  consecutive_failures: number;
  next_attempt: string | null;
}

export interface KbStatus {
  kb: string;
  documents: number;
  chunks: number;
  index_status: IndexStatus;
  revision: string;
  config_revision: string;
  vectors: VectorIndexInfo;
  reindex: ReindexState;
}
export interface ServerStatus { version: string; uptime_s: number; kbs: KbStatus[]; }
export interface Health { status: string; version: string; }
export interface Me {
  actor: string;
  anonymous: boolean;
  token_id: string | null;
  scope: Scope;
  kbs: string[];
  can: Record<Scope, boolean>;
}

export interface PluginSetting {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'secret-name';
  required: boolean;
  default: unknown;
  description: string;
  enum: unknown[] | null;
}
export interface PluginModel { name: string; dimensions: number | null; description: string; default: boolean; }
export interface Plugin { id: string; description: string | null; settings: PluginSetting[] | null; }
export interface ProviderPlugin extends Plugin { models: PluginModel[] | null; }
export interface PluginList { providers: ProviderPlugin[]; stores: Plugin[]; }

export interface ActivityEntry {
  id: number;
  at: string;
  actor: string;
  surface: string;
  action: string;
  kb: string;
  target: string;
  details: Record<string, unknown>;
}
export interface ActivityPage { entries: ActivityEntry[]; next_before: number | null; }

export interface TokenInfo {
  id: string;
  name: string;
  scope: Scope;
  kbs: string[];
  created_at: string;
  revoked_at: string | null;
}
export interface NewToken { token: TokenInfo; secret: string; }
export interface TokenList { tokens: TokenInfo[]; }

export interface SecretNames { secrets: string[]; }
export interface SecretStored { name: string; stored: boolean; }

export interface PumpUseCase {
  use_case: string;
  config: Record<string, unknown>;
  embedder: string;
  revision: string | null;
  config_revision: string;
  model_error: string | null;
  running: boolean;
  pending: boolean;
  parked: boolean;
  next_run_at: string | null;
  attempts: number;
  tombstoned: number;
  last_run_at: string | null;
  last_error: string | null;
  last_failed: number;
  last_skipped: number;
  usage_entries: number;
  usage_chunks: number;
  deployed_at: string;
}
export interface PumpSpend { monthly_budget: number | null; used: number; remaining: number | null; month_start: string; }
export interface PumpUseCaseList { use_cases: PumpUseCase[]; spend: PumpSpend; scheduler: boolean; }
export interface PumpRun {
  status: 'ok' | 'already_running';
  use_case: string;
  processed?: number;
  failed?: number;
  skipped?: number;
  blocked?: number;
  batches?: number;
  drained?: boolean;
  chunks?: number;
  revision?: string;
  usage_entries?: number;
}
export interface PumpEmbedding { embedding: number[]; revision: string; }
export interface EventResult { event: string; triggered: string[]; }

// --- the client ----------------------------------------------------------------------------

/** The server's address when neither `baseUrl` nor `QUARRY_URL` is given. */
export declare const DEFAULT_BASE_URL: string;

/** operationId of docs/openapi.json -> the QuarryClient method that calls it. */
export declare const OPERATIONS: Readonly<Record<string, keyof QuarryClient>>;

/** A client of one Quarry server; see README.md for retries, timeouts and errors. */
export declare class QuarryClient {
  constructor(options?: ClientOptions);
  readonly baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  headers: Record<string, string>;

  /** Sends one request to /api/v1 + path (segments already encoded); the methods use it. */
  request<T = unknown>(method: string, path: string, req?: {
    query?: Record<string, unknown>;
    json?: unknown;
    form?: FormData;
    idempotent?: boolean;
    accept?: 'json' | 'text';
  }, call?: RequestOptions): Promise<T>;

  getHealth(options?: RequestOptions): Promise<Health>;
  getOpenApi(options?: RequestOptions): Promise<Record<string, any>>;
  getStatus(options?: RequestOptions): Promise<ServerStatus>;
  getMe(options?: RequestOptions): Promise<Me>;
  listPlugins(options?: RequestOptions): Promise<PluginList>;
  getMetrics(options?: RequestOptions): Promise<string>;
  listActivity(options?: ListActivityOptions): Promise<ActivityPage>;
  iterActivity(options?: IterActivityOptions): AsyncGenerator<ActivityEntry, void, undefined>;

  listKbs(options?: RequestOptions): Promise<KbList>;
  createKb(name: string, options?: CreateKbOptions): Promise<KbInfo>;
  getKb(kb: string, options?: RequestOptions): Promise<KbInfo>;
  updateKb(kb: string, settings: Record<string, string | number | boolean>,
    options: UpdateKbOptions & { dryRun: true }): Promise<KbChangePlan>;
  updateKb(kb: string, settings: Record<string, string | number | boolean>,
    options?: UpdateKbOptions): Promise<KbInfo>;
  deleteKb(kb: string, options?: RequestOptions): Promise<Deleted>;
  getKbStatus(kb: string, options?: RequestOptions): Promise<KbStatus>;

  listDocuments(kb: string, options?: ListDocumentsOptions): Promise<DocumentPage>;
  iterDocuments(kb: string, options?: IterDocumentsOptions): AsyncGenerator<Document, void, undefined>;
  addDocuments(kb: string, files: UploadFile[], options?: UploadOptions): Promise<IngestReport>;
  addDocument(kb: string, filename: string, content: string | Uint8Array,
    options?: UploadOptions): Promise<IngestReport>;
  deleteDocumentsWhere(kb: string, filter: Filter, options?: RequestOptions): Promise<DeletedMany>;
  getDocument(kb: string, id: string,
    options?: RequestOptions & { markdown?: boolean }): Promise<DocumentWithMarkdown>;
  editDocument(kb: string, id: string, markdown: string, options?: RequestOptions): Promise<Document>;
  deleteDocument(kb: string, id: string, options?: RequestOptions): Promise<Deleted>;
  getDocumentMarkdown(kb: string, id: string, options?: RequestOptions): Promise<string>;
  listDocumentChunks(kb: string, id: string, options?: RequestOptions): Promise<DocumentChunks>;
  reconvertDocument(kb: string, id: string, options?: RequestOptions): Promise<Document>;

  search(kb: string, query: string, options?: SearchOptions): Promise<SearchResponse>;
  grep(kb: string, pattern: string, options?: GrepOptions): Promise<GrepResponse>;

  getReindex(kb: string, options?: RequestOptions): Promise<ReindexState>;
  startReindex(kb: string, options?: RequestOptions): Promise<ReindexState>;

  listTokens(options?: RequestOptions): Promise<TokenList>;
  createToken(name: string, options?: CreateTokenOptions): Promise<NewToken>;
  revokeToken(id: string, options?: RequestOptions): Promise<Revoked>;
  listSecrets(options?: RequestOptions): Promise<SecretNames>;
  putSecret(name: string, value: string, options?: RequestOptions): Promise<SecretStored>;
  deleteSecret(name: string, options?: RequestOptions): Promise<Deleted>;

  listPumpUseCases(options?: RequestOptions): Promise<PumpUseCaseList>;
  runPumpUseCase(useCase: string, options?: RequestOptions): Promise<PumpRun>;
  embedPumpText(useCase: string, text: string, options?: RequestOptions): Promise<PumpEmbedding>;
  postEvent(name: string, options?: RequestOptions): Promise<EventResult>;
}

// --- errors --------------------------------------------------------------------------------

/** Base class of every failed request; `code` is a stable code of docs/errors.md. */
export declare class QuarryError extends Error {
  constructor(message: string, fields?: {
    code?: string; details?: Record<string, string>; status?: number; retryAfterMs?: number | null;
  });
  /** The stable error code; `http_error` for an answer without an error envelope. */
  readonly code: string;
  readonly details: Record<string, string>;
  /** The HTTP status; 0 when no answer came (the client's own timeout). */
  readonly status: number;
  /** The answer's Retry-After in ms, if it had one. */
  readonly retryAfterMs: number | null;
}
export declare class InvalidArgumentError extends QuarryError {}
export declare class NotFoundError extends QuarryError {}
export declare class AlreadyExistsError extends QuarryError {}
export declare class ConflictError extends QuarryError {}
export declare class UnsupportedFormatError extends QuarryError {}
export declare class EngineUnavailableError extends QuarryError {}
export declare class CorruptInputError extends QuarryError {}
export declare class PayloadTooLargeError extends QuarryError {}
export declare class NoContentError extends QuarryError {}
export declare class TooManyChunksError extends QuarryError {}
export declare class ModeUnavailableError extends QuarryError {}
export declare class DimensionMismatchError extends QuarryError {}
export declare class BusyError extends QuarryError {}
export declare class IoError extends QuarryError {}
export declare class UnauthorizedError extends QuarryError {}
export declare class ForbiddenError extends QuarryError {}
export declare class RateLimitedError extends QuarryError {}
export declare class UpstreamError extends QuarryError {}
export declare class TimeoutError extends QuarryError {}
export declare class BlockedAddressError extends QuarryError {}
export declare class ContentTooLargeError extends QuarryError {}
export declare class InputRejectedError extends QuarryError {}
export declare class CancelledError extends QuarryError {}
export declare class ContractViolationError extends QuarryError {}
export declare class BudgetExhaustedError extends QuarryError {}
export declare class InternalError extends QuarryError {}

/** Error code -> class, one entry per code of docs/errors.md. */
export declare const ERROR_CLASSES: Readonly<Record<string, typeof QuarryError>>;

/** The error of an error envelope: its code's class, or QuarryError for an unknown code. */
export declare function errorFromEnvelope(fields: {
  code: string; message: string; details?: Record<string, string>; status: number; retryAfterMs?: number | null;
}): QuarryError;
