/**
 * memory-console-client: a typed client of the Memory Console API for Node 18+ and browsers,
 * with no dependency beyond `fetch`.
 *
 * ```ts
 * import { MemoryConsole } from "memory-console-client";
 * const mc = new MemoryConsole("http://localhost:8000", token);
 * await mc.remember("alice", "Alice prefers tea over coffee");
 * const { results } = await mc.recall("alice", "what does alice drink?");
 * ```
 */
export { MemoryConsole } from "./client.js";
export type {
  ClientOptions,
  ContextOptions,
  FeedbackOptions,
  Inferred,
  ListOptions,
  Memory,
  MemoryItem,
  MemoryList,
  Namespace,
  PromoteOptions,
  Proposal,
  RecallFeedback,
  RecallOptions,
  RecallResult,
  RecallsOptions,
  RecallTrace,
  RecallTraceItem,
  Remembered,
  RememberOptions,
  Session,
  SessionItem,
  SessionOptions,
  UpdateOptions,
} from "./client.js";
export {
  ApiError,
  BadRequestError,
  ConflictError,
  errorFor,
  ForbiddenError,
  MemoryConsoleError,
  NotFoundError,
  PayloadTooLargeError,
  TooManyRequestsError,
  TransportError,
  UnauthorizedError,
  UnavailableError,
} from "./errors.js";
export type { ErrorDetail } from "./errors.js";
export { DEFAULT_RETRY, retryDelay } from "./http.js";
export type { Call, QueryValue, RetryPolicy } from "./http.js";
export type { Answer, Body, MessageIn, MetadataFilter, Page, Query } from "./types.js";
export type { components, operations, paths } from "./schema.js";
