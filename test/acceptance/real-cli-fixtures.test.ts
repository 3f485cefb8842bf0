/**
 * Acceptance against data written by the REAL Cline CLI (cline@3.0.65, run against a
 * scripted mock LLM by fixtures/harness): for every scenario, `report --json` must
 * equal the usage the mock returned, per component, after the seed's cache rule; for every
 * scenario with captures, `report --captures --json` must place each capture file exactly.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { applyCacheRule } from "../../src/adapter/cline/cache-rule.ts";
import type { CapturesReport } from "../../src/report/captures.ts";
import { ROOT, reportJson, runCli } from "../helpers/cli.ts";

interface GroundTruth {
  scenario: string;
  env: Record<string, string>;
  layout: { captureDir?: string };
  totals: { requests: number; cost?: number };
  records: {
    expected: {
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    };
  }[];
}

const FIXTURES = join(ROOT, "fixtures", "cline");
const PATH_VARS = new Set([
  "HOME",
  "CLINE_DIR",
  "CLINE_DATA_DIR",
  "CLINE_SESSION_DATA_DIR",
  "CLINE_DB_DATA_DIR",
]);
const scenarios = existsSync(FIXTURES)
  ? readdirSync(FIXTURES).filter((s) => existsSync(join(FIXTURES, s, "ground-truth.json")))
  : [];

const work = mkdtempSync(join(tmpdir(), "real-cli-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function setUp(scenario: string): { gt: GroundTruth; env: Record<string, string> } {
  const gt = JSON.parse(readFileSync(join(FIXTURES, scenario, "ground-truth.json"), "utf8")) as GroundTruth;
  const root = join(work, scenario);
  if (!existsSync(root)) cpSync(join(FIXTURES, scenario), root, { recursive: true });
  const env: Record<string, string> = { CLINE_OTEL_STATE_DIR: join(work, `${scenario}.state`) };
  for (const [k, v] of Object.entries(gt.env)) if (PATH_VARS.has(k)) env[k] = join(root, v);
  return { gt, env };
}

/** A capture file read the plain way: whose session it names (none: a summarizer's) and its attempt. */
interface CaptureFile {
  readonly stage: string;
  readonly sessionId: string | undefined;
  readonly attempt: number;
}

function captureFiles(scenario: string, captureDir: string): CaptureFile[] {
  const dir = join(FIXTURES, scenario, captureDir);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".provider-request.json"))
    .map((f) => {
      const d = JSON.parse(readFileSync(join(dir, f), "utf8"));
      return { stage: d.captureStage, sessionId: d.correlation.sessionId, attempt: d.attempt };
    });
}

const captureScenarios = scenarios.filter((s) => {
  const gt = JSON.parse(readFileSync(join(FIXTURES, s, "ground-truth.json"), "utf8")) as GroundTruth;
  return gt.layout.captureDir !== undefined;
});

function expectedTotals(gt: GroundTruth) {
  const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, events: 0 };
  for (const r of gt.records) {
    const c = applyCacheRule(r.expected);
    t.input += c.input;
    t.output += c.output;
    t.cacheRead += c.cacheRead;
    t.cacheWrite += c.cacheWrite;
    t.events += 1;
  }
  return t;
}

describe("real Cline CLI fixtures", () => {
  it("exist (the harness has been run and its output committed)", () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(7);
  });

  for (const scenario of scenarios) {
    it(`${scenario}: report --json totals equal the usage the mock returned`, () => {
      const { gt, env } = setUp(scenario);
      const r = reportJson(env);
      const want = expectedTotals(gt);
      expect({
        input: r.totals.input,
        output: r.totals.output,
        cacheRead: r.totals.cacheRead,
        cacheWrite: r.totals.cacheWrite,
      }).toEqual({
        input: want.input,
        output: want.output,
        cacheRead: want.cacheRead,
        cacheWrite: want.cacheWrite,
      });
      // One assistant message with metrics is one event.
      expect(r.totals.events).toBe(gt.totals.requests);
      // Computed cost equals what Cline recorded for priced models; unknown elsewhere.
      if (gt.totals.cost !== undefined) {
        expect(Math.abs(r.totals.cost - gt.totals.cost) / gt.totals.cost).toBeLessThan(1e-9);
        expect(r.totals.unpricedEvents).toBe(0);
      } else {
        expect(r.totals.unpricedEvents).toBe(r.totals.events);
      }
      // Collecting again finds nothing new: the persisted ids collapse every re-read.
      expect(reportJson(env).totals).toEqual(r.totals);
    });
  }

  it("the fixtures with captures include one with wire captures of compaction summaries", () => {
    expect(captureScenarios).toEqual(
      expect.arrayContaining(["captures", "captures-full", "compaction-agentic", "compaction-agentic-wire"]),
    );
  });

  for (const scenario of captureScenarios) {
    it(`${scenario}: report --captures puts every capture file under its session or with the summarizer's`, () => {
      const { gt, env } = setUp(scenario);
      const captureDir = join(work, scenario, gt.layout.captureDir ?? "");
      const r = runCli(["report", "--captures", "--json", "--capture-dir", captureDir], env);
      expect(r.status, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as CapturesReport;
      const files = captureFiles(scenario, gt.layout.captureDir ?? "");
      const sessionIds = [...new Set(files.flatMap((f) => (f.sessionId === undefined ? [] : [f.sessionId])))];
      // No session without an id: a capture that names no session is a compaction summary.
      expect(report.sessions.map((x) => x.sessionId).sort()).toEqual(sessionIds.sort());
      for (const x of report.sessions) {
        expect(x.captures).toBe(files.filter((f) => f.sessionId === x.sessionId).length);
      }
      const summaries = files.filter((f) => f.sessionId === undefined);
      expect(report.compactionSummarizer.captures).toBe(summaries.length);
      expect(report.compactionSummarizer.groups.map((g) => g.stage)).toEqual(
        [...new Set(summaries.map((f) => f.stage))].sort(),
      );
      expect(report.totals.captures).toBe(files.length);
      // Retries: loop requests captured again; a summarizer's attempts never are.
      const retries = Object.values(report.totals.byStage).reduce((a, t) => a + t.retries, 0);
      expect(retries).toBe(files.filter((f) => f.sessionId !== undefined && f.attempt > 1).length);
    });
  }

  it("multi-tool: several tool calls in one message share its tokens exactly", () => {
    const { env } = setUp("multi-tool");
    const r = reportJson(env, ["tool"]);
    const calls = r.rows.reduce((a, x) => a + (x.toolCalls as number), 0);
    expect(calls).toBeGreaterThanOrEqual(5);
    for (const k of ["input", "output", "cacheRead", "cacheWrite"] as const) {
      expect(r.rows.reduce((a, x) => a + (x[k] as number), 0)).toBeCloseTo(r.totals[k], 6);
    }
  });

  it("subagents and teammates: their documents count under their own agent, the lead's restated usage does not", () => {
    for (const [scenario, agent] of [
      ["subagents", "subagent"],
      ["teammate", "teammate"],
    ] as const) {
      const { env } = setUp(scenario);
      const r = reportJson(env, ["agent"]);
      const agents = r.rows.map((x) => x.agent);
      expect(agents).toContain("lead");
      expect(agents).toContain(agent);
    }
  });

  it("every event carries the project (cwd) the CLI ran in", () => {
    const { env } = setUp("openai-cached");
    const r = reportJson(env, ["project"]);
    expect(r.rows.map((x) => x.project)).toEqual(["/tmp/cline-otel-fixture/openai-cached/ws"]);
  });

  it.each(scenarios)("%s: every event is the CLI's (the sessions' source is `cli`)", (scenario) => {
    const { env } = setUp(scenario);
    const r = reportJson(env, ["client"]);
    expect(r.rows.map((x) => (x as { client?: string }).client)).toEqual(["cli"]);
  });
});
