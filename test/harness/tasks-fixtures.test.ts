import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expectedTaskEvents } from "../../fixtures/harness/ground-truth-subagent.ts";
import {
  type LoadedTaskGroundTruth,
  loadTaskGroundTruth,
  TASK_FIXTURES_DIR,
  taskFixtureScenarios,
  uiToolsOf,
} from "../../fixtures/harness/ground-truth-tasks.ts";
import type { AnthropicWireUsage, OpenAiWireUsage } from "../../fixtures/harness/mock-llm.ts";
import { TASK_SCENARIOS } from "../../fixtures/harness/scenarios-tasks.ts";
import type { UsageEvent } from "../../src/adapter/types.ts";
import { collectTasks } from "./tasks-collect.ts";

/**
 * The committed task-format fixtures (real Cline CLI 2.18.0, fixtures/harness/README.md) read by
 * the task adapter and compared with what the mock sent: per request the four components, the
 * provider's rule, the tool names; a cancelled request not counted, a resume not double counted,
 * a retried request counted once, a use_subagents call's sub-agents counted once (their sums).
 */

const collect = collectTasks;

// The format's scenarios; the per-provider fixtures (`<provider>-cache`) are tasks-providers.test.ts's.
const formatScenarios = new Set(TASK_SCENARIOS.map((s) => s.name));
const scenarios = taskFixtureScenarios().filter((n) => formatScenarios.has(n));
const gts = new Map<string, LoadedTaskGroundTruth>(scenarios.map((n) => [n, loadTaskGroundTruth(n)]));
const gtOf = (n: string): LoadedTaskGroundTruth => {
  const gt = gts.get(n);
  if (!gt) throw new Error(`no fixture ${n}`);
  return gt;
};

const scratch: string[] = [];
afterEach(() => {
  for (const d of scratch.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("task-format fixtures of the real Cline CLI 2.18.0", () => {
  it("exist for every task scenario", () => {
    expect(scenarios).toEqual(TASK_SCENARIOS.map((s) => s.name).sort());
  });

  it.each(scenarios)("%s: one event per response with usage, the four components as sent", async (name) => {
    const gt = gtOf(name);
    const { events, problems } = await collect(join(gt.fixtureRoot, gt.dataDir));
    expect(problems).toEqual([]);
    // A lead response is one event; a use_subagents call's sub-agent responses are one (their sums).
    const want = expectedTaskEvents(gt.records);
    expect(events).toHaveLength(want.length);
    expect(gt.records.length).toBeGreaterThan(0);
    want.forEach((r, i) => {
      const e = events[i] as UsageEvent;
      expect([e.input, e.output, e.cacheRead, e.cacheWrite], `${name} record ${i}`).toEqual([
        r.components.input,
        r.components.output,
        r.components.cacheRead,
        r.components.cacheWrite,
      ]);
      expect(e.input + e.output + e.cacheRead + e.cacheWrite).toBe(e.total);
      expect([e.model, e.provider, e.client]).toEqual([r.model, r.provider, "cli"]);
      expect(e.agent).toBe(r.subagent === true ? "subagent" : "lead");
      expect(e.dedupKey.startsWith("cline-tasks|")).toBe(true);
      // Cline's cost is kept to verify ours; 0 (an unpriced model) is no recorded cost.
      if (r.expectedCost !== undefined) expect(e.recordedCost).toBeCloseTo(r.expectedCost, 12);
      else expect(e.recordedCost).toBeNull();
    });
    const sum = (f: (e: UsageEvent) => number) => events.reduce((a, e) => a + f(e), 0);
    // taskHistory.json's lifetime totals agree (the adapter reports history-mismatch otherwise).
    expect(sum((e) => e.input + e.cacheRead + e.cacheWrite)).toBe(
      gt.provider === "openai"
        ? gt.totals.tokensIn
        : gt.totals.tokensIn + gt.totals.cacheReads + gt.totals.cacheWrites,
    );
    expect(sum((e) => e.output)).toBe(gt.totals.tokensOut);
    expect(new Set(events.map((e) => e.dedupKey)).size).toBe(events.length);
  });

  it.each(scenarios)("%s: the provider's rule on what the mock sent", (name) => {
    const gt = gtOf(name);
    for (const r of gt.records) {
      if (r.protocol === "openai") {
        // OpenAI-style tokensIn includes the cached tokens: input is the rest.
        const w = r.wire as OpenAiWireUsage;
        const cached = w.prompt_tokens_details?.cached_tokens ?? 0;
        expect(r.recorded.tokensIn).toBe(w.prompt_tokens);
        expect(r.components.input).toBe(w.prompt_tokens - cached);
        expect(r.components.output).toBe(w.completion_tokens);
      } else {
        // Anthropic's excludes them; Cline adds message_start's provisional output to the final one.
        const w = r.wire as AnthropicWireUsage;
        expect(r.recorded.tokensIn).toBe(w.message_start.input_tokens);
        expect(r.components.input).toBe(w.message_start.input_tokens);
        expect(r.components.cacheWrite).toBe(w.message_start.cache_creation_input_tokens);
        expect(r.components.output).toBe(w.message_delta.output_tokens + w.message_start.output_tokens);
      }
    }
  });

  it.each(scenarios)("%s: tool calls by request, 1/n each, names as Cline records them", async (name) => {
    const gt = gtOf(name);
    const { events, toolCalls } = await collect(join(gt.fixtureRoot, gt.dataDir));
    expectedTaskEvents(gt.records).forEach((r, i) => {
      const key = (events[i] as UsageEvent).dedupKey;
      const mine = toolCalls.filter((c) => c.usageKey === key);
      expect(
        mine.map((c) => c.toolName),
        `${name} record ${i}`,
      ).toEqual(uiToolsOf(r));
      for (const c of mine) expect(c.divisor).toBe(mine.length);
    });
    expect(toolCalls.every((c) => c.usageKey !== "")).toBe(true);
  });

  it("cover both protocols, a priced model, a command and several tool kinds", () => {
    const all = [...gts.values()];
    expect(all.some((g) => g.records.some((r) => (r.expectedCost ?? 0) > 0))).toBe(true);
    expect(new Set(all.map((g) => g.provider))).toEqual(new Set(["openai", "anthropic"]));
    const tools = new Set(all.flatMap((g) => g.records.flatMap((r) => uiToolsOf(r))));
    for (const t of ["readFile", "listFilesTopLevel", "newFileCreated", "searchFiles", "execute_command"])
      expect(tools).toContain(t);
  });

  it("retry-400: the refused request and its retry are ONE request, with the retry's usage", async () => {
    const gt = gtOf("retry-400");
    expect(gt.requestLog.map((r) => r.status)).toEqual([400, 200, 200]);
    const { events } = await collect(join(gt.fixtureRoot, gt.dataDir));
    expect(events).toHaveLength(gt.httpRequests - 1);
    expect(events[0]?.cacheRead).toBe(gt.records[0]?.components.cacheRead);
  });

  /** Collect `before/` in a root, swap the final tree into the same root, collect again. */
  async function beforeThenAfter(name: string) {
    const gt = gtOf(name);
    const before = gt.before;
    if (!before) throw new Error(`${name} has no before/`);
    const dir = mkdtempSync(join(tmpdir(), "cline-tasks-fixture-"));
    scratch.push(dir);
    const data = join(dir, "data");
    cpSync(join(gt.fixtureRoot, before.dir, gt.dataDir), data, { recursive: true });
    const first = await collect(data);
    rmSync(data, { recursive: true });
    cpSync(join(gt.fixtureRoot, gt.dataDir), data, { recursive: true });
    const second = await collect(data);
    // The ledger keeps a key's first event (exactly once): what each pass emitted, first one wins.
    const ledger = new Map<string, UsageEvent>();
    for (const e of [...first.events, ...second.events])
      if (!ledger.has(e.dedupKey)) ledger.set(e.dedupKey, e);
    expect(
      [...ledger.values()].map((e) => [e.input, e.output, e.cacheRead, e.cacheWrite]),
      `${name}: the ledger after both passes`,
    ).toEqual(
      gt.records.map((r) => [
        r.components.input,
        r.components.output,
        r.components.cacheRead,
        r.components.cacheWrite,
      ]),
    );
    return { gt, before, first, second };
  }

  it("retry-400: during the retry's delay the failed entry (zeros, streaming_failed) waits; the retry's usage is counted", async () => {
    const { before, first, second } = await beforeThenAfter("retry-400");
    expect(before.when).toBe("failed stream");
    expect([before.records, before.failedStreams, before.inFlight]).toEqual([0, 1, 1]);
    expect(first.problems).toEqual([]);
    expect(first.events).toEqual([]);
    expect(second.events).toHaveLength(2);
  });

  it("anthropic-tools: mid-stream the entry holds message_start's counts (provisional output) and waits", async () => {
    const { gt, before, first } = await beforeThenAfter("anthropic-tools");
    expect(before.when).toBe("provisional usage");
    expect([before.records, before.inFlight]).toEqual([1, 1]);
    expect(first.problems).toEqual([]);
    expect(first.events).toHaveLength(1);
    // The streaming request's input and cache counts are already written: only its output is not final.
    const streaming = gt.records[1];
    expect(streaming?.components.output).toBeGreaterThan(1);
  });

  it("resume: the resumed task keeps its first requests; nothing counted twice", async () => {
    const { gt, before, first, second } = await beforeThenAfter("resume");
    expect(gt.taskIds).toHaveLength(1);
    expect(first.problems).toEqual([]);
    expect(first.events).toHaveLength(before.records);
    expect(second.events).toHaveLength(gt.records.length);
    const keys = new Set([...first.events, ...second.events].map((e) => e.dedupKey));
    expect(keys.size).toBe(gt.records.length);
    for (const e of first.events) expect(second.events.find((x) => x.dedupKey === e.dedupKey)).toEqual(e);
    // The resume's user_feedback opens a second turn.
    expect(new Set(second.events.map((e) => e.turnId)).size).toBe(2);
  });

  it("cancel: the interrupted request stays request-only (not counted); the resume deletes it", async () => {
    const { gt, before, first, second } = await beforeThenAfter("cancel");
    expect(gt.runs[0]?.cancelled).toBe(true);
    expect(gt.requestLog.some((r) => r.outcome === "held")).toBe(true);
    expect(before.inFlight).toBe(1);
    // In flight: no history-mismatch either (taskHistory.json has only the counted request yet).
    expect(first.problems).toEqual([]);
    // Only the request before the held one; the in-flight entry is waiting, not a zero-token event.
    expect(first.events).toHaveLength(before.records);
    expect(first.events.every((e) => e.total > 0)).toBe(true);
    expect(second.events).toHaveLength(gt.records.length);
    const keys = new Set([...first.events, ...second.events].map((e) => e.dedupKey));
    expect(keys.size).toBe(gt.records.length);
  });

  it("condense: the summarize request is an ordinary request, counted once", async () => {
    const gt = gtOf("condense");
    expect(gt.args).toContain("--auto-condense");
    expect(gt.condensed?.length).toBeGreaterThan(0);
    const summarize = gt.records.findIndex((r) => r.tools.includes("summarize_task"));
    expect(summarize).toBeGreaterThan(0);
    const { events, toolCalls } = await collect(join(gt.fixtureRoot, gt.dataDir));
    expect(events).toHaveLength(gt.records.length);
    const key = events[summarize]?.dedupKey;
    expect(toolCalls.filter((c) => c.usageKey === key).map((c) => c.toolName)).toEqual(["summarizeTask"]);
  });

  it("subagent: each use_subagents call's sub-agents are ONE event of their sums, at the call's time", async () => {
    const gt = gtOf("subagent");
    const batches = gt.subagentBatches ?? [];
    expect(batches).toHaveLength(2);
    expect(gt.records.filter((r) => r.subagent === true)).toHaveLength(5);
    const { events, toolCalls } = await collect(join(gt.fixtureRoot, gt.dataDir));
    const sub = events.filter((e) => e.agent === "subagent");
    // openai: tokensIn includes the cached tokens, as in a request entry.
    expect(sub.map((e) => [e.input + e.cacheRead, e.output, e.cacheRead, e.cacheWrite])).toEqual(
      batches.map((b) => [b.tokensIn, b.tokensOut, b.cacheReads, b.cacheWrites]),
    );
    for (const e of sub) {
      expect(e.dedupKey).toMatch(/^cline-tasks\|.*\|subagents\|\d+\|0$/);
      expect(e.sessionId).toBe(gt.taskIds[0]);
      // Written when the call's sub-agents have all ended; started at the call's status message.
      expect(e.startMs).toBeLessThan(e.timestampMs);
      expect(e.endApproximate).toBe(false);
      expect(toolCalls.some((c) => c.usageKey === e.dedupKey)).toBe(false);
    }
    // The lead's request that called use_subagents carries that call (its status message).
    expect(toolCalls.filter((c) => c.toolName === "use_subagents")).toHaveLength(2);
  });

  it("subagent: the sums equal taskHistory.json's totals; without subagent_usage they fall short (reported)", async () => {
    const gt = gtOf("subagent");
    const data = join(gt.fixtureRoot, gt.dataDir);
    const history = JSON.parse(readFileSync(join(data, "state", "taskHistory.json"), "utf8")) as {
      tokensIn: number;
      tokensOut: number;
      cacheReads: number;
    }[];
    const h = history[0];
    const { events } = await collect(data);
    const sum = (f: (e: UsageEvent) => number) => events.reduce((a, e) => a + f(e), 0);
    expect([sum((e) => e.input + e.cacheRead), sum((e) => e.output), sum((e) => e.cacheRead)]).toEqual([
      h?.tokensIn,
      h?.tokensOut,
      h?.cacheReads,
    ]);
    // The same tree without its subagent_usage messages: history-mismatch, the tokens would be missed.
    const dir = mkdtempSync(join(tmpdir(), "cline-tasks-subagent-"));
    scratch.push(dir);
    cpSync(data, join(dir, "data"), { recursive: true });
    const ui = join(dir, "data", "tasks", gt.taskIds[0] ?? "", "ui_messages.json");
    const msgs = JSON.parse(readFileSync(ui, "utf8")) as { say?: string }[];
    writeFileSync(ui, JSON.stringify(msgs.filter((m) => m.say !== "subagent_usage")));
    const dropped = await collect(join(dir, "data"));
    expect(dropped.events.filter((e) => e.agent === "subagent")).toEqual([]);
    expect(dropped.problems.filter((p) => p.startsWith("history-mismatch"))).toHaveLength(1);
  });

  it("commit no secrets.json, globalState.json, logs or temp files, and stay small", () => {
    const files = readdirSync(TASK_FIXTURES_DIR, { recursive: true, encoding: "utf8" }).filter((f) =>
      statSync(join(TASK_FIXTURES_DIR, f)).isFile(),
    );
    const bad = files.filter((f) => /secrets\.json|globalState\.json|\/logs\/|\.tmp\.|\.log$/.test(f));
    expect(bad).toEqual([]);
    const size = files.reduce((a, f) => a + statSync(join(TASK_FIXTURES_DIR, f)).size, 0);
    expect(size).toBeLessThan(1_000_000);
    for (const n of scenarios)
      expect(existsSync(join(TASK_FIXTURES_DIR, n, "home/.cline/data/state/taskHistory.json"))).toBe(true);
  });
});
