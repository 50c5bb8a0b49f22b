// The client against a live server (real HTTP, database and Redis).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ApiError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  MemoryConsole,
  NotFoundError,
  UnauthorizedError,
} from "memory-console-client";
import { TOKEN, URL, VIEWER_TOKEN, user } from "./server.mjs";

const mc = new MemoryConsole(URL, TOKEN, { retry: { attempts: 2, backoffMs: 10 } });

test("remember, recall, get, update and forget", async () => {
  const alice = user("alice");
  const made = await mc.remember(alice, "Alice prefers green tea over coffee in the morning", {
    tags: ["drinks"],
    metadata: { sourceTurn: 3 },
  });
  assert.match(made.memory_id, /^mem_/);
  assert.equal(made.version, 1);
  assert.equal(made.deduplicated, false);
  assert.deepEqual(made.metadata, { sourceTurn: 3 }, "metadata keys are not renamed");

  const found = await mc.recall(alice, "what does alice drink in the morning?");
  assert.deepEqual(found.results.map((hit) => hit.memory_id), [made.memory_id]);
  assert.ok(found.results[0].score > 0);

  const again = await mc.remember(alice, "Alice prefers green tea over coffee in the morning");
  assert.equal(again.deduplicated, true);
  assert.equal(again.memory_id, made.memory_id);

  const edited = await mc.update(made.memory_id, {
    content: "Alice prefers black tea over coffee in the morning",
    version: 1,
    reason: "corrected",
  });
  assert.equal(edited.version, 2);
  assert.equal((await mc.getMemory(made.memory_id)).content, edited.content);
  const stale = await mc.updateMemory(made.memory_id, { importance: 0.9, version: 1 }).catch((e) => e);
  assert.ok(stale instanceof ConflictError);
  assert.equal(stale.status, 409);
  assert.equal(stale.code, "conflict");
  assert.equal(stale.currentVersion, 2);

  assert.equal(await mc.forget(made.memory_id, { reason: "asked to" }), undefined);
  assert.deepEqual((await mc.recall(alice, "black tea")).results, []);
  assert.notEqual((await mc.getMemory(made.memory_id)).deleted_at, null);
  const kinds = (await mc.history(made.memory_id)).versions.map((v) => v.kind);
  assert.deepEqual(kinds, ["create", "edit", "forget"]);
  assert.equal((await mc.restore(made.memory_id)).deleted_at, null);
});

test("lists page by page, and iterates every page", async () => {
  const bob = user("bob");
  const ids = [];
  for (const n of [1, 2, 3, 4, 5]) {
    const m = await mc.remember(bob, `Bob's note number ${n} about the garden`, {
      metadata: { parity: n % 2 ? "odd" : "even" },
    });
    ids.push(m.memory_id);
  }
  const first = await mc.listMemories(bob, { limit: 2 });
  assert.equal(first.items.length, 2);
  assert.equal(typeof first.nextCursor, "string");
  const second = await mc.listMemories(bob, { limit: 2, cursor: first.nextCursor });
  assert.equal(second.items.length, 2);
  assert.equal(second.items.some((m) => first.items.some((f) => f.memory_id === m.memory_id)), false);

  const all = [];
  for await (const memory of mc.iterateMemories(bob, { limit: 2 })) all.push(memory.memory_id);
  assert.deepEqual(all, [...ids].reverse(), "every memory once, newest first");

  const even = await mc.listMemories(bob, { metadata: { parity: "even" } });
  assert.deepEqual(even.items.map((m) => m.memory_id).sort(), [ids[1], ids[3]].sort());
  assert.equal(even.nextCursor, null);
});

test("recall takes filters, moments as Date or text", async () => {
  const carol = user("carol");
  const tagged = await mc.remember(carol, "Carol's train to Lyon leaves at nine", {
    tags: ["travel"],
    author: "planner",
  });
  await mc.remember(carol, "Carol's train ticket was expensive", { tags: ["money"] });
  const byTag = await mc.recall(carol, "train", { tags: ["travel"] });
  assert.deepEqual(byTag.results.map((h) => h.memory_id), [tagged.memory_id]);
  const byAuthor = await mc.recall(carol, "train", { author: "planner" });
  assert.deepEqual(byAuthor.results.map((h) => h.memory_id), [tagged.memory_id]);
  const future = await mc.recall(carol, "train", { since: new Date(Date.now() + 86_400_000) });
  assert.deepEqual(future.results, []);
  const past = await mc.recall(carol, "train", { until: "2000-01-01T00:00:00Z" });
  assert.deepEqual(past.results, []);
});

test("invalidate and revalidate a fact", async () => {
  const dan = user("dan");
  const fact = await mc.remember(dan, "Dan lives in Porto");
  const ended = await mc.invalidate(fact.memory_id, "moved away");
  assert.notEqual(ended.valid_until, null);
  assert.deepEqual((await mc.recall(dan, "Porto")).results, []);
  await assert.rejects(mc.invalidate(fact.memory_id, "again"), ConflictError);
  const back = await mc.revalidate(fact.memory_id, "came back");
  assert.equal(back.valid_until, null);
  assert.equal((await mc.recall(dan, "Porto")).results.length, 1);
});

test("sessions: create, append, context, summarise, promote with edits, extract", async () => {
  const erin = user("erin");
  const session = await mc.createSession(erin, { metadata: { channel: "chat" } });
  const id = session.session_id;
  await mc.append(id, [
    { role: "user", content: "I am allergic to peanuts." },
    { role: "assistant", content: "Noted, no peanuts." },
    { role: "user", content: "I moved to Berlin last month." },
  ]);
  const context = await mc.context(id, { last: 2 });
  assert.deepEqual(context.messages.map((m) => m.content), [
    "Noted, no peanuts.",
    "I moved to Berlin last month.",
  ]);
  const summary = await mc.summarise(id, 500);
  assert.equal(typeof summary.summary, "string");

  const promoted = await mc.promoteMessage(id, 1, {
    content: "Erin is allergic to peanuts",
    importance: 0.9,
  });
  assert.equal(promoted.content, "Erin is allergic to peanuts");
  assert.equal(promoted.importance, 0.9);
  assert.equal(promoted.user_id, erin);

  const extraction = await mc.extract(id);
  assert.ok(Array.isArray(extraction.candidates));

  const listed = await mc.listSessions(erin);
  assert.deepEqual(listed.items.map((s) => s.session_id), [id]);
  await mc.deleteSession(id);
  await assert.rejects(mc.getSession(id), NotFoundError);
});

test("errors carry the envelope's code, field and status", async () => {
  const missing = await mc.getMemory("mem_does_not_exist").catch((e) => e);
  assert.ok(missing instanceof NotFoundError && missing instanceof ApiError);
  assert.equal(missing.status, 404);
  assert.equal(missing.code, "not_found");
  assert.equal(missing.field, "memory_id");

  const bad = await mc.recall(user("x"), "tea", { limit: 0 }).catch((e) => e);
  assert.ok(bad instanceof BadRequestError);
  assert.equal(bad.status, 400);
  assert.equal(bad.code, "invalid");
  assert.equal(bad.field, "limit");

  const viewer = new MemoryConsole(URL, VIEWER_TOKEN);
  await assert.rejects(viewer.remember(user("x"), "not allowed"), ForbiddenError);
  const stranger = new MemoryConsole(`${URL}/api/v1/`, "not-a-token");
  const denied = await stranger.recall("x", "tea").catch((e) => e);
  assert.ok(denied instanceof UnauthorizedError);
  assert.equal(denied.status, 401);
});
