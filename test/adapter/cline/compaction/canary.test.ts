/**
 * PRIVACY CANARY for `<id>.compaction.json`: every field outside its allow-list (the summary,
 * file lists, message text, tool inputs and results, ids, hashes, `usageBefore`'s keys, an
 * over-long enum) carries a canary. After a real collection the canary is in none of the heap,
 * the ledger or the output, while the compaction itself was recorded; the control, which
 * JSON.parses the file, has it in the heap.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCanaryAbsent, runCanaryChild } from "../../../helpers/canary.ts";
import { makeTree } from "../../../helpers/cline-tree.ts";

const ID = "1796000000000_cmpcy";
let dir: string;
let home: string;
let canary: string;
let sessionsDir: string;

function poisoned(c: (f: string) => string, strategy: "agentic" | "basic"): object {
  const first =
    strategy === "agentic"
      ? {
          role: "user",
          content: [{ type: "text", text: c("summary_text") }],
          metadata: {
            kind: "compaction_summary",
            displayRole: c("display_role"),
            userRunSpan: 1,
            summary: c("summary"),
            details: { readFiles: [c("read_file")], modifiedFiles: [c("modified_file")] },
            tokensBefore: 4124,
            generatedAt: 1796116105827,
          },
        }
      : {
          id: c("prompt_id"),
          role: "user",
          ts: 1,
          content: [{ type: "text", text: c("first_prompt") }],
          metadata: {
            kind: "compaction",
            // Over the 32-byte cap of the enum fields: skipped as bytes, recorded as "other".
            reason: `${c("reason")}_${"x".repeat(40)}`,
            messagesRemoved: 10,
            usageBefore: { inputTokens: 20161, [c("usage_key")]: 1, cost: 0 },
          },
        };
  return {
    version: 1,
    updated_at: "2026-12-01T09:08:25.839Z",
    conversation_id: c("conversation_id"),
    source_message_count: 19,
    source_prefix_hash: c("prefix_hash"),
    source_last_message_key: c("last_key"),
    messages: [
      first,
      {
        id: "msg_RU9Io47w",
        role: "assistant",
        ts: 1796116105706,
        content: [
          { type: "thinking", thinking: c("thinking") },
          { type: "text", text: c("assistant_text") },
          { type: "tool_use", id: "call_1", name: "run_commands", input: { commands: [c("tool_input")] } },
        ],
        modelInfo: { id: "mock-model", provider: "openai-compatible", family: c("family") },
        metrics: { inputTokens: 8527, outputTokens: 139, cacheReadTokens: 0, cacheWriteTokens: 0 },
        metadata: { compaction: c("preserved") },
      },
      {
        id: "msg_Ey5Ecd3f",
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "call_1",
            name: "run_commands",
            content: [{ result: c("result") }],
          },
        ],
      },
    ],
    system_prompt: c("system_prompt"),
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "compaction-canary-"));
  // Built at run time from random bytes: no source file or module holds it.
  canary = `CNRY${randomBytes(8).toString("hex")}`;
  const tree = makeTree(join(dir, "home"), [
    {
      id: ID,
      cwd: "/work/ws",
      messages: [
        {
          id: "msg_RU9Io47w",
          metrics: { inputTokens: 8527, outputTokens: 139, cacheReadTokens: 0, cacheWriteTokens: 0 },
        },
      ],
    },
  ]);
  home = tree.home;
  sessionsDir = tree.sessionsDir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(strategy: "agentic" | "basic"): void {
  const c = (f: string) => `${canary}_${f}`;
  writeFileSync(
    join(sessionsDir, ID, `${ID}.compaction.json`),
    JSON.stringify(poisoned(c, strategy), null, 2),
  );
}

const run = (name: string, control: boolean) =>
  runCanaryChild("test/adapter/cline/compaction/canary-child.ts", dir, name, [home, ID], control);

describe("compaction file privacy by construction", () => {
  it.each([
    "agentic",
    "basic",
  ] as const)("%s: only allow-listed numbers and enums are decoded; the compaction is recorded", (strategy) => {
    write(strategy);
    const r = run(`collect-${strategy}`, false);
    expectCanaryAbsent(r, canary);
    const rows = JSON.parse(r.out.split("\n")[0] ?? "[]") as { strategy: string; reason: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]?.strategy).toBe(strategy);
    expect(rows[0]?.reason).toBe(strategy === "agentic" ? "unrecorded" : "other");
    // The cline.compaction event and span were built (and hold no canary: checked above).
    const line = r.out.split("\n").find((l) => l.startsWith("signals ")) ?? "signals {}";
    const sig = JSON.parse(line.slice("signals ".length)) as {
      records?: Record<string, unknown>[];
      spans?: Record<string, unknown>[];
    };
    expect(sig.records).toHaveLength(1);
    expect(sig.spans).toHaveLength(1);
    expect(sig.records?.[0]?.["cline.compaction.strategy"]).toBe(strategy);
    expect(sig.spans?.[0]).toEqual(sig.records?.[0]);
    // Usage still comes from the messages document only: one event, not two.
    expect(r.out).toContain("8,527");
    expect(r.out).not.toContain("17,054");
  });

  it("control: decoding the compaction file the ordinary way puts the canary in the heap", () => {
    write("agentic");
    const { snapshot } = run("control", true);
    expect(snapshot.includes(Buffer.from(canary))).toBe(true);
  });
});
