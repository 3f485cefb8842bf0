/**
 * The task format's requests and tool calls as event records and spans: `cline.client` from the
 * root (`vscode` for an editor's global storage), and `cline.end.known=false` on a request, whose
 * end no file records (docs/cline-format.md §15.3), while a CLI 3.x request says nothing of it.
 * A use_subagents call's sub-agents (§15.12): one chat span of agent `subagent` under the lead's
 * turn, from the call's status message to its `subagent_usage`, both known.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { afterAll, describe, expect, it } from "vitest";
import { TASK_DATA_REL, TASK_FIXTURES_DIR } from "../../fixtures/harness/ground-truth-tasks.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { CLINE_EXTENSION_ID, taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { toLogRecord } from "../../src/export/events/records.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { toSpan } from "../../src/export/traces/spans.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { ask, request, say, writeTask } from "../adapter/cline-tasks/helpers.ts";

const ctx = {
  resource: resourceFromAttributes({}),
  scope: { name: "cline-otel" },
  project: "path" as const,
  priceOf: buildPriceLookup(undefined),
};

const dir = mkdtempSync(join(tmpdir(), "task-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("task-format signals", () => {
  it("carry cline.client and mark a request's end as not known", async () => {
    const home = join(dir, "home");
    const storage = join(home, ".config", "Code", "User", "globalStorage", CLINE_EXTENSION_ID);
    const counts = { tokensIn: 100, tokensOut: 10, cacheReads: 0, cacheWrites: 0, cost: 0 };
    writeTask(storage, "1796000000001", [
      say(1_796_000_000_001, "task", "t"),
      request(1_796_000_000_010, counts),
      say(1_796_000_000_020, "command", "ls"),
      // The next request's text answers the call (docs/cline-format.md §15.14).
      request(
        1_796_000_000_030,
        { ...counts, tokensIn: 200 },
        undefined,
        "[execute_command for 'ls'] Result:\nCommand executed.",
      ),
      ask(1_796_000_000_040, "completion_result"),
    ]);
    const ledger = Ledger.open(join(dir, "state"));
    try {
      const roots = taskRootCandidates({ home, platform: "linux", env: {}, cwd: home });
      await runPass(createClineTasksAdapter(roots), ledger);
      const s = ledger.signals;
      if (s === undefined) throw new Error("no signals");
      const rows = s.batch(s.cursor("t", 0), new Set(["chat", "tool"] as const), 100).rows;
      const chat = rows.find((r) => r.kind === "chat");
      const tool = rows.find((r) => r.kind === "tool");
      if (chat === undefined || tool === undefined) throw new Error(`rows: ${rows.map((r) => r.kind)}`);
      expect(toLogRecord(chat, ctx, 0)?.attributes).toMatchObject({
        "cline.client": "vscode",
        "cline.end.known": false,
      });
      expect(toSpan(chat, ctx).attributes).toMatchObject({
        "cline.client": "vscode",
        "cline.end.known": false,
      });
      expect(toSpan(tool, ctx).attributes).toMatchObject({
        "cline.client": "vscode",
        "gen_ai.tool.name": "execute_command",
      });
      // The outcome and end from the answering request: success, ending at its ts.
      expect(toSpan(tool, ctx).attributes).toMatchObject({
        "cline.tool.outcome": "success",
        "cline.tool.cancelled": false,
      });
      expect([tool.tsMs, tool.endMs]).toEqual([1_796_000_000_020, 1_796_000_000_030]);
    } finally {
      ledger.close();
    }
  });

  it("a use_subagents call's sub-agents: one chat span of agent subagent, start and end known, under the lead's turn", async () => {
    const data = join(TASK_FIXTURES_DIR, "subagent", TASK_DATA_REL);
    const ledger = Ledger.open(join(dir, "state-subagent"));
    try {
      const root = { path: data, client: "cli" as const, product: "test", foundBy: "test" };
      const pass = await runPass(createClineTasksAdapter([root]), ledger);
      expect(pass.problems).toEqual([]);
      const s = ledger.signals;
      if (s === undefined) throw new Error("no signals");
      const chats = s
        .batch(s.cursor("t", 0), new Set(["chat"] as const), 100)
        .rows.map((r) => toSpan(r, ctx));
      const sub = chats.filter((c) => c.attributes["cline.agent"] === "subagent");
      expect(sub.map((c) => c.attributes["gen_ai.usage.input_tokens"])).toEqual([6398, 1703]);
      for (const c of sub) {
        const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
        expect(ms(c.endTime)).toBeGreaterThan(ms(c.startTime));
        expect(c.attributes["cline.end.known"]).toBeUndefined();
        expect(c.attributes["cline.start.known"]).toBe(true);
        expect(c.attributes["cline.tool_calls"]).toBe(0);
      }
      // Every chat span of the task, the lead's and the sub-agents', has the one turn as parent.
      expect(new Set(chats.map((c) => c.parentSpanContext?.spanId)).size).toBe(1);
    } finally {
      ledger.close();
    }
  });
});
