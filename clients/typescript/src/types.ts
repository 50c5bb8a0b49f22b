/**
 * The shapes of requests and answers, read from the generated `schema.ts` (the server's
 * OpenAPI document), so a new field of the server is a regeneration away, never a hand edit.
 *
 * Answers are the API's JSON as it comes (field names in snake_case: `memory.memory_id`).
 * Options are the API's body or query fields in camelCase (`conversationId` is sent as
 * `conversation_id`); moments may be given as a `Date` or as ISO 8601 text.
 */
import type { paths } from "./schema.js";

type Method = "get" | "post" | "patch" | "delete";

/** An operation of the document: `Op<"/api/v1/memories", "post">`. */
export type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type JsonOf<R> = R extends { content: { "application/json": infer J } } ? J : never;

/** The JSON of an operation's 2xx answers (`void` for 204 No Content). */
export type Answer<P extends keyof paths, M extends Method> =
  Op<P, M> extends { responses: infer R }
    ? R extends Record<number, unknown>
      ?
          | JsonOf<R[Extract<keyof R, 200 | 201 | 202>]>
          | (204 extends keyof R ? void : never)
      : never
    : never;

/** The JSON body an operation takes. */
export type Body<P extends keyof paths, M extends Method> =
  Op<P, M> extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;

/** The query parameters an operation takes. */
export type Query<P extends keyof paths, M extends Method> =
  Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** `conversation_id` → `conversationId`. */
export type Camel<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : S;

/** The API's field names that hold a moment: a `Date` is sent as ISO 8601. */
type MomentField =
  | "as_of" | "since" | "until" | "now" | "valid_from" | "valid_until" | "created_at" | "at";

/**
 * Options from an API shape `T`, without the fields `Given` (those the call takes as
 * positional arguments): every field optional, in camelCase, moments also as `Date`.
 */
export type Options<T, Given extends string = never> = {
  [K in Exclude<keyof T, Given> as K extends string ? Camel<K> : never]?:
    K extends MomentField ? T[K] | Date : T[K];
};

/** One page of a list: its `items` and the cursor of the next page (`null` on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** The item type of a list answer `{ <key>: T[], next_cursor }`. */
export type ItemOf<A, Key extends string> = A extends { [K in Key]?: (infer T)[] | null }
  ? T
  : Record<string, unknown>;

/** Metadata equality filters: `{ source: "chat" }` is sent as `metadata.source=chat`. */
export type MetadataFilter = Record<string, string | number | boolean>;

/** A message appended to a session. */
export type MessageIn = Body<"/api/v1/sessions/{session_id}/messages", "post"> extends {
  messages: (infer M)[];
}
  ? M
  : { role: string; content: string };
