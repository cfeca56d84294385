// QuarryClient: one method per operation of docs/openapi.json, over Node's global fetch.
//
// Every method resolves to the JSON body the REST API answers (the shapes are the schemas of
// docs/openapi.json, typed in index.d.ts), except the two text routes (Markdown, metrics), which
// resolve to a string. A failed request rejects with the QuarryError subclass of its code.
import { QuarryError, TimeoutError, errorFromEnvelope } from './errors.js';

/** The server the client talks to when neither `baseUrl` nor `QUARRY_URL` says otherwise. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:7720';

/**
 * operationId of docs/openapi.json -> the QuarryClient method that calls it. Kept explicit so
 * that a test can check it against the OpenAPI document in both directions.
 */
export const OPERATIONS = Object.freeze({
  getHealth: 'getHealth',
  getOpenApi: 'getOpenApi',
  getStatus: 'getStatus',
  getMe: 'getMe',
  listPlugins: 'listPlugins',
  getMetrics: 'getMetrics',
  listActivity: 'listActivity',
  listKbs: 'listKbs',
  createKb: 'createKb',
  getKb: 'getKb',
  updateKb: 'updateKb',
  deleteKb: 'deleteKb',
  getKbStatus: 'getKbStatus',
  listDocuments: 'listDocuments',
  addDocuments: 'addDocuments', // multipart upload; addDocument() sends the JSON body form
  deleteDocumentsWhere: 'deleteDocumentsWhere',
  getDocument: 'getDocument',
  editDocument: 'editDocument',
  deleteDocument: 'deleteDocument',
  getDocumentMarkdown: 'getDocumentMarkdown',
  listDocumentChunks: 'listDocumentChunks',
  reconvertDocument: 'reconvertDocument',
  search: 'search',
  grep: 'grep',
  getReindex: 'getReindex',
  startReindex: 'startReindex',
  listTokens: 'listTokens',
  createToken: 'createToken',
  revokeToken: 'revokeToken',
  listSecrets: 'listSecrets',
  putSecret: 'putSecret',
  deleteSecret: 'deleteSecret',
  listPumpUseCases: 'listPumpUseCases',
  runPumpUseCase: 'runPumpUseCase',
  embedPumpText: 'embedPumpText',
  postEvent: 'postEvent',
});

const seg = encodeURIComponent;

/** Splits a method's options into the per-call request options and the operation's own. */
function splitCall(options = {}) {
  const { signal, timeoutMs, maxRetries, headers, ...rest } = options;
  return [{ signal, timeoutMs, maxRetries, headers }, rest];
}

/** Drops the keys whose value is undefined, so that the server applies its own defaults. */
function defined(object) {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; null when absent or unreadable. */
function parseRetryAfter(value) {
  if (value == null || value.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => { clearTimeout(timer); reject(signal.reason); };
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The QuarryError for a non-2xx answer: from its error envelope, else from its status. */
async function errorFromResponse(res) {
  const text = await res.text();
  const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'));
  let envelope;
  try { envelope = JSON.parse(text)?.error; } catch { /* not JSON: a proxy's page, say */ }
  if (envelope && typeof envelope.code === 'string') {
    return errorFromEnvelope({ code: envelope.code, message: envelope.message ?? '',
      details: envelope.details ?? {}, status: res.status, retryAfterMs });
  }
  return new QuarryError(`HTTP ${res.status} ${res.statusText}: ${text.slice(0, 200)}`,
    { code: 'http_error', status: res.status, retryAfterMs });
}

/**
 * One file of a multipart upload as a Blob with its name. A string is a path on this machine,
 * read lazily with node:fs (so the module itself loads where node:fs does not exist).
 */
async function toUploadPart(file) {
  if (typeof file === 'string') {
    const { openAsBlob } = await import('node:fs');
    const { basename } = await import('node:path');
    return { blob: await openAsBlob(file), name: basename(file) };
  }
  if (typeof File !== 'undefined' && file instanceof File) return { blob: file, name: file.name };
  if (file && typeof file.name === 'string' && file.content !== undefined) {
    const blob = file.content instanceof Blob ? file.content : new Blob([file.content]);
    return { blob, name: file.name };
  }
  throw new TypeError('addDocuments: each file is a path, a File, or {name, content}');
}

/**
 * A client of one Quarry server. Options fall back to the environment: `QUARRY_URL` for the
 * base URL and `QUARRY_TOKEN` for the bearer token.
 *
 * Retries: an answer of 429 or 503 is retried up to `maxRetries` times, waiting at least its
 * `Retry-After` and otherwise an exponential backoff with full jitter. A `503 busy` is retried
 * for every operation, because the server answers it before acting (the connection limit refuses
 * the request unread; a writer that cannot take the data directory's lock writes nothing). Any
 * other 429/503 is retried only for idempotent operations: GET, PUT and DELETE routes, search,
 * grep and a dry-run PATCH. A write such as an upload is never repeated after the server may
 * have acted on it.
 */
export class QuarryClient {
  #token;
  #fetch;

  /** @param {import('./index.js').ClientOptions} [options] */
  constructor(options = {}) {
    const env = globalThis.process?.env ?? {};
    /** The server's root URL, without a trailing slash. */
    this.baseUrl = String(options.baseUrl ?? env.QUARRY_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#token = options.token !== undefined ? options.token : (env.QUARRY_TOKEN || null);
    this.#fetch = options.fetch ?? globalThis.fetch;
    /** Default time limit of a call in ms, retries and their waits included; 0: none. */
    this.timeoutMs = options.timeoutMs ?? 30_000;
    /** Default number of retries after a 429/503 answer. */
    this.maxRetries = options.maxRetries ?? 3;
    /** The backoff's first step in ms; attempt n waits a random time up to base * 2^n. */
    this.retryBaseMs = options.retryBaseMs ?? 250;
    /** The longest wait between attempts in ms; a longer `Retry-After` is not waited for. */
    this.retryMaxMs = options.retryMaxMs ?? 30_000;
    /** Headers sent with every request. */
    this.headers = { ...(options.headers ?? {}) };
  }

  /**
   * Sends one request to `/api/v1` + `path` and resolves to the parsed answer.
   * @param {string} method
   * @param {string} path The route under /api/v1, its segments already encoded.
   * @param {object} [req]
   * @param {Record<string, unknown>} [req.query] Query parameters; undefined ones are left out.
   * @param {unknown} [req.json] A body sent as JSON.
   * @param {FormData} [req.form] A body sent as multipart/form-data.
   * @param {boolean} [req.idempotent] May be repeated after any 429/503 (default: GET, PUT, DELETE).
   * @param {'json' | 'text'} [req.accept] How to read a 2xx answer.
   * @param {import('./index.js').RequestOptions} [call]
   */
  async request(method, path, { query, json, form, idempotent, accept = 'json' } = {}, call = {}) {
    const url = new URL(`${this.baseUrl}/api/v1${path}`);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined && v !== null) url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
    const headers = { Accept: accept === 'json' ? 'application/json' : '*/*', ...this.headers, ...call.headers };
    if (this.#token) headers.Authorization = `Bearer ${this.#token}`;
    let body;
    if (json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(json);
    } else if (form !== undefined) {
      body = form; // fetch sets the multipart Content-Type with its boundary
    }

    const timeoutMs = call.timeoutMs ?? this.timeoutMs;
    const timer = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : null;
    const signals = [call.signal, timer].filter(Boolean);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const maxRetries = call.maxRetries ?? this.maxRetries;
    const repeatable = idempotent ?? ['GET', 'HEAD', 'PUT', 'DELETE'].includes(method);

    try {
      for (let attempt = 0; ; attempt++) {
        const res = await this.#fetch(url, { method, headers, body, signal });
        if (res.ok) return accept === 'json' ? await res.json() : await res.text();
        const error = await errorFromResponse(res);
        const delay = attempt < maxRetries && this.#retryable(error, repeatable)
          ? this.#retryDelay(attempt, error.retryAfterMs) : null;
        if (delay === null) throw error;
        await sleep(delay, signal);
      }
    } catch (e) {
      if (e instanceof QuarryError) throw e;
      if (call.signal?.aborted) throw call.signal.reason;
      if (timer?.aborted) {
        throw new TimeoutError(`no answer from ${method} ${url.pathname} within ${timeoutMs} ms`,
          { code: 'timeout', status: 0, details: { timeout_ms: String(timeoutMs) } });
      }
      throw e;
    }
  }

  /** Whether an error answer may be retried: see the class comment for the rule. */
  #retryable(error, repeatable) {
    if (error.status !== 429 && error.status !== 503) return false;
    return error.code === 'busy' || repeatable;
  }

  /** Ms to wait before retry `attempt` (0-based), or null when Retry-After asks too long. */
  #retryDelay(attempt, retryAfterMs) {
    const backoff = Math.random() * Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** attempt);
    if (retryAfterMs === null) return backoff;
    if (retryAfterMs > this.retryMaxMs) return null;
    // At least what the server asked; the jitter spreads clients that were refused together.
    return retryAfterMs + Math.random() * Math.min(retryAfterMs, this.retryBaseMs) * 0.5;
  }

  // --- server ------------------------------------------------------------------------------

  /** `GET /health`: liveness and version; needs no token. */
  getHealth(options) { return this.request('GET', '/health', {}, options); }

  /** `GET /openapi.json`: the OpenAPI 3.1 document; needs no token. */
  getOpenApi(options) { return this.request('GET', '/openapi.json', {}, options); }

  /** `GET /status`: version, uptime and every reachable KB's indexer state. */
  getStatus(options) { return this.request('GET', '/status', {}, options); }

  /** `GET /me`: the caller's actor, scope, KBs and what it may do. */
  getMe(options) { return this.request('GET', '/me', {}, options); }

  /** `GET /plugins`: the embedding providers and vector stores, with their settings. */
  listPlugins(options) { return this.request('GET', '/plugins', {}, options); }

  /** `GET /metrics`: Prometheus metrics, as text. */
  getMetrics(options) { return this.request('GET', '/metrics', { accept: 'text' }, options); }

  /** `GET /activity`: one page of the audit log, newest first (`limit`, `before`, `kb`). */
  listActivity(options) {
    const [call, { kb, limit, before }] = splitCall(options);
    return this.request('GET', '/activity', { query: { kb, limit, before } }, call);
  }

  /** Every activity entry, newest first, following `next_before` page after page. */
  async *iterActivity(options) {
    const [call, { kb, pageSize }] = splitCall(options);
    let before;
    do {
      const page = await this.listActivity({ ...call, kb, limit: pageSize, before });
      yield* page.entries;
      before = page.next_before;
    } while (before !== null && before !== undefined);
  }

  // --- knowledge bases ---------------------------------------------------------------------

  /** `GET /kbs`: the KBs the token may reach. */
  listKbs(options) { return this.request('GET', '/kbs', {}, options); }

  /** `POST /kbs`: creates a KB; `config` is any part of the configuration schema. */
  createKb(name, options) {
    const [call, { description, config }] = splitCall(options);
    return this.request('POST', '/kbs', { json: defined({ name, description, config }) }, call);
  }

  /** `GET /kbs/{kb}`: the KB with its config, counts and index status. */
  getKb(kb, options) { return this.request('GET', `/kbs/${seg(kb)}`, {}, options); }

  /**
   * `PATCH /kbs/{kb}`: changes settings given as dotted keys (`{"chunking.max_tokens": 384}`).
   * With `dryRun: true` it answers the change plan and writes nothing.
   */
  updateKb(kb, settings, options) {
    const [call, { cutover, dryRun }] = splitCall(options);
    return this.request('PATCH', `/kbs/${seg(kb)}`, {
      query: { dry_run: dryRun }, json: defined({ settings, cutover }), idempotent: dryRun === true,
    }, call);
  }

  /** `DELETE /kbs/{kb}`: deletes the KB with its documents, chunks and vectors. */
  deleteKb(kb, options) { return this.request('DELETE', `/kbs/${seg(kb)}`, {}, options); }

  /** `GET /kbs/{kb}/status`: the KB's counts, index status and indexer state. */
  getKbStatus(kb, options) { return this.request('GET', `/kbs/${seg(kb)}/status`, {}, options); }

  // --- documents ---------------------------------------------------------------------------

  /** `GET /kbs/{kb}/documents`: one page of documents (`limit`, `cursor`, `filter`). */
  listDocuments(kb, options) {
    const [call, { limit, cursor, filter }] = splitCall(options);
    return this.request('GET', `/kbs/${seg(kb)}/documents`, { query: { limit, cursor, filter } }, call);
  }

  /**
   * Every document of a KB (matching `filter`), following `next_cursor` page after page;
   * `pageSize` is each request's `limit`. A call option such as `timeoutMs` applies per page.
   */
  async *iterDocuments(kb, options) {
    const [call, { filter, pageSize }] = splitCall(options);
    let cursor;
    do {
      const page = await this.listDocuments(kb, { ...call, filter, limit: pageSize, cursor });
      yield* page.documents;
      cursor = page.next_cursor;
    } while (cursor);
  }

  /**
   * `POST /kbs/{kb}/documents` as multipart/form-data: uploads several files in one request.
   * Each file is a path, a `File`, or `{name, content}` (string, bytes or Blob). `metadata`
   * applies to every file; `replace` lets changed bytes replace a document of the same name.
   * Resolves to the ingest report, where each file that failed is an item with its error.
   */
  async addDocuments(kb, files, options) {
    const [call, { metadata, replace }] = splitCall(options);
    const form = new FormData();
    for (const file of files) {
      const { blob, name } = await toUploadPart(file);
      form.append('file', blob, name);
    }
    if (metadata !== undefined) form.append('metadata', JSON.stringify(metadata));
    if (replace !== undefined) form.append('replace', String(replace));
    return this.request('POST', `/kbs/${seg(kb)}/documents`, { form }, call);
  }

  /**
   * `POST /kbs/{kb}/documents` with a JSON body: adds one document. `content` is its text, or
   * its bytes as a Uint8Array (sent as `content_base64`); `filename` picks the converter.
   */
  addDocument(kb, filename, content, options) {
    const [call, { metadata, replace }] = splitCall(options);
    const body = typeof content === 'string'
      ? { filename, content }
      : { filename, content_base64: Buffer.from(content).toString('base64') };
    return this.request('POST', `/kbs/${seg(kb)}/documents`, {
      json: defined({ ...body, metadata, replace }),
    }, call);
  }

  /** `POST /kbs/{kb}/documents/delete`: deletes every document matching a non-empty filter. */
  deleteDocumentsWhere(kb, filter, options) {
    return this.request('POST', `/kbs/${seg(kb)}/documents/delete`, { json: { filter } }, options);
  }

  /** `GET /kbs/{kb}/documents/{id}`: the document, with its Markdown unless `markdown: false`. */
  getDocument(kb, id, options) {
    const [call, { markdown }] = splitCall(options);
    return this.request('GET', `/kbs/${seg(kb)}/documents/${seg(id)}`, { query: { markdown } }, call);
  }

  /** `PUT /kbs/{kb}/documents/{id}`: replaces the document's Markdown; it is re-chunked. */
  editDocument(kb, id, markdown, options) {
    return this.request('PUT', `/kbs/${seg(kb)}/documents/${seg(id)}`, { json: { markdown } }, options);
  }

  /** `DELETE /kbs/{kb}/documents/{id}`. */
  deleteDocument(kb, id, options) {
    return this.request('DELETE', `/kbs/${seg(kb)}/documents/${seg(id)}`, {}, options);
  }

  /** `GET /kbs/{kb}/documents/{id}/markdown`: the document's Markdown, as text. */
  getDocumentMarkdown(kb, id, options) {
    return this.request('GET', `/kbs/${seg(kb)}/documents/${seg(id)}/markdown`, { accept: 'text' }, options);
  }

  /** `GET /kbs/{kb}/documents/{id}/chunks`: the chunks in order, with text and offsets. */
  listDocumentChunks(kb, id, options) {
    return this.request('GET', `/kbs/${seg(kb)}/documents/${seg(id)}/chunks`, {}, options);
  }

  /** `POST /kbs/{kb}/documents/{id}/reconvert`: converts the original upload again. */
  reconvertDocument(kb, id, options) {
    return this.request('POST', `/kbs/${seg(kb)}/documents/${seg(id)}/reconvert`, {}, options);
  }

  // --- search ------------------------------------------------------------------------------

  /**
   * `POST /kbs/{kb}/search`. `mode` is grep, keyword, vector, hybrid or auto (the server's
   * default); `topK`, `minScore`, `filter`, `fusion`, `semanticRatio` and `advanced` map to the
   * request's snake_case fields.
   */
  search(kb, query, options) {
    const [call, { mode, topK, minScore, filter, fusion, semanticRatio, advanced }] = splitCall(options);
    return this.request('POST', `/kbs/${seg(kb)}/search`, {
      json: defined({ query, mode, top_k: topK, min_score: minScore, filter, fusion,
        semantic_ratio: semanticRatio, advanced }),
      idempotent: true,
    }, call);
  }

  /** `POST /kbs/{kb}/grep`: an RE2 pattern (or `literal` string) over the Markdown. */
  grep(kb, pattern, options) {
    const [call, { literal, ignoreCase, context, beforeContext, afterContext, maxMatches, filter }] = splitCall(options);
    return this.request('POST', `/kbs/${seg(kb)}/grep`, {
      json: defined({ pattern, literal, ignore_case: ignoreCase, context, before_context: beforeContext,
        after_context: afterContext, max_matches: maxMatches, filter }),
      idempotent: true,
    }, call);
  }

  // --- indexing ----------------------------------------------------------------------------

  /** `GET /kbs/{kb}/reindex`: whether a sweep runs, its progress and the last report. */
  getReindex(kb, options) { return this.request('GET', `/kbs/${seg(kb)}/reindex`, {}, options); }

  /** `POST /kbs/{kb}/reindex`: asks the background indexer for a sweep now (202). */
  startReindex(kb, options) { return this.request('POST', `/kbs/${seg(kb)}/reindex`, {}, options); }

  // --- tokens and secrets ------------------------------------------------------------------

  /** `GET /tokens`: every token, revoked ones included (never their secrets). */
  listTokens(options) { return this.request('GET', '/tokens', {}, options); }

  /** `POST /tokens`: creates a token; the answer's `secret` is shown this once. */
  createToken(name, options) {
    const [call, { scope, kbs }] = splitCall(options);
    return this.request('POST', '/tokens', { json: defined({ name, scope: scope ?? 'read', kbs }) }, call);
  }

  /** `DELETE /tokens/{id}`: revokes a token. */
  revokeToken(id, options) { return this.request('DELETE', `/tokens/${seg(id)}`, {}, options); }

  /** `GET /secrets`: the stored secrets' names (never their values). */
  listSecrets(options) { return this.request('GET', '/secrets', {}, options); }

  /** `PUT /secrets/{name}`: stores a secret, encrypted at rest. */
  putSecret(name, value, options) {
    return this.request('PUT', `/secrets/${seg(name)}`, { json: { value } }, options);
  }

  /** `DELETE /secrets/{name}`. */
  deleteSecret(name, options) { return this.request('DELETE', `/secrets/${seg(name)}`, {}, options); }

  // --- the embedding pump ------------------------------------------------------------------

  /** `GET /pump/use-cases`: the deployed use cases, their state and the month's spend. */
  listPumpUseCases(options) { return this.request('GET', '/pump/use-cases', {}, options); }

  /** `POST /pump/use-cases/{use_case}/_run`: runs a use case in the request. */
  runPumpUseCase(useCase, options) {
    return this.request('POST', `/pump/use-cases/${seg(useCase)}/_run`, {}, options);
  }

  /** `POST /pump/use-cases/{use_case}/_embed`: embeds query text with the use case's model. */
  embedPumpText(useCase, text, options) {
    return this.request('POST', `/pump/use-cases/${seg(useCase)}/_embed`, { json: { text } }, options);
  }

  /** `POST /events`: queues a run of every use case listening for the named event. */
  postEvent(name, options) { return this.request('POST', '/events', { json: { name } }, options); }
}
