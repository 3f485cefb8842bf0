import { describe, expect, it } from "vitest";
import {
  identityFromPath,
  parseMessagesDocument,
  readMetrics,
  validTokenCount,
} from "../../../src/adapter/cline/parser.ts";
import { messagesDocumentSchema } from "../../../src/adapter/cline/schema.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";

const PATH = "/s/1796018194209_nfmy0/1796018194209_nfmy0.messages.json";

function parse(doc: unknown, hint = { project: "/work/ws" }, path = PATH) {
  const scanned = scanBuffer(
    Buffer.from(typeof doc === "string" ? doc : JSON.stringify(doc)),
    messagesDocumentSchema,
  );
  return parseMessagesDocument(scanned, path, hint);
}

const metrics = (i: number, o: number, r = 0, w = 0, cost?: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: r,
  cacheWriteTokens: w,
  ...(cost !== undefined ? { cost } : {}),
});

const assistant = (id: string, m: unknown, tools: string[] = [], extra: Record<string, unknown> = {}) => ({
  id,
  role: "assistant",
  ts: 1796018200592,
  content: [
    { type: "text", text: "hello" },
    ...tools.map((t, i) => ({ type: "tool_use", id: `${id}_call_${i}`, name: t, input: { x: 1 } })),
  ],
  modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic", family: "claude-sonnet" },
  ...(m !== undefined ? { metrics: m } : {}),
  ...extra,
});

const doc = (messages: unknown[], top: Record<string, unknown> = {}) => ({
  version: 1,
  agent: "lead",
  sessionId: "1796018194209_nfmy0",
  messages,
  system_prompt: "secret",
  ...top,
});

describe("identityFromPath", () => {
  it.each([
    [PATH, "1796018194209_nfmy0", "lead"],
    ["/s/R/agent_1796_abcdef.messages.json", "R__agent_1796_abcdef", "subagent"],
    ["/s/R/helper__x1Y2z3.messages.json", "R__teamtask__helper__x1Y2z3", "teammate"],
    ["/s/R/helper__MPa2_O.messages.json", "R__teamtask__helper__MPa2_O", "teammate"],
    ["/s/R/agent_1796023883952_wt96rl.messages.json", "R__agent_1796023883952_wt96rl", "subagent"],
  ])("%s", (path, sessionId, agent) => {
    const id = identityFromPath(path);
    expect(id.sessionId).toBe(sessionId);
    expect(id.agent).toBe(agent);
  });
});

describe("validTokenCount / readMetrics", () => {
  it.each([
    [0, true],
    [12, true],
    [Number.MAX_SAFE_INTEGER, true],
    [-1, false],
    [1.5, false],
    [2 ** 53, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
    ["12", false],
    [null, false],
  ])("%s -> %s", (v, ok) => expect(validTokenCount(v)).toBe(ok));

  it("rejects a missing component with a reason naming it", () => {
    const r = readMetrics({ inputTokens: 1, outputTokens: 2, cacheReadTokens: 0 });
    expect(r).toEqual({ reason: "metrics.cacheWriteTokens is missing" });
  });

  it("rejects a sum beyond 2^53", () => {
    const big = Number.MAX_SAFE_INTEGER;
    expect("reason" in readMetrics(metrics(big, big))).toBe(true);
  });
});

describe("parseMessagesDocument", () => {
  it("one assistant message with metrics is one event, keyed by the document's session and agent", () => {
    const r = parse(
      doc([
        { id: "u1", role: "user", ts: 1, content: [] },
        assistant("msg_a", metrics(7952, 323, 7002, 729, 0.01034235)),
      ]),
    );
    expect(r.problems).toEqual([]);
    expect(r.events).toHaveLength(1);
    const e = r.events[0];
    expect(e).toMatchObject({
      dedupKey: "cline|1796018194209_nfmy0|lead|msg_a",
      sessionId: "1796018194209_nfmy0",
      agent: "lead",
      model: "claude-sonnet-4-5-20250929",
      provider: "anthropic",
      project: "/work/ws",
      input: 221,
      output: 323,
      cacheRead: 7002,
      cacheWrite: 729,
      total: 8275,
      cacheBranch: "subset",
      recordedCost: 0.01034235,
      timestampMs: 1796018200592,
    });
  });

  it("messages without metrics (display-only errors) are not events", () => {
    const err = assistant("error_1", undefined, [], {
      metadata: { displayOnly: true, displayRole: "error" },
    });
    const r = parse(doc([err]));
    expect(r.events).toEqual([]);
    expect(r.problems).toEqual([]);
  });

  it("user messages never count, even with a metrics block", () => {
    const r = parse(doc([{ id: "u", role: "user", ts: 1, content: [], metrics: metrics(5, 5) }]));
    expect(r.events).toEqual([]);
  });

  it("joins each tool_use to its own message with the message's tool count as divisor", () => {
    const r = parse(
      doc([assistant("msg_t", metrics(300, 30), ["run_commands", "read_files", "run_commands"])]),
    );
    expect(r.events[0]?.toolCallCount).toBe(3);
    expect(r.toolCalls).toHaveLength(3);
    for (const c of r.toolCalls) {
      expect(c.usageKey).toBe("cline|1796018194209_nfmy0|lead|msg_t");
      expect(c.divisor).toBe(3);
    }
    expect(r.toolCalls.map((c) => c.toolName)).toEqual(["run_commands", "read_files", "run_commands"]);
    expect(r.toolCalls[0]?.callKey).toBe("cline|1796018194209_nfmy0|lead|msg_t_call_0");
  });

  it("a call in a message without metrics is kept with an empty usage key (cost unknown, not free)", () => {
    const r = parse(doc([assistant("msg_n", undefined, ["editor"])]));
    expect(r.events).toEqual([]);
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]?.usageKey).toBe("");
  });

  it.each([
    ["negative", metrics(-1, 2)],
    ["fractional", metrics(1.5, 2)],
    ["huge", { ...metrics(1, 2), inputTokens: 2 ** 60 }],
    ["non-numeric", { ...metrics(1, 2), outputTokens: "12" }],
    ["null", { ...metrics(1, 2), cacheReadTokens: null }],
    ["missing", { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0 }],
    ["not an object", 42],
  ])("%s metrics are rejected with a counted problem, never NaN", (_n, m) => {
    const r = parse(doc([assistant("msg_bad", m), assistant("msg_ok", metrics(10, 1))]));
    expect(r.events.map((e) => e.messageId)).toEqual(["msg_ok"]);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]?.code).toBe("invalid-metrics");
    expect(r.problems[0]?.path).toBe(PATH);
  });

  it("the additive branch is recorded on the event", () => {
    const r = parse(doc([assistant("m", metrics(221, 323, 7002, 729))]));
    expect(r.events[0]).toMatchObject({ cacheBranch: "additive", input: 221, total: 8275 });
  });

  it("unknown content block types and fields are ignored", () => {
    const m = assistant("m", metrics(1, 1));
    (m.content as unknown[]).push({ type: "hologram", payload: { deep: [1, 2, { x: "y" }] } });
    const r = parse(doc([m], { futureField: { a: [1, 2, 3] } }));
    expect(r.events).toHaveLength(1);
    expect(r.problems).toEqual([]);
  });

  it("a message id repeated in one document counts once and is reported", () => {
    const r = parse(doc([assistant("m", metrics(1, 1)), assistant("m", metrics(2, 2))]));
    expect(r.events).toHaveLength(1);
    expect(r.problems.map((p) => p.code)).toEqual(["duplicate-message-id"]);
  });

  it("falls back to the path for session and agent when the document does not say", () => {
    const path = "/s/R/agent_9_abcdef.messages.json";
    const r = parse({ version: 1, messages: [assistant("m", metrics(1, 1))] }, { project: "" }, path);
    expect(r.events[0]?.dedupKey).toBe("cline|R__agent_9_abcdef|subagent|m");
  });

  it("a document that is not an object yields a problem, not a throw", () => {
    const r = parse("[1,2,3]");
    expect(r.events).toEqual([]);
    expect(r.problems[0]?.code).toBe("not-a-messages-document");
  });
});
