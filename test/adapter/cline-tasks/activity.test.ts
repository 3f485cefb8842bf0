/**
 * Active time, commits and pull requests, and session starts of the task format
 * (src/adapter/cline-tasks/activity.ts, docs/cline-format.md §17).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IDLE_CUTOFF_MS } from "../../../src/adapter/activity.ts";
import { parseUiMessages } from "../../../src/adapter/cline-tasks/parser.ts";
import { uiMessagesSchema } from "../../../src/adapter/cline-tasks/schema.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";
import { gapsOf } from "../../helpers/active-time.ts";
import { ask, recorded as c, parse, ROOT, request, say, type UiMessage } from "./helpers.ts";

const answer = (ts: number, result: string) =>
  request(
    ts,
    c(10 + ts, 1),
    undefined,
    `[execute_command for 'x'] Result:\n${result}\n\n<environment_details>`,
  );
const OK = "Command executed.";
const DENIED = "The user denied this operation.";

const gaps = (p: ReturnType<typeof parse>) =>
  gapsOf(p.activeTime).map((g) => [g.startMs, g.durationMs, g.type]);

describe("task format active time", () => {
  it("splits the timeline at the asks: the agent's gaps and the user's (answers, reviews, prompts)", () => {
    const p = parse([
      say(1_000, "task", "do it"),
      request(2_000, c(10, 1)),
      say(5_000, "text", "Editing."),
      ask(6_000, "tool", JSON.stringify({ tool: "newFileCreated", path: "a.ts", content: "x" })),
      // 4 s for the user to approve
      request(
        10_000,
        c(10, 1),
        undefined,
        "[write_to_file for 'a.ts'] Result:\nThe content was successfully saved",
      ),
      say(12_000, "completion_result", "ok"),
      ask(12_100, "completion_result"),
      // 30 s to read and type the next prompt
      say(42_100, "user_feedback", "more"),
      request(43_000, c(10, 1)),
      say(44_000, "text", "done"),
    ]);
    expect(gaps(p)).toEqual([
      [1_000, 1_000, "agent"],
      [2_000, 3_000, "agent"],
      [5_000, 1_000, "agent"],
      [6_000, 4_000, "user"],
      [10_000, 2_000, "agent"],
      [12_000, 100, "user"],
      [12_100, 30_000, "user"],
      [42_100, 900, "agent"],
      [43_000, 1_000, "agent"],
    ]);
    // Each gap kept by its stream and start: distinct, stable.
    const all = gapsOf(p.activeTime);
    expect(new Set(all.map((g) => `${g.streamKey}|${g.startMs}`)).size).toBe(all.length);
    expect(all.every((g) => g.sessionId === "1796000000000" && g.agent === "lead")).toBe(true);
  });

  it("a gap longer than its cut-off is idle: it counts nothing", () => {
    const p = parse([
      say(1_000, "task", "do it"),
      request(2_000, c(10, 1)),
      say(3_000, "completion_result", "ok"),
      ask(3_001, "completion_result"),
      say(3_001 + IDLE_CUTOFF_MS.user + 1, "user_feedback", "back after lunch"),
      request(3_001 + IDLE_CUTOFF_MS.user + 2, c(10, 1)),
      say(3_001 + IDLE_CUTOFF_MS.user + 2 + IDLE_CUTOFF_MS.agent + 1, "text", "a stalled request"),
    ]);
    expect(gaps(p)).toEqual([
      [1_000, 1_000, "agent"],
      [2_000, 1_000, "agent"],
      [3_000, 1, "user"],
      [3_001 + IDLE_CUTOFF_MS.user + 1, 1, "agent"],
    ]);
  });

  it("the gap closed by a partial message or a request in flight is not final yet", () => {
    const base = [say(1_000, "task", "t"), request(2_000, c(10, 1)), say(3_000, "text", "x")];
    expect(gaps(parse([...base, { ...say(4_000, "text", "stream"), partial: true }]))).toEqual([
      [1_000, 1_000, "agent"],
      [2_000, 1_000, "agent"],
    ]);
    expect(gaps(parse([...base, request(4_000, undefined)]))).toEqual([
      [1_000, 1_000, "agent"],
      [2_000, 1_000, "agent"],
    ]);
    expect(gaps(parse([...base, say(4_000, "text", "y")]))).toContainEqual([3_000, 1_000, "agent"]);
  });

  it("a cancelled request deleted on resume: the gap keyed by its start keeps its first view, nothing overlaps", () => {
    const cancelled = parse([
      say(1_000, "task", "t"),
      request(2_000, c(10, 1)),
      say(3_000, "text", "x"),
      request(4_000, undefined),
      ask(5_000, "resume_task"),
      ask(5_000, "resume_task"),
    ]);
    const resumed = parse([
      say(1_000, "task", "t"),
      request(2_000, c(10, 1)),
      say(3_000, "text", "x"),
      ask(9_000, "resume_task"),
      say(9_500, "user_feedback", "go on"),
      request(10_000, c(10, 1)),
    ]);
    // A ledger keeps the first view of a key: the union of both views, first wins.
    const kept = new Map<string, number>();
    for (const g of gapsOf([...cancelled.activeTime, ...resumed.activeTime]))
      if (!kept.has(`${g.streamKey}|${g.startMs}`)) kept.set(`${g.streamKey}|${g.startMs}`, g.durationMs);
    const total = [...kept.values()].reduce((a, b) => a + b, 0);
    // [1,2) [2,3) [3,4) [4,5) from the first view, [9,9.5) [9.5,10) from the second; never [3,9) on top.
    expect(total).toBe(5_000);
  });
});

describe("task format commits and pull requests", () => {
  it("counts a command that succeeded, by kind; not a denied one, not one never answered", () => {
    const p = parse([
      say(1_000, "task", "t"),
      request(2_000, c(10, 1)),
      say(3_000, "command", "git add -A && git commit -m 'x' && gh pr create --fill"),
      answer(4_000, OK),
      ask(5_000, "command", "git commit -am wipREQ_APP"),
      answer(6_000, DENIED),
      ask(7_000, "command", "glab mr create --fill REQ_APP"),
      answer(8_000, OK),
      say(9_000, "command", "echo 'git commit' && git log"),
      answer(10_000, OK),
      say(11_000, "command", "git commit -m late"),
    ]);
    expect(p.deliveries.map((d) => [d.kind, d.timestampMs, d.toolName])).toEqual([
      ["commit", 3_000, "execute_command"],
      ["pull_request", 3_000, "execute_command"],
      ["pull_request", 7_000, "execute_command"],
    ]);
    expect(p.deliveries.map((d) => d.callKey)).toEqual([
      p.toolCalls[0]?.callKey,
      p.toolCalls[0]?.callKey,
      p.toolCalls[2]?.callKey,
    ]);
    expect(new Set(p.deliveries.map((d) => d.deliveryKey)).size).toBe(3);
  });

  it("a failed command counts nothing", () => {
    const p = parse([
      request(2_000, c(10, 1)),
      say(3_000, "command", "git commit -m x"),
      answer(4_000, "The tool execution failed with the following error: boom"),
    ]);
    expect(p.deliveries).toEqual([]);
  });

  it("the real CLI 2.18.0: an approved `ask: command` commit and an auto-approved `say: command` commit", () => {
    for (const [scenario, id] of [
      ["approvals", "1796323661828"],
      ["diff-error", "1796323750680"],
    ] as const) {
      const path = join("fixtures/cline-tasks", scenario, "home/.cline/data/tasks", id, "ui_messages.json");
      const doc = scanBuffer(readFileSync(path), uiMessagesSchema);
      const p = parseUiMessages(doc, { root: ROOT, taskId: id, path, project: "/p" });
      expect(p.deliveries.map((d) => d.kind)).toEqual(["commit"]);
      expect(p.sessionStarts.map((s) => s.startType)).toEqual(["new"]);
      // Every gap is at most its cut-off and the sum is within the task's wall time.
      const msgs = JSON.parse(readFileSync(path, "utf8")) as UiMessage[];
      const span = (msgs.at(-1)?.ts as number) - (msgs[0]?.ts as number);
      const sum = gapsOf(p.activeTime).reduce((a, g) => a + g.durationMs, 0);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThanOrEqual(span);
    }
  });
});

describe("task format session starts", () => {
  it("say task is new; an answered resume ask is resumed, keyed by its ts; a SIGINT's two asks answer nothing", () => {
    const msgs: UiMessage[] = [
      say(1_000, "task", "t"),
      request(2_000, c(10, 1)),
      say(3_000, "completion_result", "ok"),
      ask(4_000, "resume_task"),
      ask(4_000, "resume_task"),
    ];
    expect(parse(msgs).sessionStarts.map((s) => [s.startType, s.timestampMs])).toEqual([["new", 1_000]]);
    const resumed = parse([
      ...msgs.slice(0, 3),
      ask(9_000, "resume_task"),
      say(9_100, "user_feedback", "go"),
    ]);
    expect(resumed.sessionStarts.map((s) => [s.startType, s.timestampMs])).toEqual([
      ["new", 1_000],
      ["resumed", 9_000],
    ]);
    const keys = resumed.sessionStarts.map((s) => s.startKey);
    expect(new Set(keys).size).toBe(2);
  });

  it("the real CLI 2.18.0 resume (-T): one new, one resumed", () => {
    const id = "1796159627857";
    const path = join("fixtures/cline-tasks/resume/home/.cline/data/tasks", id, "ui_messages.json");
    const p = parseUiMessages(scanBuffer(readFileSync(path), uiMessagesSchema), {
      root: ROOT,
      taskId: id,
      path,
      project: "/p",
    });
    expect(p.sessionStarts.map((s) => [s.startType, s.timestampMs])).toEqual([
      ["new", 1796159627882],
      ["resumed", 1796159648655],
    ]);
  });
});
