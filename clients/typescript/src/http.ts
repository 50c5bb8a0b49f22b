/**
 * How a call is sent, when it is retried, and how an answer becomes a value or an error.
 * Only `fetch`, `AbortController` and `setTimeout`: the same code runs in Node 18+ and browsers.
 */
import { errorFor, MemoryConsoleError, TransportError } from "./errors.js";

/**
 * When idempotent calls are tried again. `attempts` tries in all (1 = no retry). The n-th
 * retry (n from 0) waits a random time in [0, min(maxBackoffMs, backoffMs * 2^n)] ms ("full
 * jitter"), or the server's `Retry-After` (seconds or an HTTP date), capped at `maxBackoffMs`.
 */
export interface RetryPolicy {
  attempts: number;
  backoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, backoffMs: 250, maxBackoffMs: 8000 };

/** Statuses worth another try: the server said "not now" (busy, or Redis unreachable). */
const RETRY_STATUSES = new Set([429, 503]);

/** What may be sent as a query parameter; arrays repeat the name, `undefined`/`null` are left out. */
export type QueryValue = string | number | boolean | Date | null | undefined | QueryValue[];

/** One API call. `idempotent` calls (reads, DELETE, read-only POSTs such as recall) are
 * retried on 429, 503, connection errors and timeouts; creates and other changes never are,
 * so a lost answer cannot write twice. */
export interface Call {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Relative to `/api/v1`, each segment already encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  idempotent?: boolean;
}

export interface Transport {
  /** `<server>/api/v1` without a trailing slash. */
  base: string;
  headers: Record<string, string>;
  /** Milliseconds one try may take, answer body included. */
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: typeof fetch;
}

/** One path segment: ids may hold any character (`foo:bar`, `a/b`, Chinese). */
export function seg(value: string | number): string {
  return encodeURIComponent(String(value));
}

/** A moment as the API takes it: ISO 8601 text (a `Date` is formatted in UTC). */
export function iso<T>(value: T | Date): T | string {
  return value instanceof Date ? value.toISOString() : value;
}

/** `conversationId` → `conversation_id`. */
export function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The API's fields from camelCase options: top-level keys only (a `metadata` object's keys
 * are the caller's and stay as given), `undefined` left out, a `Date` sent as ISO 8601.
 */
export function fields(options: object | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options ?? {})) {
    if (value !== undefined) out[snake(key)] = iso(value);
  }
  return out;
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  const params = new URLSearchParams();
  const add = (key: string, value: QueryValue): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) value.forEach((v) => add(key, v));
    else if (typeof value === "boolean") params.append(key, value ? "1" : "0");
    else params.append(key, String(iso(value)));
  };
  for (const [key, value] of Object.entries(query ?? {})) add(key, value);
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Milliseconds to wait before retry number `retry` (from 0) after `response` (if any). */
export function retryDelay(policy: RetryPolicy, retry: number, response?: Response): number {
  const after = response?.headers.get("Retry-After");
  if (after) {
    const seconds = Number(after);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
    if (Number.isFinite(ms)) return Math.min(policy.maxBackoffMs, Math.max(0, ms));
  }
  return Math.random() * Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** retry);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The answer's body: JSON decoded, the text when it is not JSON, `undefined` when empty. */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type Outcome = { response: Response; body: unknown } | { error: unknown };

/** One try: the answer and its body read within `timeoutMs`, or what went wrong. */
async function attempt(t: Transport, call: Call, url: string): Promise<Outcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), t.timeoutMs);
  try {
    const headers: Record<string, string> = { ...t.headers };
    if (call.body !== undefined) headers["Content-Type"] = "application/json";
    const response = await t.fetch(url, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: controller.signal,
    });
    return { response, body: await readBody(response) };
  } catch (error) {
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Send `call`, retrying it as its `idempotent` flag and the policy allow; resolves to the
 * decoded JSON of a 2xx answer (`undefined` for 204).
 * @throws {ApiError} a subclass for the status of an error answer (after any retries).
 * @throws {TransportError} no answer: connection failed or `timeoutMs` passed.
 */
export async function send(t: Transport, call: Call): Promise<unknown> {
  const url = t.base + call.path + queryString(call.query);
  for (let retry = 0; ; retry++) {
    const outcome = await attempt(t, call, url);
    const last = !call.idempotent || retry + 1 >= t.retry.attempts;
    if ("error" in outcome) {
      if (!last) {
        await sleep(retryDelay(t.retry, retry));
        continue;
      }
      const timedOut = (outcome.error as { name?: string })?.name === "AbortError";
      const why = timedOut ? `no answer within ${t.timeoutMs} ms` : String(outcome.error);
      throw new TransportError(`${call.method} ${call.path}: ${why}`, { cause: outcome.error });
    }
    const { response, body } = outcome;
    if (response.ok) return body;
    if (last || !RETRY_STATUSES.has(response.status)) throw errorFor(response.status, body);
    await sleep(retryDelay(t.retry, retry, response));
  }
}

/** The cursor of the next page; a cursor seen before would loop forever, so it throws. */
export function nextCursor(cursor: unknown, seen: Set<string>): string | null {
  if (typeof cursor !== "string" || cursor === "") return null;
  if (seen.has(cursor)) throw new MemoryConsoleError(`the server returned cursor ${cursor} twice`);
  seen.add(cursor);
  return cursor;
}
