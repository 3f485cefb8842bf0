import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import type { UsageEvent } from "../../../src/adapter/types.ts";
import { ANTHROPIC, OPENAI, request, say, tool, type UiMessage, writeTask } from "./helpers.ts";

/**
 * Two states of an `api_req_started` entry with counts that are not final yet, as Cline 2.18.0
 * wrote them (docs/cline-format.md §15.8 traps 2 and 3):
 *  - mid-stream (fixtures/cline-tasks/anthropic-tools/before): message_start's input and cache
 *    counts and a provisional tokensOut, with nothing settled after the entry;
 *  - during an automatic retry's delay (fixtures/cline-tasks/retry-400/before): zeros and
 *    cancelReason "streaming_failed"; the retry then writes its usage into that same entry.
 * The ledger keeps a key's first event, so either counted would lose the real numbers.
 */
function failed(ts: number): UiMessage {
  const text = JSON.stringify({
    request: "req",
    tokensIn: 0,
    tokensOut: 0,
    cacheWrites: 0,
    cacheReads: 0,
    cost: 0,
    cancelReason: "streaming_failed",
  });
  return { ts, type: "say", say: "api_req_started", text, modelInfo: OPENAI };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function events(messages: UiMessage[]): Promise<UsageEvent[]> {
  const root = mkdtempSync(join(tmpdir(), "cline-tasks-settled-"));
  dirs.push(root);
  writeTask(root, "1796000000001", messages);
  const adapter = createClineTasksAdapter([{ path: root, client: "cli", product: "test", foundBy: "test" }]);
  const out: UsageEvent[] = [];
  for (const s of (await adapter.discover()).sources) {
    const o = await adapter.collectIncremental(s, undefined);
    if (o.status === "read") out.push(...o.events);
  }
  return out;
}

describe("a failed stream's entry during the automatic retry", () => {
  it("waits while it is the last request, so the retry's usage lands on its key", async () => {
    expect(await events([say(1, "task", "t"), failed(10), say(11, "error_retry", "{}")])).toEqual([]);
    const after = await events([
      say(1, "task", "t"),
      request(10, { tokensIn: 500, tokensOut: 50 }),
      say(11, "text", "ok"),
    ]);
    expect(after.map((e) => [e.timestampMs, e.input, e.output])).toEqual([[10, 500, 50]]);
  });

  it("is final once a later request exists (the retry did not reuse it)", async () => {
    const e = await events([failed(10), request(20, { tokensIn: 70, tokensOut: 7 }), say(21, "text", "ok")]);
    expect(e.map((x) => [x.timestampMs, x.total])).toEqual([
      [10, 0],
      [20, 77],
    ]);
  });
});

describe("an entry mid-stream", () => {
  it("waits until a settled message follows it; partial messages and asks close nothing", async () => {
    const partial = (m: UiMessage): UiMessage => ({ ...m, partial: true });
    const start = [say(1, "task", "t"), request(10, { tokensIn: 241, tokensOut: 1 }, ANTHROPIC)];
    expect(await events(start)).toEqual([]);
    expect(await events([...start, partial(tool(11, "readFile"))])).toEqual([]);
    expect(await events([...start, partial(say(11, "completion_result", "d"))])).toEqual([]);
    const done = await events([
      say(1, "task", "t"),
      request(10, { tokensIn: 241, tokensOut: 90 }, ANTHROPIC),
      tool(11, "readFile"),
    ]);
    expect(done.map((e) => [e.input, e.output])).toEqual([[241, 90]]);
  });
});
