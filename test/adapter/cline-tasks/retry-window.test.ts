import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../../src/adapter/cline-tasks/adapter.ts";
import type { UsageEvent } from "../../../src/adapter/types.ts";
import { OPENAI, request, say, type UiMessage, writeTask } from "./helpers.ts";

/**
 * docs/cline-format.md §15.8 trap 3, as Cline 2.18.0 wrote it (fixtures/cline-tasks/retry-400/before):
 * during an automatic retry's delay the failed attempt's entry holds zeros and cancelReason
 * "streaming_failed", and the retry then writes its usage into that same entry.
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
  const root = mkdtempSync(join(tmpdir(), "cline-tasks-retry-"));
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
    const after = await events([say(1, "task", "t"), request(10, { tokensIn: 500, tokensOut: 50 })]);
    expect(after.map((e) => [e.timestampMs, e.input, e.output])).toEqual([[10, 500, 50]]);
  });

  it("is final once a later request exists (the retry did not reuse it)", async () => {
    const e = await events([failed(10), request(20, { tokensIn: 70, tokensOut: 7 })]);
    expect(e.map((x) => [x.timestampMs, x.total])).toEqual([
      [10, 0],
      [20, 77],
    ]);
  });
});
