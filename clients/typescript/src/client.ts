/**
 * `MemoryConsole`: every call of the Python client that an agent makes, in camelCase.
 * Each method sends one request (see `http.ts`) and resolves to the API's JSON answer, typed
 * from the server's OpenAPI document (`schema.ts`).
 */
import { DEFAULT_RETRY, fields, nextCursor, seg, send } from "./http.js";
import type { Call, QueryValue, RetryPolicy, Transport } from "./http.js";
import type {
  Answer,
  Body,
  ItemOf,
  MessageIn,
  MetadataFilter,
  Options,
  Page,
  Query,
} from "./types.js";

const DEFAULT_TIMEOUT_MS = 30_000; // a reindex is a job, so no call should take longer

/** Options of `new MemoryConsole(baseUrl, token, options)`. */
export interface ClientOptions {
  /** Milliseconds one try of a call may take, answer included (default 30 000). */
  timeout?: number;
  /** How idempotent calls retry (default: 4 tries, backoff 250 ms doubling up to 8 s). */
  retry?: Partial<RetryPolicy>;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Headers added to every request. */
  headers?: Record<string, string>;
}

export type Memory = Answer<"/api/v1/memories/{memory_id}", "get">;
type Created = Answer<"/api/v1/memories", "post">;
/** The answer of `remember`: the memory written (or its live duplicate). */
export type Remembered = Exclude<Created, { inferred: true }>;
/** The answer of `remember` with `infer: true`: the memories extracted and written. */
export type Inferred = Extract<Created, { inferred: true }>;
export type MemoryList = Answer<"/api/v1/memories", "get">;
export type MemoryItem = ItemOf<MemoryList, "memories">;
export type RecallResult = Answer<"/api/v1/recall", "post">;
export type Session = Answer<"/api/v1/sessions/{session_id}", "get">;
export type SessionItem = ItemOf<Answer<"/api/v1/sessions", "get">, "sessions">;
export type Namespace = ItemOf<Answer<"/api/v1/namespaces", "get">, "namespaces">;
export type Proposal = ItemOf<Answer<"/api/v1/conflicts", "get">, "conflicts">;
/** A traced recall: who asked what, through which interface, and what it answered, in order. */
export type RecallTrace = Answer<"/api/v1/recalls/{recall_id}", "get">;
export type RecallTraceItem = ItemOf<Answer<"/api/v1/recalls", "get">, "recalls">;
/** One actor's feedback on one result of a recall (`grade` 0..3). */
export type RecallFeedback = Answer<"/api/v1/recalls/{recall_id}/feedback", "post">;

export type RememberOptions = Options<Body<"/api/v1/memories", "post">, "user_id" | "content">;
export type UpdateOptions = Options<Body<"/api/v1/memories/{memory_id}", "patch">>;
export type RecallOptions = Options<Body<"/api/v1/recall", "post">, "user_id" | "query">;
/** `metadata` filters on exact values of metadata keys (`metadata.<key>=<value>`). */
export type ListOptions = Options<Query<"/api/v1/memories", "get">, "user_id" | "metadata"> & {
  metadata?: MetadataFilter;
};
export type SessionOptions = Options<Body<"/api/v1/sessions", "post">, "user_id">;
export type ContextOptions = Options<Query<"/api/v1/sessions/{session_id}/context", "get">>;
export type PromoteOptions = Options<
  Body<"/api/v1/sessions/{session_id}/messages/{seq}/promote", "post">
>;
/** `since` / `until` bound the recall's time; `q` keeps recalls whose query holds every word. */
export type RecallsOptions = Options<Query<"/api/v1/recalls", "get">, "user_id">;
/** Exactly one of `grade` (0..3) or `useful` (true: 3, false: 0), and an optional `note`. */
export type FeedbackOptions = Options<
  Body<"/api/v1/recalls/{recall_id}/feedback", "post">,
  "memory_id"
>;
type Paging = { cursor?: string | null; limit?: number };

function pageOf<T>(answer: unknown, key: string): Page<T> {
  const body = answer as Record<string, unknown>;
  const next = body.next_cursor;
  return {
    items: (body[key] ?? []) as T[],
    nextCursor: typeof next === "string" && next !== "" ? next : null,
  };
}

/**
 * A client of one Memory Console server.
 *
 * Every method rejects with an `ApiError` subclass for an error answer (`BadRequestError`
 * 400, `UnauthorizedError` 401, `ForbiddenError` 403, `NotFoundError` 404, `ConflictError`
 * 409, `PayloadTooLargeError` 413, `TooManyRequestsError` 429, `UnavailableError` 503) and
 * with `TransportError` when no answer came. Reads, `forget` and the read-only POSTs
 * (`recall`, `summarise`, a dry-run `extract`) are retried on 429, 503, connection errors
 * and timeouts, honouring `Retry-After`; writes never are.
 */
export class MemoryConsole {
  private readonly transport: Transport;

  /**
   * @param baseUrl the server root (`http://localhost:8000`, with or without `/api/v1`)
   * @param token a bearer API token
   */
  constructor(baseUrl: string, token: string, options: ClientOptions = {}) {
    const root = baseUrl.replace(/\/+$/, "");
    this.transport = {
      base: root.endsWith("/api/v1") ? root : `${root}/api/v1`,
      headers: {
        // The recall log traces this client's recalls under the interface it names here.
        "X-Memory-Client": "typescript",
        ...options.headers,
        Authorization: `Bearer ${token}`,
        Accept: "application/json",
      },
      timeoutMs: options.timeout ?? DEFAULT_TIMEOUT_MS,
      retry: { ...DEFAULT_RETRY, ...options.retry },
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    };
  }

  /**
   * Any call of the API, for the ones without a method here (`path` relative to `/api/v1`).
   * Resolves to the decoded JSON (`undefined` for 204).
   */
  request(call: Call): Promise<unknown> {
    return send(this.transport, call);
  }

  private run<T>(call: Call): Promise<T> {
    return send(this.transport, call) as Promise<T>;
  }

  // memories ------------------------------------------------------------------------------

  /**
   * `POST /memories`: a new memory (201), or the live duplicate (200, `deduplicated` true).
   * `ttlSeconds` only for `short_term`; `supersedes` the ids this one makes no longer true;
   * `validFrom` when the fact began to hold; `infer: true` writes the memories extracted from
   * a transcript instead of the text. Never retried.
   */
  remember(
    userId: string,
    content: string,
    options: RememberOptions & { infer: true },
  ): Promise<Inferred>;
  remember(
    userId: string,
    content: string,
    options?: RememberOptions & { infer?: false },
  ): Promise<Remembered>;
  remember(userId: string, content: string, options: RememberOptions = {}): Promise<Created> {
    const body = { ...fields(options), user_id: userId, content };
    return this.run({ method: "POST", path: "/memories", body });
  }

  /** `GET /memories/{id}`: one memory, forgotten ones too (`deleted_at` set). */
  getMemory(memoryId: string): Promise<Memory> {
    return this.run({ method: "GET", path: `/memories/${seg(memoryId)}`, idempotent: true });
  }

  /**
   * `GET /memories`: one page of a namespace's memories, newest first. `conversationId: ""`
   * asks for the user-wide ones; `limit` is the page size; `cursor` the `nextCursor` of the
   * page before.
   */
  async listMemories(userId: string, options: ListOptions = {}): Promise<Page<MemoryItem>> {
    const { metadata, ...rest } = options;
    const query: Record<string, QueryValue> = { ...(fields(rest) as object), user_id: userId };
    for (const [key, value] of Object.entries(metadata ?? {})) query[`metadata.${key}`] = value;
    const answer = await this.run({ method: "GET", path: "/memories", query, idempotent: true });
    return pageOf<MemoryItem>(answer, "memories");
  }

  /** Every memory `listMemories` would list, page after page (fetched as the loop goes). */
  iterateMemories(userId: string, options: ListOptions = {}): AsyncGenerator<MemoryItem> {
    return this.paginate((cursor) => this.listMemories(userId, { ...options, cursor }), options.cursor);
  }

  /**
   * Every item of a list call, fetching its pages as the loop goes:
   * `for await (const s of mc.paginate((cursor) => mc.listSessions("alice", { cursor })))`.
   * @throws {MemoryConsoleError} when the server sends a cursor twice (it would loop forever).
   */
  async *paginate<T>(
    list: (cursor: string | null) => Promise<Page<T>>,
    cursor: string | null = null,
  ): AsyncGenerator<T> {
    const seen = new Set<string>();
    for (;;) {
      const page = await list(cursor);
      yield* page.items;
      cursor = nextCursor(page.nextCursor, seen);
      if (cursor === null) return;
    }
  }

  /**
   * `PATCH /memories/{id}`: a new version. With `version` (the version you read), a stale
   * one rejects with `ConflictError` (`currentVersion` set). Never retried.
   */
  updateMemory(memoryId: string, options: UpdateOptions): Promise<Memory> {
    return this.run({ method: "PATCH", path: `/memories/${seg(memoryId)}`, body: fields(options) });
  }

  /** `updateMemory` by a shorter name. */
  update(memoryId: string, options: UpdateOptions): Promise<Memory> {
    return this.updateMemory(memoryId, options);
  }

  /** `DELETE /memories/{id}`: soft forget (restorable with `restore`). Resolves to nothing. */
  async forget(memoryId: string, options: { reason?: string } = {}): Promise<void> {
    await this.run({
      method: "DELETE",
      path: `/memories/${seg(memoryId)}`,
      query: { reason: options.reason },
      idempotent: true,
    });
  }

  /** `POST /memories/{id}/restore`: undo a forget. */
  restore(memoryId: string, options: { reason?: string } = {}): Promise<Memory> {
    return this.run({ method: "POST", path: `/memories/${seg(memoryId)}/restore`, body: fields(options) });
  }

  /** `GET /memories/{id}/history`: every version, oldest first (`{versions: [...]}`). */
  history(memoryId: string): Promise<Answer<"/api/v1/memories/{memory_id}/history", "get">> {
    return this.run({ method: "GET", path: `/memories/${seg(memoryId)}/history`, idempotent: true });
  }

  /**
   * `POST /memories/{id}/invalidate`: end the fact with no replacement at `validUntil`
   * (default now); it stays readable. A fact that ended already rejects with `ConflictError`.
   */
  invalidate(memoryId: string, reason: string, validUntil?: Date | string): Promise<Memory> {
    const body = fields({ reason, validUntil });
    return this.run({ method: "POST", path: `/memories/${seg(memoryId)}/invalidate`, body });
  }

  /** `POST /memories/{id}/revalidate`: undo an end or a supersession. */
  revalidate(memoryId: string, reason: string): Promise<Memory> {
    return this.run({ method: "POST", path: `/memories/${seg(memoryId)}/revalidate`, body: { reason } });
  }

  /** `POST /memories/{id}/promote`: a working or short-term memory → user-wide long-term. */
  promote(memoryId: string, options: { reason?: string } = {}): Promise<Memory> {
    return this.run({ method: "POST", path: `/memories/${seg(memoryId)}/promote`, body: fields(options) });
  }

  /** `GET /namespaces`: one page of (user_id, conversation_id) pairs holding live memories. */
  async listNamespaces(options: { userId?: string } & Paging = {}): Promise<Page<Namespace>> {
    const query = fields(options) as Record<string, QueryValue>;
    const answer = await this.run({ method: "GET", path: "/namespaces", query, idempotent: true });
    return pageOf<Namespace>(answer, "namespaces");
  }

  // search --------------------------------------------------------------------------------

  /**
   * `POST /recall`: `{results: [...]}`, best first, each with `score` and `explain`. Answers
   * the facts valid now; `asOf` those that held then; `since` / `until` / `author` / `tags`
   * filter; `limit` 1..100. Read-only, so retried like a read.
   */
  recall(userId: string, query: string, options: RecallOptions = {}): Promise<RecallResult> {
    const body = { ...fields(options), user_id: userId, query };
    return this.run({ method: "POST", path: "/recall", body, idempotent: true });
  }

  // the recall log -----------------------------------------------------------------------

  /**
   * `GET /recalls`: one page of a namespace's traced recalls, newest first (`limit` 1..500).
   * Filters: `agentId`, `actor`, `interface` (rest, mcp, console, python, typescript,
   * langgraph), `since` (inclusive) / `until` (exclusive) as `Date` or ISO 8601, `q`.
   */
  async recalls(userId: string, options: RecallsOptions = {}): Promise<Page<RecallTraceItem>> {
    const query = { ...(fields(options) as Record<string, QueryValue>), user_id: userId };
    const answer = await this.run({ method: "GET", path: "/recalls", query, idempotent: true });
    return pageOf<RecallTraceItem>(answer, "recalls");
  }

  /** `GET /recalls/{id}`: one trace, its results in order and every actor's feedback. */
  getRecall(recallId: string): Promise<RecallTrace> {
    return this.run({ method: "GET", path: `/recalls/${seg(recallId)}`, idempotent: true });
  }

  /**
   * `POST /recalls/{id}/feedback`: whether result `memoryId` of a recall (its `recall_id`)
   * helped: `grade` 0..3 or `useful`, and a `note`. Kept per actor (the token's user): giving
   * it again replaces it, so it is retried. A memory that was not among the recall's results
   * rejects with `BadRequestError` (`field` memory_id); an unknown recall `NotFoundError`.
   */
  recallFeedback(
    recallId: string,
    memoryId: string,
    options: FeedbackOptions,
  ): Promise<RecallFeedback> {
    const body = { ...fields(options), memory_id: memoryId };
    const path = `/recalls/${seg(recallId)}/feedback`;
    return this.run({ method: "POST", path, body, idempotent: true });
  }

  // the review queue of proposed supersessions ------------------------------------------

  /** `GET /conflicts`: one page of supersessions the server proposed, newest first. */
  async conflicts(
    options: { userId?: string; status?: "open" | "accepted" | "rejected" } & Paging = {},
  ): Promise<Page<Proposal>> {
    const query = fields(options) as Record<string, QueryValue>;
    const answer = await this.run({ method: "GET", path: "/conflicts", query, idempotent: true });
    return pageOf<Proposal>(answer, "conflicts");
  }

  /** `POST /conflicts/{id}/accept`: the older memory is superseded by the newer. */
  acceptConflict(conflictId: number, reason = ""): Promise<Proposal> {
    return this.run({ method: "POST", path: `/conflicts/${seg(conflictId)}/accept`, body: { reason } });
  }

  /** `POST /conflicts/{id}/reject`: both hold; the pair is not proposed again. */
  rejectConflict(conflictId: number, reason = ""): Promise<Proposal> {
    return this.run({ method: "POST", path: `/conflicts/${seg(conflictId)}/reject`, body: { reason } });
  }

  // sessions ------------------------------------------------------------------------------

  /** `POST /sessions`: a conversation's working memory (`sessionId` generated when absent). */
  createSession(userId: string, options: SessionOptions = {}): Promise<Session> {
    const body = { ...fields(options), user_id: userId };
    return this.run({ method: "POST", path: "/sessions", body });
  }

  /** `GET /sessions/{id}`. */
  getSession(sessionId: string): Promise<Session> {
    return this.run({ method: "GET", path: `/sessions/${seg(sessionId)}`, idempotent: true });
  }

  /** `GET /sessions`: one page of a user's sessions. */
  async listSessions(userId: string, options: Paging = {}): Promise<Page<SessionItem>> {
    const query = { ...(fields(options) as Record<string, QueryValue>), user_id: userId };
    const answer = await this.run({ method: "GET", path: "/sessions", query, idempotent: true });
    return pageOf<SessionItem>(answer, "sessions");
  }

  /** `DELETE /sessions/{id}`. */
  async deleteSession(sessionId: string): Promise<void> {
    await this.run({ method: "DELETE", path: `/sessions/${seg(sessionId)}`, idempotent: true });
  }

  /**
   * `POST /sessions/{id}/messages` with `[{role, content}, ...]`; answers the window's length.
   * Never retried (a retry would append twice).
   */
  append(
    sessionId: string,
    messages: MessageIn[],
  ): Promise<Answer<"/api/v1/sessions/{session_id}/messages", "post">> {
    return this.run({ method: "POST", path: `/sessions/${seg(sessionId)}/messages`, body: { messages } });
  }

  /**
   * `GET /sessions/{id}/context`: the summary and the newest `last` (1..1000) messages;
   * `maxTokens` caps them; `at` (a `Date` or ISO 8601) the context as it was then.
   */
  context(
    sessionId: string,
    options: ContextOptions = {},
  ): Promise<Answer<"/api/v1/sessions/{session_id}/context", "get">> {
    const query = fields(options) as Record<string, QueryValue>;
    return this.run({ method: "GET", path: `/sessions/${seg(sessionId)}/context`, query, idempotent: true });
  }

  /**
   * `POST /sessions/{id}/summarise`: the summary of the whole session now, at most `maxChars`
   * (100..20000, default 2000) characters; read-only.
   */
  summarise(
    sessionId: string,
    maxChars?: number,
  ): Promise<Answer<"/api/v1/sessions/{session_id}/summarise", "post">> {
    const body = fields({ maxChars });
    return this.run({ method: "POST", path: `/sessions/${seg(sessionId)}/summarise`, body, idempotent: true });
  }

  /**
   * `POST /sessions/{id}/messages/{seq}/promote`: a session message as a user-wide memory;
   * `content`, `type` and `importance` edit it before it is written.
   */
  promoteMessage(sessionId: string, seq: number, options: PromoteOptions = {}): Promise<Memory> {
    const path = `/sessions/${seg(sessionId)}/messages/${seg(seq)}/promote`;
    return this.run({ method: "POST", path, body: fields(options) });
  }

  /**
   * `POST /sessions/{id}/extract`: the memories worth keeping from the session's messages
   * (`candidates`, each with the `seqs` it comes from); `dryRun: false` writes them (editor)
   * and answers their `memory_ids`. Retried only as a dry run (the default).
   */
  extract(
    sessionId: string,
    options: { dryRun?: boolean } = {},
  ): Promise<Answer<"/api/v1/sessions/{session_id}/extract", "post">> {
    const dryRun = options.dryRun ?? true;
    return this.run({
      method: "POST",
      path: `/sessions/${seg(sessionId)}/extract`,
      body: { dry_run: dryRun },
      idempotent: dryRun,
    });
  }
}
