/**
 * Compiled by `npm test` (tsc, strict), never run: the options and answers are typed from the
 * OpenAPI document, so a wrong field name or type is a compile error (`@ts-expect-error`
 * fails the build when the line it marks compiles).
 */
import {
  ApiError,
  MemoryConsole,
  NotFoundError,
  type Memory,
  type RecallFeedback,
  type RecallResult,
  type RecallTrace,
} from "memory-console-client";

export async function typedExample(mc: MemoryConsole): Promise<string[]> {
  const made = await mc.remember("alice", "Alice prefers green tea", {
    tags: ["drinks"],
    metadata: { turn: 3 },
    conversationId: "c1",
    validFrom: new Date("2024-01-01T00:00:00Z"),
  });
  const id: string = made.memory_id;

  const found: RecallResult = await mc.recall("alice", "tea", {
    limit: 5,
    since: new Date(0),
    until: "2030-01-01T00:00:00Z",
    author: "alice",
    tags: ["drinks"],
    asOf: new Date(),
    includeSuperseded: false,
  });
  const scores: number[] = found.results.map((hit) => hit.score);
  const recallId: string | null = found.recall_id;
  if (recallId) {
    const trace: RecallTrace = await mc.getRecall(recallId);
    const ranks: number[] = trace.results.map((r) => r.rank);
    const given: RecallFeedback = await mc.recallFeedback(recallId, id, { grade: 2, note: "ok" });
    await mc.recallFeedback(recallId, id, { useful: false });
    const listed = await mc.recalls("alice", { interface: "typescript", since: new Date(0) });
    void [ranks, given.grade, listed.items.map((t) => t.interface)];
    // @ts-expect-error: grade is a number
    await mc.recallFeedback(recallId, id, { grade: "2" });
  }

  const memory: Memory = await mc.update(id, { content: "Alice prefers black tea", version: 1 });
  const page = await mc.listMemories("alice", { limit: 2, metadata: { turn: 3 } });
  for await (const item of mc.iterateMemories("alice", { limit: 100 })) void item;
  await mc.forget(id, { reason: "asked to" });

  const session = await mc.createSession("alice", { ttlSeconds: 3600 });
  await mc.append(session.session_id, [{ role: "user", content: "hello" }]);
  await mc.context(session.session_id, { last: 10 });
  await mc.promoteMessage(session.session_id, 1, { content: "edited", importance: 0.8 });

  try {
    await mc.getMemory("mem_missing");
  } catch (error) {
    if (error instanceof NotFoundError) void [error.code, error.field, error.status];
    if (error instanceof ApiError) void error.currentVersion;
  }

  // @ts-expect-error: the API's field names are camelCase options here
  await mc.recall("alice", "tea", { as_of: "2024-01-01" });
  // @ts-expect-error: limit is a number
  await mc.recall("alice", "tea", { limit: "5" });
  // @ts-expect-error: no such option
  await mc.remember("alice", "tea", { colour: "green" });

  return [String(scores.length), memory.content, String(page.items.length)];
}
