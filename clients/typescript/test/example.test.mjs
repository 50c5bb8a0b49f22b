// The README's Vercel AI SDK example: its tools run against the live server, as a model's
// tool calls would run them (the model itself is not called: that needs a provider and the
// network). npm test compiles examples/ to .test-build/ first.
import assert from "node:assert/strict";
import { test } from "node:test";

import { MemoryConsole } from "memory-console-client";
import { memoryTools } from "../.test-build/examples/ai-sdk-tools.js";
import { TOKEN, URL, user } from "./server.mjs";

test("the AI SDK tools remember and recall", async () => {
  const fay = user("fay");
  const tools = memoryTools(new MemoryConsole(URL, TOKEN), fay);
  const call = { toolCallId: "call-1", messages: [] };
  const stored = await tools.rememberFact.execute(
    { content: "Fay's daughter is called Ines", tags: ["family"] },
    call,
  );
  assert.match(stored.id, /^mem_/);
  assert.equal(stored.deduplicated, false);
  const hits = await tools.recallMemories.execute({ query: "what is her daughter called?" }, call);
  assert.deepEqual(hits, [{ id: stored.id, content: "Fay's daughter is called Ines" }]);
  assert.deepEqual(await tools.recallMemories.execute({ query: "daughter", tags: ["work"] }, call), []);
});
