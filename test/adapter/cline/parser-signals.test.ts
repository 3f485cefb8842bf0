/**
 * What the parser reads for events, traces and the GenAI metrics: every message's ts, the
 * chat start rule, tool results joined by tool_use id, turns.
 */
import { describe, expect, it } from "vitest";
import { toolCallKey, turnKey } from "../../../src/adapter/cline/dedup.ts";
import { parseMessagesDocument } from "../../../src/adapter/cline/parser.ts";
import { messagesDocumentSchema } from "../../../src/adapter/cline/schema.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";

const ROOT = "1796018194209_nfmy0";
const PATH = `/s/${ROOT}/${ROOT}.messages.json`;

function parse(doc: unknown, path = PATH) {
  const scanned = scanBuffer(Buffer.from(JSON.stringify(doc)), messagesDocumentSchema);
  return parseMessagesDocument(scanned, path, { project: "/work/ws" });
}

const m = { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 };
const prompt = (id: string, ts: number) => ({
  id,
  role: "user",
  ts,
  content: [{ type: "text", text: "do it" }],
});
const asst = (id: string, ts: number, calls: string[] = [], metrics: unknown = m) => ({
  id,
  role: "assistant",
  ts,
  content: calls.map((c) => ({ type: "tool_use", id: c, name: "run_commands", input: { c } })),
  modelInfo: { id: "mock-model", provider: "openai-compatible" },
  ...(metrics === "none" ? {} : { metrics }),
});
const result = (id: string, ts: number, toolUseId: string, isError?: unknown) => ({
  id,
  role: "user",
  ts,
  content: [
    {
      type: "tool_result",
      tool_use_id: toolUseId,
      name: "run_commands",
      content: [{ result: "x" }],
      ...(isError === undefined ? {} : { is_error: isError }),
    },
  ],
});

describe("parser signals", () => {
  const doc = {
    version: 1,
    agent: "lead",
    sessionId: ROOT,
    messages: [
      prompt("u1", 1000),
      asst("msg_a", 1400, ["t1", "t2"]),
      // Parallel calls: t2 finished first but is stored second.
      result("msg_r1", 1900, "t1"),
      result("msg_r2", 1600, "t2", true),
      asst("msg_b", 2500),
      prompt("u2", 9000),
      asst("msg_c", 9300, ["t3"], "none"),
      result("msg_r3", 9500, "t3", "weird"),
      asst("msg_d", 9800, ["t4"]),
    ],
  };
  const p = parse(doc);

  it("a request starts at the latest ts before it in its document", () => {
    expect(p.events.map((e) => [e.messageId, e.startMs, e.timestampMs])).toEqual([
      ["msg_a", 1000, 1400],
      ["msg_b", 1900, 2500], // the later of the two results, not the last stored
      ["msg_d", 9500, 9800],
    ]);
  });

  it("tool results carry the join key, their message ts and is_error (absent = success, odd = unknown)", () => {
    expect(p.signals.toolResults).toEqual([
      expect.objectContaining({
        callKey: toolCallKey(ROOT, "lead", "t1"),
        timestampMs: 1900,
        isError: false,
      }),
      expect.objectContaining({ callKey: toolCallKey(ROOT, "lead", "t2"), timestampMs: 1600, isError: true }),
      expect.objectContaining({ callKey: toolCallKey(ROOT, "lead", "t3"), timestampMs: 9500, isError: null }),
    ]);
    const keys = new Set(p.toolCalls.map((c) => c.callKey));
    for (const r of p.signals.toolResults) expect(keys.has(r.callKey)).toBe(true);
  });

  it("tool calls name their message, tool_use id and turn", () => {
    expect(p.toolCalls.map((c) => [c.toolUseId, c.messageId, c.turnId, c.timestampMs])).toEqual([
      ["t1", "msg_a", "u1", 1400],
      ["t2", "msg_a", "u1", 1400],
      ["t3", "msg_c", "u2", 9300],
      ["t4", "msg_d", "u2", 9800],
    ]);
  });

  it("each prompt opens a turn; the last one stays open", () => {
    expect(p.signals.turns).toEqual([
      expect.objectContaining({
        turnKey: turnKey(ROOT, "lead", "u1"),
        startMs: 1000,
        endMs: 2500,
        closed: true,
      }),
      expect.objectContaining({
        turnKey: turnKey(ROOT, "lead", "u2"),
        startMs: 9000,
        endMs: 9800,
        closed: false,
      }),
    ]);
    expect(p.events.map((e) => e.turnId)).toEqual(["u1", "u1", "u2"]);
    expect(p.signals.lastTsMs).toBe(9800);
    expect(p.signals.rootSessionId).toBe(ROOT);
  });

  it("a sub-agent document belongs to its root session's trace", () => {
    const sub = parse(
      { ...doc, agent: "subagent", sessionId: `${ROOT}__agent_1_abcdef` },
      `/s/${ROOT}/agent_1_abcdef.messages.json`,
    );
    expect(sub.signals.rootSessionId).toBe(ROOT);
    expect(sub.signals.turns[0]?.rootSessionId).toBe(ROOT);
  });

  it("messages before any prompt form the '' turn", () => {
    const q = parse({ version: 1, agent: "lead", sessionId: ROOT, messages: [asst("msg_x", 500)] });
    expect(q.events[0]?.turnId).toBe("");
    expect(q.events[0]?.startMs).toBe(0);
    expect(q.signals.turns).toEqual([expect.objectContaining({ turnId: "", startMs: 500, endMs: 500 })]);
  });

  it("a tool_result without a tool_use_id is a problem, not a silent skip", () => {
    const q = parse({
      version: 1,
      agent: "lead",
      sessionId: ROOT,
      messages: [
        asst("msg_x", 500, ["t9"]),
        { id: "r", role: "user", ts: 600, content: [{ type: "tool_result" }] },
      ],
    });
    expect(q.signals.toolResults).toEqual([]);
    expect(q.problems.map((x) => x.code)).toEqual(["missing-tool-use-id"]);
  });
});
