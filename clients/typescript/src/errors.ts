/**
 * Errors: one class per API status, each carrying the API's error envelope
 * `{"error": {"code", "message", "field"}}` (409 adds `current_version`; 429 and 503 may add
 * `retry_after_seconds`). Catch a class alone (`NotFoundError`) or any `ApiError`.
 */

/** Base of every error this package throws. */
export class MemoryConsoleError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    this.name = new.target.name;
    if (options && "cause" in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/**
 * The server could not be reached (refused, reset, DNS) or did not answer within the
 * timeout, after the retries the call allowed. `cause` is what `fetch` threw.
 */
export class TransportError extends MemoryConsoleError {}

/** The error envelope's inner object as the server sends it. */
export interface ErrorDetail {
  code: string;
  message: string;
  field?: string | null;
  [key: string]: unknown;
}

/**
 * The server answered with an error status.
 *
 * `status` (HTTP status), `code` (`"invalid"`, `"not_found"`, `"conflict"`, …), `message`
 * (`"404 not_found: <the server's message> (field <field>)"`),
 * `field` (the request field at fault, or `null`), `currentVersion` (409 only, else `null`),
 * `body` (the whole decoded body, or the raw text when it was not JSON).
 */
export class ApiError extends MemoryConsoleError {
  readonly status: number;
  readonly code: string;
  readonly field: string | null;
  readonly currentVersion: number | null;
  readonly body: unknown;

  constructor(status: number, detail: ErrorDetail, body: unknown) {
    const field = detail.field ?? null;
    super(`${status} ${detail.code}: ${detail.message}${field ? ` (field ${field})` : ""}`);
    this.status = status;
    this.code = detail.code;
    this.field = field;
    this.currentVersion =
      typeof detail.current_version === "number" ? detail.current_version : null;
    this.body = body;
  }
}

/** 400: the request is malformed; `field` names the field. */
export class BadRequestError extends ApiError {}
/** 401: missing or unknown bearer token. */
export class UnauthorizedError extends ApiError {}
/** 403: the token's role is too low, or the namespace is outside its restriction. */
export class ForbiddenError extends ApiError {}
/** 404: unknown id, or one outside the token's namespaces. */
export class NotFoundError extends ApiError {}
/** 409: the expected `version` is stale (`currentVersion` is the current one), or the change does not apply. */
export class ConflictError extends ApiError {}
/** 413: the body or the content is over the server's limit. */
export class PayloadTooLargeError extends ApiError {}
/** 429: too many such requests at once; retried for idempotent calls after `Retry-After`. */
export class TooManyRequestsError extends ApiError {}
/** 503: Redis (the search index) is unreachable or rebuilding; retried for idempotent calls. */
export class UnavailableError extends ApiError {}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: TooManyRequestsError,
  503: UnavailableError,
};

/**
 * The error for an error answer. `body` is the decoded JSON, or the text when the body is not
 * JSON (a proxy's HTML page): then `code` is `"error"` and `message` the text's start.
 */
export function errorFor(status: number, body: unknown): ApiError {
  const envelope =
    body !== null && typeof body === "object" ? (body as { error?: unknown }).error : undefined;
  const detail: ErrorDetail =
    envelope !== null && typeof envelope === "object" && "code" in envelope
      ? (envelope as ErrorDetail)
      : { code: "error", message: String(body ?? "").slice(0, 500) || `HTTP ${status}` };
  const Class = BY_STATUS[status] ?? ApiError;
  return new Class(status, detail, body);
}
