// The recall log through the client against a live server: a recall's recall_id reads back as
// a trace under the interface "typescript" (the X-Memory-Client header), the list filters
// and pages, and feedback is kept per actor with its errors.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BadRequestError, MemoryConsole, NotFoundError } from "memory-console-client";
import { TOKEN, URL, VIEWER_TOKEN, user } from "./server.mjs";

const mc = new MemoryConsole(URL, TOKEN, { retry: { attempts: 2, backoffMs: 10 } });
const viewer = new MemoryConsole(URL, VIEWER_TOKEN, { retry: { attempts: 2, backoffMs: 10 } });

test("a recall is traced under typescript and reads back", async () => {
  const ada = user("ada");
  const made = await mc.remember(ada, "Ada keeps her bicycle in the courtyard shed");
  const found = await mc.recall(ada, "where is the bicycle?", { limit: 3 });
  assert.match(found.recall_id, /^rc_[0-9a-f]{16}$/);

  const trace = await mc.getRecall(found.recall_id);
  assert.equal(trace.id, found.recall_id);
  assert.equal(trace.interface, "typescript");
  assert.equal(trace.user_id, ada);
  assert.equal(trace.query, "where is the bicycle?");
  assert.deepEqual(trace.results.map((r) => [r.memory_id, r.rank]), [[made.memory_id, 1]]);
  assert.deepEqual(trace.feedback, []);

  const missing = await mc.getRecall("rc_0000000000000000").catch((e) => e);
  assert.ok(missing instanceof NotFoundError);
});

test("recalls filters and pages, newest first", async () => {
  const ada = user("ada");
  await mc.remember(ada, "Ada plays the cello on Sundays");
  const ids = [];
  for (const q of ["cello", "Sundays cello", "piano"]) ids.push((await mc.recall(ada, q)).recall_id);

  const first = await mc.recalls(ada, { limit: 2 });
  assert.deepEqual(first.items.map((t) => t.id), [ids[2], ids[1]]);
  const rest = await mc.recalls(ada, { limit: 2, cursor: first.nextCursor });
  assert.deepEqual(rest.items.map((t) => t.id), [ids[0]]);
  assert.equal(rest.nextCursor, null);

  assert.deepEqual((await mc.recalls(ada, { q: "cello" })).items.map((t) => t.id), [ids[1], ids[0]]);
  assert.equal((await mc.recalls(ada, { interface: "typescript" })).items.length, 3);
  assert.equal((await mc.recalls(ada, { interface: "python" })).items.length, 0);
  assert.equal((await mc.recalls(ada, { since: new Date(Date.now() + 3_600_000) })).items.length, 0);
  const bad = await mc.recalls(ada, { interface: "carrier-pigeon" }).catch((e) => e);
  assert.ok(bad instanceof BadRequestError);
  assert.equal(bad.field, "interface");
});

test("feedback is kept per actor, replaced, and refused with reasons", async () => {
  const ada = user("ada");
  const kept = await mc.remember(ada, "Ada's locker code is 4471");
  const other = await mc.remember(ada, "Ada's bank is in the old town");
  const found = await mc.recall(ada, "locker code");
  assert.deepEqual(found.results.map((h) => h.memory_id), [kept.memory_id]);

  const given = await mc.recallFeedback(found.recall_id, kept.memory_id, { grade: 2, note: "close" });
  assert.equal(given.recall_id, found.recall_id);
  assert.equal(given.grade, 2);
  assert.equal(given.note, "close");
  const again = await mc.recallFeedback(found.recall_id, kept.memory_id, { useful: true });
  assert.equal(again.id, given.id);
  assert.equal(again.grade, 3);
  const theirs = await viewer.recallFeedback(found.recall_id, kept.memory_id, { useful: false });
  assert.equal(theirs.grade, 0);
  assert.notEqual(theirs.id, given.id);
  const grades = (await mc.getRecall(found.recall_id)).feedback.map((f) => f.grade).sort();
  assert.deepEqual(grades, [0, 3]);

  const notResult = await mc.recallFeedback(found.recall_id, other.memory_id, { grade: 1 }).catch((e) => e);
  assert.ok(notResult instanceof BadRequestError);
  assert.equal(notResult.field, "memory_id");
  const both = await mc.recallFeedback(found.recall_id, kept.memory_id, { grade: 1, useful: true }).catch((e) => e);
  assert.ok(both instanceof BadRequestError);
  const unknown = await mc.recallFeedback("rc_0000000000000000", kept.memory_id, { grade: 1 }).catch((e) => e);
  assert.ok(unknown instanceof NotFoundError);
});
