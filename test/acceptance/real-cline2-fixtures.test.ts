/**
 * Acceptance on fixtures recorded with the REAL cline@2.18.0 (the legacy core's task format,
 * fixtures/harness/task-format.ts) against the mock LLM: every final request is one event whose
 * components follow the provider's rule (docs/cline-format.md §15.5) from what the mock sent, the
 * tools between requests are attributed to the request before them, and nothing counts twice.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TASK_FIXTURES_DIR, type TaskGroundTruth } from "../../fixtures/harness/task-format.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import type { Observation } from "../../src/adapter/types.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function collect(scenario: string) {
  const home = mkdtempSync(join(tmpdir(), `cline2-${scenario}-`));
  dirs.push(home);
  cpSync(join(TASK_FIXTURES_DIR, scenario, "data"), join(home, ".cline", "data"), { recursive: true });
  const adapter = createClineTasksAdapter(
    taskRootCandidates({ home, platform: "linux", env: {}, cwd: home }),
  );
  const d = await adapter.discover();
  const obs: Observation[] = [];
  for (const s of d.sources) obs.push(await adapter.collectIncremental(s, undefined));
  const read = obs.flatMap((o) => (o.status === "read" ? [o] : []));
  expect(read).toHaveLength(obs.length);
  const gt = JSON.parse(
    readFileSync(join(TASK_FIXTURES_DIR, scenario, "ground-truth.json"), "utf8"),
  ) as TaskGroundTruth;
  return {
    gt,
    events: read.flatMap((o) => o.events).sort((a, b) => a.timestampMs - b.timestampMs),
    calls: read.flatMap((o) => o.toolCalls),
    problems: [...d.problems, ...read.flatMap((o) => o.problems)],
  };
}

interface OpenAiWire {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}
interface AnthropicWire {
  message_start: {
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
  };
  message_delta: { output_tokens: number };
}

/**
 * What the mock sent, as the four components by each wire's rule (docs/cline-format.md §15.5):
 * OpenAI's prompt_tokens include the cached tokens; Anthropic's input_tokens exclude both cache counts.
 */
function expected(gt: TaskGroundTruth) {
  return gt.records.map((r) => {
    if (r.protocol === "anthropic") {
      const w = r.wire as AnthropicWire;
      return {
        input: w.message_start.input_tokens,
        output: w.message_start.output_tokens + w.message_delta.output_tokens,
        cacheRead: w.message_start.cache_read_input_tokens,
        cacheWrite: w.message_start.cache_creation_input_tokens,
      };
    }
    const w = r.wire as OpenAiWire;
    const cached = w.prompt_tokens_details?.cached_tokens ?? 0;
    return { input: w.prompt_tokens - cached, output: w.completion_tokens, cacheRead: cached, cacheWrite: 0 };
  });
}

const scenarios = readdirSync(TASK_FIXTURES_DIR).sort();

describe("real cline@2.18.0 task-format fixtures", () => {
  it("has the recorded scenarios", () => {
    expect(scenarios).toEqual([
      "tasks-anthropic-cache",
      "tasks-cancel",
      "tasks-condense",
      "tasks-http400-retry",
      "tasks-plain",
    ]);
  });

  it.each(
    scenarios,
  )("%s: one event per request the mock answered with usage, by the provider's rule", async (name) => {
    const { gt, events } = await collect(name);
    expect(gt.unexpected).toEqual([]);
    expect(gt.runs.every((r) => r.status === 0)).toBe(true);
    expect(
      events.map((e) => ({
        input: e.input,
        output: e.output,
        cacheRead: e.cacheRead,
        cacheWrite: e.cacheWrite,
      })),
    ).toEqual(expected(gt));
    expect(new Set(events.map((e) => e.dedupKey)).size).toBe(events.length);
    const anthropic = gt.records.every((r) => r.protocol === "anthropic");
    expect(
      events.every((e) => e.provider === (anthropic ? "anthropic" : "openai") && e.client === "cli"),
    ).toBe(true);
    expect(events.every((e) => e.cacheBranch === (anthropic ? "additive" : "subset"))).toBe(true);
    // Cline prices Claude; cost 0 (no price for the mock model) is not a recorded price.
    expect(events.every((e) => (anthropic ? (e.recordedCost ?? 0) > 0 : e.recordedCost === null))).toBe(true);
  });

  it("tasks-plain: readFile and the command each paid by the request before them", async () => {
    const { events, calls } = await collect("tasks-plain");
    expect(
      calls.map((c) => [c.toolName, c.divisor, events.findIndex((e) => e.dedupKey === c.usageKey)]),
    ).toEqual([
      ["readFile", 1, 0],
      ["execute_command", 1, 1],
    ]);
  });

  it("tasks-http400-retry: the failed attempt has no event of its own", async () => {
    const { events, gt } = await collect("tasks-http400-retry");
    expect(gt.records).toHaveLength(1);
    expect(events).toHaveLength(1);
  });

  it("tasks-cancel: the request interrupted by SIGINT ({request} only) is no event; the one before pays the command", async () => {
    const { events, calls, problems } = await collect("tasks-cancel");
    expect(events).toHaveLength(1);
    expect(calls.map((c) => [c.toolName, c.usageKey === events[0]?.dedupKey])).toEqual([
      ["execute_command", true],
    ]);
    // In flight: neither counted nor checked against taskHistory.json.
    expect(problems).toEqual([]);
  });

  it("tasks-condense: the summarize request is an ordinary request, and pays its summarizeTask tool", async () => {
    const { events, calls } = await collect("tasks-condense");
    expect(events).toHaveLength(3);
    expect(calls.map((c) => [c.toolName, events.findIndex((e) => e.dedupKey === c.usageKey)])).toEqual([
      ["execute_command", 0],
      ["summarizeTask", 1],
    ]);
  });

  it("taskHistory.json's totals are never added; cline 2.18.0 leaves the last request out of them", async () => {
    const { problems, events } = await collect("tasks-plain");
    expect(problems.map((p) => p.code)).toEqual(["history-mismatch"]);
    expect(problems[0]?.detail).toContain("tokensIn: requests 690, taskHistory 340");
    expect(events.reduce((s, e) => s + e.input + e.cacheRead, 0)).toBe(690);
  });
});
