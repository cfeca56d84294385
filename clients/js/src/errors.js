// The error model: one class per stable error code of docs/errors.md, all under QuarryError.
// The REST API answers every failure with {"error": {"code", "message", "details"}}; the
// client turns that envelope into an instance of the code's class, so a caller can write
// `catch (e) { if (e instanceof NotFoundError) ... }` or switch on `e.code`.

/**
 * Base class of every error the client throws for a failed request. An error code the client
 * does not know (a newer server) is thrown as a plain QuarryError carrying that code.
 */
export class QuarryError extends Error {
  /**
   * @param {string} message What went wrong and what to do, as the server said it.
   * @param {object} [fields]
   * @param {string} [fields.code] The stable error code (docs/errors.md).
   * @param {Record<string, string>} [fields.details] Strings such as `field`, `kb`, `doc_id`.
   * @param {number} [fields.status] The HTTP status; 0 when no answer came (client timeout).
   * @param {number | null} [fields.retryAfterMs] The answer's `Retry-After`, in ms, if any.
   */
  constructor(message, { code = 'unknown', details = {}, status = 0, retryAfterMs = null } = {}) {
    super(message);
    this.name = new.target.name;
    /** @type {string} */
    this.code = code;
    /** @type {Record<string, string>} */
    this.details = details;
    /** @type {number} */
    this.status = status;
    /** @type {number | null} */
    this.retryAfterMs = retryAfterMs;
  }
}

/** 400: the request is malformed (`details.field` names the culprit). */
export class InvalidArgumentError extends QuarryError {}
/** 404: no such KB, document, token, secret or use case. */
export class NotFoundError extends QuarryError {}
/** 409: the KB name is taken. */
export class AlreadyExistsError extends QuarryError {}
/** 409: the request clashes with stored state (a changed file uploaded without `replace`). */
export class ConflictError extends QuarryError {}
/** 422: no converter for this kind of file. */
export class UnsupportedFormatError extends QuarryError {}
/** 503: a converter's library is missing, or reindex on a server without an indexer. */
export class EngineUnavailableError extends QuarryError {}
/** 422: the bytes are not what the file name says. */
export class CorruptInputError extends QuarryError {}
/** 413: the body or file is over a size limit. */
export class PayloadTooLargeError extends QuarryError {}
/** 422: nothing to index. */
export class NoContentError extends QuarryError {}
/** 422: the document or call is over a chunk limit. */
export class TooManyChunksError extends QuarryError {}
/** 422: the KB cannot serve this search mode (vector search without an embedder). */
export class ModeUnavailableError extends QuarryError {}
/** 422: embedder and store dimensions disagree. */
export class DimensionMismatchError extends QuarryError {}
/** 503: another writer holds the data directory, or the server is at a connection limit. */
export class BusyError extends QuarryError {}
/** 500: the file system refused a read or write. */
export class IoError extends QuarryError {}
/** 401: no valid bearer token. */
export class UnauthorizedError extends QuarryError {}
/** 403: the token lacks the scope or may not reach this KB. */
export class ForbiddenError extends QuarryError {}
/** 429: a remote embedding provider or store kept answering 429. */
export class RateLimitedError extends QuarryError {}
/** 502: a remote embedding provider or store refused the request. */
export class UpstreamError extends QuarryError {}
/**
 * 504: a remote call or the request ran past its deadline. The client also throws it, with
 * `status` 0, when its own `timeoutMs` runs out before an answer arrives.
 */
export class TimeoutError extends QuarryError {}
/** 403: the SSRF guard refused an outbound address. */
export class BlockedAddressError extends QuarryError {}
/** 413: a chunk is longer than the embedder accepts. */
export class ContentTooLargeError extends QuarryError {}
/** 422: the embedder refused this document's text. */
export class InputRejectedError extends QuarryError {}
/** 409: a long operation was stopped; it resumes where it stopped. */
export class CancelledError extends QuarryError {}
/** 422: a pump use case's source broke the pump contract (the use case is parked). */
export class ContractViolationError extends QuarryError {}
/** 402: the pump's monthly spend budget is used up (the use case is parked). */
export class BudgetExhaustedError extends QuarryError {}
/** 500: a bug or an unexpected failure in the server. */
export class InternalError extends QuarryError {}

/** Error code -> class, one entry per row of docs/errors.md's summary table. */
export const ERROR_CLASSES = Object.freeze({
  invalid_argument: InvalidArgumentError,
  not_found: NotFoundError,
  already_exists: AlreadyExistsError,
  conflict: ConflictError,
  unsupported_format: UnsupportedFormatError,
  engine_unavailable: EngineUnavailableError,
  corrupt_input: CorruptInputError,
  payload_too_large: PayloadTooLargeError,
  no_content: NoContentError,
  too_many_chunks: TooManyChunksError,
  mode_unavailable: ModeUnavailableError,
  dimension_mismatch: DimensionMismatchError,
  busy: BusyError,
  io_error: IoError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  rate_limited: RateLimitedError,
  upstream_error: UpstreamError,
  timeout: TimeoutError,
  blocked_address: BlockedAddressError,
  content_too_large: ContentTooLargeError,
  input_rejected: InputRejectedError,
  cancelled: CancelledError,
  contract_violation: ContractViolationError,
  budget_exhausted: BudgetExhaustedError,
  internal: InternalError,
});

/**
 * The error for an error envelope's fields: the code's class, or QuarryError for a code this
 * client does not know.
 * @param {{code: string, message: string, details?: Record<string, string>, status: number,
 *          retryAfterMs?: number | null}} fields
 * @returns {QuarryError}
 */
export function errorFromEnvelope({ code, message, details = {}, status, retryAfterMs = null }) {
  const Cls = Object.hasOwn(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : QuarryError;
  return new Cls(message, { code, details, status, retryAfterMs });
}
