import { describe, expect, it } from "vitest";
import { usageDedupKey } from "../../../src/adapter/cline/dedup.ts";
import { ANTHROPIC, ask, recorded as c, parse, ROOT, request, say, TASK, tool } from "./helpers.ts";

describe("task format parser", () => {
  it("one event per final request; an in-flight one waits", () => {
    const p = parse([
      say(1, "task", "do it"),
      request(10, c(100, 20, 40)),
      say(11, "text", "ok"),
      request(20, undefined),
    ]);
    expect(p.events.map((e) => e.messageId)).toEqual(["10"]);
    expect(p.waiting.requests).toBe(1);
    const e = p.events[0];
    // openai: tokensIn includes the cached tokens.
    expect([e?.input, e?.output, e?.cacheRead, e?.cacheWrite, e?.total]).toEqual([60, 20, 40, 0, 120]);
    expect(e?.client).toBe("cli");
    expect(e?.endApproximate).toBe(true);
    expect(e?.recordedCost).toBeNull();
    expect(p.sums).toEqual({ tokensIn: 100, tokensOut: 20, cacheReads: 40, cacheWrites: 0 });
  });

  it("applies the Anthropic rule (tokensIn without cache) and keeps a recorded cost above 0", () => {
    const p = parse([request(10, c(5, 7, 30, 11, 0.25), ANTHROPIC), say(11, "text", "ok")]);
    const e = p.events[0];
    expect([e?.input, e?.cacheRead, e?.cacheWrite, e?.total, e?.cacheBranch]).toEqual([
      5,
      30,
      11,
      53,
      "additive",
    ]);
    expect(e?.recordedCost).toBe(0.25);
  });

  it("reports an unknown provider and counts it without double counting", () => {
    const p = parse([
      request(10, c(100, 1, 30), { providerId: "newco", modelId: "m", mode: "act" }),
      say(11, "text", "ok"),
    ]);
    expect(p.problems.map((x) => x.code)).toEqual(["unknown-provider"]);
    expect(p.events[0]?.total).toBe(101);
  });

  it("attributes the tools between two requests to the first, 1/n each, once it is closed", () => {
    const msgs = [
      say(1, "task", "t"),
      request(10, c(100, 10)),
      tool(11, "readFile"),
      say(12, "command", "ls -la"),
      request(20, c(200, 10)),
      tool(21, "newFileCreated"),
    ];
    const p = parse(msgs);
    expect(p.toolCalls.map((t) => [t.toolName, t.divisor, t.usageKey === p.events[0]?.dedupKey])).toEqual([
      ["readFile", 2, true],
      ["execute_command", 2, true],
    ]);
    expect(p.events[0]?.toolCallCount).toBe(2);
    // The last request's tool waits: more could follow before the next request.
    expect(p.waiting.toolCalls).toBe(1);
    const stopped = parse([...msgs, ask(30, "completion_result", "done")]);
    expect(stopped.toolCalls.at(-1)).toMatchObject({ toolName: "newFileCreated", divisor: 1 });
    expect(stopped.toolCalls.at(-1)?.usageKey).toBe(stopped.events[1]?.dedupKey);
  });

  it("a tool name outside the legacy core's list is not decoded", () => {
    const p = parse([request(10, c(1, 1)), tool(11, "secretLookingName"), ask(12, "completion_result")]);
    expect(p.toolCalls[0]?.toolName).toBe("(unlisted)");
  });

  it("a resume that deletes a dangling request changes no key and counts nothing twice", () => {
    const before = [
      say(1, "task", "t"),
      request(10, c(100, 10)),
      request(20, undefined),
      ask(20, "resume_task"),
      ask(20, "resume_task"),
    ];
    const after = [
      say(1, "task", "t"),
      request(10, c(100, 10)),
      ask(40, "resume_task"),
      say(41, "user_feedback", "go on"),
      request(42, c(300, 5)),
      say(43, "text", "ok"),
    ];
    const a = parse(before);
    const b = parse(after);
    expect(a.events.map((e) => e.dedupKey)).toEqual([b.events[0]?.dedupKey]);
    expect(b.events.map((e) => e.messageId)).toEqual(["10", "42"]);
    expect(b.signals.turns.map((t) => t.turnId)).toEqual(["1", "41"]);
  });

  it("rejects bad counts, reports a duplicate ts, and never makes a CLI key", () => {
    const p = parse([
      request(10, { tokensIn: -1, tokensOut: 2 }),
      request(10, c(1, 1)),
      request(30, c(1, 1)),
      say(31, "text", "ok"),
    ]);
    expect(p.problems.map((x) => x.code)).toEqual(["invalid-counts", "duplicate-ts"]);
    expect(p.events).toHaveLength(1);
    const key = p.events[0]?.dedupKey as string;
    expect(key.startsWith("cline-tasks|")).toBe(true);
    expect(key).not.toBe(usageDedupKey(TASK, "lead", "30"));
    const other = parse([request(30, c(1, 1)), say(31, "text", "ok")], {
      ...ROOT,
      path: "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev",
      client: "vscode",
    });
    expect(other.events[0]?.dedupKey).not.toBe(key);
    expect(other.events[0]?.client).toBe("vscode");
  });
});
