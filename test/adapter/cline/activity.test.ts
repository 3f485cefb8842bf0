/**
 * CLI 3.x active time, commits and pull requests, and session starts
 * (src/adapter/cline/activity.ts, docs/cline-format.md §17).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IDLE_CUTOFF_MS } from "../../../src/adapter/activity.ts";
import { parseMessagesDocument } from "../../../src/adapter/cline/parser.ts";
import { messagesDocumentSchema } from "../../../src/adapter/cline/schema.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";
import { gapsOf } from "../../helpers/active-time.ts";

const ROOT = "1796018194209_nfmy0";
const PATH = `/s/${ROOT}/${ROOT}.messages.json`;

function parse(messages: unknown[], path = PATH) {
  const doc = { version: 1, messages };
  const scanned = scanBuffer(Buffer.from(JSON.stringify(doc)), messagesDocumentSchema);
  return parseMessagesDocument(scanned, path, { project: "/work/ws" });
}

const prompt = (id: string, ts: number) => ({
  id,
  role: "user",
  ts,
  content: [{ type: "text", text: "do it" }],
});
const run = (id: string, ts: number, useId: string, commands: unknown) => ({
  id,
  role: "assistant",
  ts,
  content: [{ type: "tool_use", id: useId, name: "run_commands", input: { commands } }],
  modelInfo: { id: "mock-model", provider: "openai-compatible" },
  metrics: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
});
const text = (id: string, ts: number) => ({
  id,
  role: "assistant",
  ts,
  content: [{ type: "text", text: "done" }],
  modelInfo: { id: "mock-model", provider: "openai-compatible" },
});
const result = (id: string, ts: number, useId: string, content: unknown, isError?: boolean) => ({
  id,
  role: "user",
  ts,
  content: [
    {
      type: "tool_result",
      tool_use_id: useId,
      name: "run_commands",
      content,
      ...(isError === undefined ? {} : { is_error: isError }),
    },
  ],
});
const ok = (query: string) => ({ query, result: "", success: true });
const bad = (query: string) => ({ query, result: "", error: "exit 1", success: false });

describe("CLI 3.x commits and pull requests", () => {
  it("counts command i of a run_commands call when its result object i succeeded", () => {
    const p = parse([
      prompt("u1", 1_000),
      run("a1", 2_000, "t1", ["git add -A", "git commit -m 'x'", "gh pr create --fill", "git commit -m y"]),
      result("r1", 3_000, "t1", [ok("1"), ok("2"), ok("3"), bad("4")]),
      run("a2", 4_000, "t2", "git -C repo commit -m single"),
      result("r2", 5_000, "t2", [ok("1")]),
      run("a3", 6_000, "t3", ["git commit -m denied"]),
      result(
        "r3",
        7_000,
        "t3",
        JSON.stringify({ error: "This tool call was rejected by the user and not executed." }),
        true,
      ),
      run("a4", 8_000, "t4", ["git commit -m pending"]),
    ]);
    expect(p.deliveries.map((d) => [d.kind, d.timestampMs, d.toolName])).toEqual([
      ["commit", 2_000, "run_commands"],
      ["pull_request", 2_000, "run_commands"],
      ["commit", 4_000, "run_commands"],
    ]);
    expect(p.deliveries.map((d) => d.deliveryKey)).toEqual([
      `cline|${ROOT}|lead|t1|commit|0`,
      `cline|${ROOT}|lead|t1|pull_request|0`,
      `cline|${ROOT}|lead|t2|commit|0`,
    ]);
  });
});

describe("CLI 3.x commits: the real CLI 3.0.65 (fixtures/cline/commit)", () => {
  it("git commit succeeded, gh pr create failed (exit 127): one commit, no pull request", () => {
    const dir = "fixtures/cline/commit/home/.cline/data/sessions";
    const id = readdirSync(dir)[0] as string;
    const path = join(dir, id, `${id}.messages.json`);
    const p = parseMessagesDocument(scanBuffer(readFileSync(path), messagesDocumentSchema), path, {});
    expect(p.deliveries.map((d) => [d.kind, d.toolName])).toEqual([["commit", "run_commands"]]);
    // The agent's own check: `git log --oneline | wc -l` answered 1 (one commit in the workspace).
    expect(readFileSync(path, "utf8")).toContain('"result": "1\\n"');
    expect(p.sessionStarts.map((s) => s.startType)).toEqual(["new"]);
    expect(p.activeTime.length).toBeGreaterThan(0);
  });
});

describe("CLI 3.x active time and session start", () => {
  it("a prompt closes a user gap; responses and results agent gaps; idle gaps count nothing", () => {
    const p = parse([
      prompt("u1", 1_000),
      run("a1", 2_000, "t1", ["ls"]),
      result("r1", 2_500, "t1", [ok("ls")]),
      text("a2", 3_000),
      prompt("u2", 20_000),
      text("a3", 21_000),
      prompt("u3", 21_000 + IDLE_CUTOFF_MS.user + 1),
      text("a4", 21_000 + IDLE_CUTOFF_MS.user + 2),
    ]);
    expect(gapsOf(p.activeTime).map((g) => [g.startMs, g.durationMs, g.type])).toEqual([
      [1_000, 1_000, "agent"],
      [2_000, 500, "agent"],
      [2_500, 500, "agent"],
      [3_000, 17_000, "user"],
      [20_000, 1_000, "agent"],
      [21_000 + IDLE_CUTOFF_MS.user + 1, 1, "agent"],
    ]);
    expect(p.sessionStarts.map((s) => [s.startType, s.timestampMs, s.model])).toEqual([
      ["new", 1_000, "mock-model"],
    ]);
  });

  it("results stored out of ts order never count a stretch twice", () => {
    const p = parse([
      prompt("u1", 1_000),
      run("a1", 2_000, "t1", ["sleep 5"]),
      result("r1", 7_000, "t1", [ok("1")]),
      result("r2", 4_000, "t1", [ok("2")]),
      text("a2", 8_000),
    ]);
    expect(gapsOf(p.activeTime).reduce((a, g) => a + g.durationMs, 0)).toBe(7_000);
  });

  it("a sub-agent's or teammate's document has no timeline and no start (it runs inside the lead's call)", () => {
    const msgs = [prompt("u1", 1_000), text("a1", 2_000), prompt("u2", 3_000), text("a2", 4_000)];
    for (const file of ["agent_1796_abc.messages.json", "helper__EWeCtt.messages.json"]) {
      const p = parse(msgs, `/s/${ROOT}/${file}`);
      expect(p.agent).not.toBe("lead");
      expect(p.activeTime).toEqual([]);
      expect(p.sessionStarts).toEqual([]);
    }
  });

  it("the real resumed session (cline --id): one start, `new` (a resume is stored as a follow-up prompt)", () => {
    const dir = "fixtures/cline/resumed/home/.cline/data/sessions/1796023857554_qm0q0";
    const file = readdirSync(dir).find((f) => f === "1796023857554_qm0q0.messages.json") as string;
    const path = join(dir, file);
    const p = parseMessagesDocument(scanBuffer(readFileSync(path), messagesDocumentSchema), path, {});
    expect(p.sessionStarts.map((s) => s.startType)).toEqual(["new"]);
    // The resume's prompt closes a user gap.
    expect(gapsOf(p.activeTime).filter((g) => g.type === "user").length).toBe(1);
  });
});
