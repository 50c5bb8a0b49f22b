/**
 * Memory Console as tools of a Vercel AI SDK agent: the model recalls what it knows about the
 * user before answering and remembers what is worth keeping. Pass `memoryTools(mc, userId)`
 * as `tools` of `generateText` / `streamText`.
 */
import { tool } from "ai";
import { z } from "zod";
import type { MemoryConsole } from "memory-console-client";

export function memoryTools(mc: MemoryConsole, userId: string) {
  return {
    recallMemories: tool({
      description:
        "Search what is remembered about the user. Call it before answering anything that " +
        "depends on their preferences, plans or history. Answers the best matches first.",
      inputSchema: z.object({
        query: z.string().describe("what to look for, in the user's words"),
        tags: z.array(z.string()).optional().describe("only memories with all these tags"),
      }),
      execute: async ({ query, tags }) => {
        const { results } = await mc.recall(userId, query, { limit: 5, tags });
        return results.map((hit) => ({ id: hit.memory_id, content: hit.content }));
      },
    }),
    rememberFact: tool({
      description:
        "Store a durable fact about the user (a preference, a plan, a correction), one " +
        "sentence that makes sense on its own.",
      inputSchema: z.object({
        content: z.string().describe("the fact, as a sentence"),
        tags: z.array(z.string()).optional(),
      }),
      execute: async ({ content, tags }) => {
        const memory = await mc.remember(userId, content, { tags, source: "ai-sdk" });
        return { id: memory.memory_id, deduplicated: memory.deduplicated ?? false };
      },
    }),
  };
}
