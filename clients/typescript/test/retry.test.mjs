// Retries, timeouts and odd answers against a tiny HTTP server of the test's own on
// 127.0.0.1 (a real socket; it answers what each test scripts).
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import {
  ApiError,
  MemoryConsole,
  TooManyRequestsError,
  TransportError,
  UnavailableError,
  retryDelay,
} from "memory-console-client";

let server;
let base;
let script = []; // what the next requests get: [status, headers, body] or "hang"
let seen = []; // "METHOD /path?query" of every request

before(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const next = script.shift() ?? [200, {}, "{}"];
    if (next === "hang") return; // never answers: the client's timeout must end it
    const [status, headers, body] = next;
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

const unavailable = (headers = {}) => [
  503,
  headers,
  JSON.stringify({ error: { code: "unavailable", message: "Redis is unreachable", field: null } }),
];
const memory = JSON.stringify({ memory_id: "mem_1", content: "tea" });

function client(retry = {}, timeout = 2000) {
  script = [];
  seen = [];
  return new MemoryConsole(base, "t0k", { timeout, retry: { backoffMs: 1, maxBackoffMs: 5000, ...retry } });
}

test("a read is retried after a 503, waiting the Retry-After seconds", async () => {
  const mc = client();
  script = [unavailable({ "Retry-After": "1" }), [200, {}, memory]];
  const started = Date.now();
  const got = await mc.getMemory("mem_1");
  assert.equal(got.memory_id, "mem_1");
  assert.deepEqual(seen, ["GET /api/v1/memories/mem_1", "GET /api/v1/memories/mem_1"]);
  assert.ok(Date.now() - started >= 950, "waited for Retry-After");
});

test("recall, a read-only POST, is retried; 429 too", async () => {
  const mc = client();
  const busy = JSON.stringify({ error: { code: "busy", message: "later", field: null } });
  script = [unavailable(), [429, { "Retry-After": "0" }, busy], [200, {}, '{"results": []}']];
  assert.deepEqual(await mc.recall("alice", "tea"), { results: [] });
  assert.equal(seen.length, 3);
});

test("a write is never retried", async () => {
  const mc = client();
  script = [unavailable(), [201, {}, memory]];
  const error = await mc.remember("alice", "tea").catch((e) => e);
  assert.ok(error instanceof UnavailableError);
  assert.equal(error.status, 503);
  assert.equal(error.code, "unavailable");
  assert.deepEqual(seen, ["POST /api/v1/memories"]);
});

test("retries stop after the policy's attempts, with the last error", async () => {
  const mc = client({ attempts: 3 });
  script = [unavailable(), unavailable(), unavailable(), [200, {}, memory]];
  await assert.rejects(mc.getMemory("mem_1"), UnavailableError);
  assert.equal(seen.length, 3);
  const busy = client({ attempts: 1 });
  script = [[429, { "Retry-After": "0" }, "{}"], [200, {}, memory]];
  await assert.rejects(busy.getMemory("mem_1"), TooManyRequestsError);
  assert.equal(seen.length, 1);
});

test("the timeout ends a try that gets no answer; a read tries again", async () => {
  const mc = client({ attempts: 2 }, 200);
  script = ["hang", [200, {}, memory]];
  assert.equal((await mc.getMemory("mem_1")).memory_id, "mem_1");
  const write = client({}, 200);
  script = ["hang"];
  const error = await write.remember("alice", "tea").catch((e) => e);
  assert.ok(error instanceof TransportError);
  assert.match(error.message, /no answer within 200 ms/);
  assert.equal(seen.length, 1);
});

test("a refused connection is a TransportError", async () => {
  const closed = createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const mc = new MemoryConsole(`http://127.0.0.1:${port}`, "t", { retry: { attempts: 2, backoffMs: 1 } });
  await assert.rejects(mc.getMemory("mem_1"), TransportError);
});

test("ids are one path segment; options become the API's fields and query", async () => {
  const mc = client();
  script = [[200, {}, memory], [200, {}, '{"memories": [], "next_cursor": null}']];
  await mc.getMemory("a/b c");
  await mc.listMemories("alice", { conversationId: "", limit: 5, metadata: { "team.name": "x y" } });
  assert.deepEqual(seen, [
    "GET /api/v1/memories/a%2Fb%20c",
    "GET /api/v1/memories?conversation_id=&limit=5&user_id=alice&metadata.team.name=x+y",
  ]);
});

test("an error answer that is not JSON is still an ApiError", async () => {
  const mc = client();
  script = [[502, { "Content-Type": "text/html" }, "<html>Bad gateway</html>"]];
  const error = await mc.getMemory("mem_1").catch((e) => e);
  assert.ok(error instanceof ApiError);
  assert.equal(error.status, 502);
  assert.equal(error.code, "error");
  assert.equal(error.body, "<html>Bad gateway</html>");
});

test("a cursor sent twice ends the iteration instead of looping", async () => {
  const mc = client();
  const page = JSON.stringify({ memories: [{ memory_id: "m" }], next_cursor: "c1" });
  script = [[200, {}, page], [200, {}, page]];
  const got = [];
  await assert.rejects(async () => {
    for await (const m of mc.iterateMemories("alice")) got.push(m.memory_id);
  }, /cursor c1 twice/);
  assert.deepEqual(got, ["m", "m"]);
});

test("retryDelay reads Retry-After in seconds or as a date, capped", () => {
  const policy = { attempts: 4, backoffMs: 100, maxBackoffMs: 3000 };
  const answer = (value) => new Response(null, { status: 503, headers: { "Retry-After": value } });
  assert.equal(retryDelay(policy, 0, answer("2")), 2000);
  assert.equal(retryDelay(policy, 0, answer("60")), 3000);
  const soon = new Date(Date.now() + 2000).toUTCString();
  const ms = retryDelay(policy, 0, answer(soon));
  assert.ok(ms > 500 && ms <= 2000, `${ms}`);
  for (let i = 0; i < 20; i++) assert.ok(retryDelay(policy, 2) <= 400);
});
