import { describe, expect, it } from "vitest";
import { requestKey, subagentUsageKey } from "../../../src/adapter/cline-tasks/dedup.ts";
import {
  ANTHROPIC,
  ask,
  recorded as c,
  parse,
  ROOT,
  request,
  say,
  subagentStatus,
  subagentUsage,
  TASK,
} from "./helpers.ts";

/**
 * `say: "subagent_usage"` (docs/cline-format.md §15.12): the sums of one use_subagents call's
 * sub-agents, whose requests are in no `api_req_started`: one event each, never dropped, never
 * counted twice; the call's status message is the lead request's tool call.
 */

/** A lead request that calls use_subagents, the call's sums, then the next request. */
const batch = (usage = subagentUsage(20, c(6398, 240, 3072))) => [
  say(1, "task", "t"),
  request(10, c(2203, 113)),
  say(11, "text", "Delegating."),
  subagentStatus(12),
  usage,
  request(30, c(2851, 89, 2304)),
  say(31, "text", "ok"),
];

describe("sub-agents of the task format", () => {
  it("one event per subagent_usage, the provider's rule applied, at the call's time", () => {
    const p = parse(batch());
    expect(p.problems).toEqual([]);
    expect(p.events.map((e) => [e.messageId, e.agent])).toEqual([
      ["10", "lead"],
      ["20", "subagent"],
      ["30", "lead"],
    ]);
    const e = p.events[1];
    // openai: tokensIn includes the cached tokens, as in a request entry.
    expect([e?.input, e?.output, e?.cacheRead, e?.cacheWrite, e?.total]).toEqual([3326, 240, 3072, 0, 6638]);
    expect(e?.dedupKey).toBe(subagentUsageKey(ROOT.path, TASK, 20, 0));
    expect([e?.sessionId, e?.model, e?.provider, e?.client]).toEqual([TASK, "gpt-4o", "openai", "cli"]);
    // Written once its sub-agents have all ended; they started at the call's status message.
    expect([e?.startMs, e?.timestampMs, e?.endApproximate]).toEqual([12, 20, false]);
    expect(e?.toolCallCount).toBe(0);
    expect(e?.turnId).toBe(p.events[0]?.turnId);
    // The taskHistory.json check sums what Cline's totals hold: requests AND sub-agents.
    expect(p.sums).toEqual({
      tokensIn: 2203 + 6398 + 2851,
      tokensOut: 442,
      cacheReads: 5376,
      cacheWrites: 0,
    });
  });

  it("the use_subagents call is a tool call of the lead request, never of the sub-agents' event", () => {
    const p = parse(batch());
    expect(p.toolCalls.map((t) => [t.toolName, t.divisor, t.usageKey])).toEqual([
      ["use_subagents", 1, p.events[0]?.dedupKey],
    ]);
    expect(p.events[0]?.toolCallCount).toBe(1);
  });

  it("applies the Anthropic rule (tokensIn without cache)", () => {
    const msgs = batch(subagentUsage(20, c(41, 7, 300, 11), ANTHROPIC)).map((m) =>
      m.say === "api_req_started" ? { ...m, modelInfo: ANTHROPIC } : m,
    );
    const e = parse(msgs).events[1];
    expect([e?.input, e?.cacheRead, e?.cacheWrite, e?.total, e?.cacheBranch]).toEqual([
      41,
      300,
      11,
      359,
      "additive",
    ]);
  });

  it("is counted at once, as the document's last message too: nothing rewrites it", () => {
    const p = parse(batch().slice(0, 5));
    expect(p.events.map((e) => e.messageId)).toEqual(["10", "20"]);
    // The lead request is not closed by it: its call waits for the next request.
    expect(p.waiting.toolCalls).toBe(1);
    expect(p.toolCalls).toEqual([]);
  });

  it("the same message read again (a rewrite, a resume) keeps its key: counted once", () => {
    const first = parse(batch().slice(0, 5));
    const again = parse([...batch(), ask(40, "resume_task"), say(41, "user_feedback", "more")]);
    const key = (p: ReturnType<typeof parse>) => p.events.find((e) => e.agent === "subagent")?.dedupKey;
    expect(key(again)).toBe(key(first));
    expect(again.events.filter((e) => e.agent === "subagent")).toHaveLength(1);
  });

  it("messages sharing a ts get distinct keys, none a request's", () => {
    const p = parse([
      request(20, c(5, 5)),
      subagentUsage(20, c(1, 1)),
      subagentUsage(20, c(2, 2)),
      say(21, "text", "ok"),
    ]);
    const keys = p.events.map((e) => e.dedupKey);
    expect(keys).toEqual([
      requestKey(ROOT.path, TASK, 20),
      subagentUsageKey(ROOT.path, TASK, 20, 0),
      subagentUsageKey(ROOT.path, TASK, 20, 1),
    ]);
    expect(new Set(keys).size).toBe(3);
  });

  it("bad or missing counts are reported, never counted", () => {
    const p = parse([
      request(10, c(5, 5)),
      subagentUsage(20, { tokensIn: -3, tokensOut: 1 }),
      { ts: 21, type: "say", say: "subagent_usage", text: "not json" },
      subagentUsage(22, {}),
      say(23, "text", "ok"),
    ]);
    expect(p.problems.map((x) => x.code)).toEqual([
      "invalid-subagent-usage",
      "invalid-subagent-usage",
      "invalid-subagent-usage",
    ]);
    expect(p.events.map((e) => e.agent)).toEqual(["lead"]);
    expect(p.sums.tokensIn).toBe(5);
  });

  it("an unknown provider is reported and counted by the rule that cannot double count", () => {
    const p = parse([subagentUsage(20, c(100, 1, 30), { providerId: "newco", modelId: "m", mode: "act" })]);
    expect(p.problems.map((x) => x.code)).toEqual(["unknown-provider"]);
    expect(p.events[0]?.total).toBe(101);
  });

  it("decodes nothing of the status message: no prompt reaches the output", () => {
    const p = parse([...batch(), subagentStatus(40, true)]);
    expect(JSON.stringify(p)).not.toContain("SECRET-PROMPT");
    expect(p.toolCalls.every((t) => t.toolName === "use_subagents")).toBe(true);
  });
});
