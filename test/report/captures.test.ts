import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CaptureRow } from "../../src/ledger/ledger.ts";
import {
  buildCapturesReport,
  type CapturesReport,
  orderStages,
  renderCapturesTable,
} from "../../src/report/captures.ts";
import { captureDirOf, expectedCaptures, homeOf } from "../adapter/cline/captures/helpers.ts";
import { runCli } from "../helpers/cli.ts";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "report-captures-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capturesJson(args: string[], env: Record<string, string>): CapturesReport {
  const r = runCli(["report", "--captures", "--json", ...args], env);
  if (r.status !== 0) throw new Error(`report failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as CapturesReport;
}

describe("cline-otel report --captures on the real CLI's captures", () => {
  for (const scenario of ["captures", "captures-full"]) {
    it(`${scenario}: every iteration's stage sizes are the records' numbers, growth their differences`, () => {
      const env = {
        HOME: homeOf(scenario),
        CLINE_CAPTURE_DIR: captureDirOf(scenario),
        CLINE_OTEL_STATE_DIR: join(dir, `state-${scenario}`),
      };
      const report = capturesJson([], env);
      const want = expectedCaptures(scenario);
      expect(report.stages).toEqual(["ai_sdk_prompt", "wire_request"]);
      expect(report.sessions).toHaveLength(1);
      const [session] = report.sessions;
      expect(session?.sessionId).toBe(want[0]?.sessionId);
      expect(session?.project).toBe(`/tmp/cline-otel-fixture/${scenario}/ws`);
      expect(session?.runs).toHaveLength(1);
      const run = session?.runs[0];
      expect(run).toMatchObject({ agent: "lead", agentId: want[0]?.agentId, runId: want[0]?.runId });
      expect(run?.iterations.map((it) => it.iteration)).toEqual([1, 2, 3]);
      for (const stage of ["ai_sdk_prompt", "wire_request"]) {
        const recs = want.filter((w) => w.stage === stage).sort((a, b) => a.iteration - b.iteration);
        recs.forEach((w, i) => {
          const prev = recs[i - 1];
          expect(run?.iterations[i]?.stages[stage]).toEqual({
            captures: 1,
            retries: 0,
            estimatedTokens: w.estimatedTokens,
            payloadBytes: w.payloadBytes,
            messageCount: w.messageCount,
            messageTokens: w.messageTokens,
            toolResults: w.toolResults,
            reasoningBlocks: w.reasoningBlocks,
            growthTokens: prev === undefined ? null : w.estimatedTokens - prev.estimatedTokens,
            growthBytes: prev === undefined ? null : w.payloadBytes - prev.payloadBytes,
          });
        });
        const t = report.totals.byStage[stage];
        expect(t).toEqual({
          captures: recs.length,
          retries: 0,
          estimatedTokens: recs.reduce((a, w) => a + w.estimatedTokens, 0),
          payloadBytes: recs.reduce((a, w) => a + w.payloadBytes, 0),
        });
      }
      // Collected once: a second report reads nothing new and shows the same.
      expect(capturesJson([], env)).toEqual(report);
    });
  }

  it("the table shows each stage's tokens, bytes and growth per iteration", () => {
    const env = {
      HOME: homeOf("captures"),
      CLINE_OTEL_STATE_DIR: join(dir, "state-table"),
    };
    const r = runCli(["report", "--captures", "--capture-dir", captureDirOf("captures")], env);
    expect(r.status, r.stderr).toBe(0);
    const want = expectedCaptures("captures").filter((w) => w.stage === "wire_request");
    const [i1, i2] = want.sort((a, b) => a.iteration - b.iteration);
    expect(r.stdout).toContain("ai_sdk_prompt tokens");
    expect(r.stdout).toContain("wire_request tokens");
    expect(r.stdout).toContain((i1?.estimatedTokens ?? 0).toLocaleString("en-US"));
    expect(r.stdout).toContain(
      `+${((i2?.estimatedTokens ?? 0) - (i1?.estimatedTokens ?? 0)).toLocaleString("en-US")}`,
    );
    // The plain report still works and counted the messages surface as before.
    const usage = runCli(["report", "--json", "--no-collect"], env);
    expect(JSON.parse(usage.stdout).totals.events).toBe(3);
  });

  it("`run --once` (the daemon's collection) collects captures too", () => {
    const env = {
      HOME: homeOf("captures"),
      CLINE_OTEL_CAPTURE_DIR: captureDirOf("captures"),
      CLINE_OTEL_STATE_DIR: join(dir, "state-run"),
    };
    const run = runCli(["run", "--once"], env);
    expect(run.status, run.stderr).toBe(0);
    const report = capturesJson(["--no-collect"], env);
    expect(report.totals.captures).toBe(expectedCaptures("captures").length);
  });

  it("without captures: an explanation, not an error", () => {
    const env = { HOME: join(dir, "nohome"), CLINE_OTEL_STATE_DIR: join(dir, "state-none") };
    const r = runCli(["report", "--captures"], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("No provider-request captures");
    expect(capturesJson(["--no-collect"], env)).toEqual({
      stages: [],
      sessions: [],
      compactionSummarizer: { captures: 0, groups: [], sessionId: null },
      totals: { captures: 0, byStage: {} },
    });
  });
});

let nextId = 1;
function row(over: Partial<CaptureRow>): CaptureRow {
  return {
    id: nextId++,
    captureKey: `k${nextId}`,
    captureId: "c",
    stage: "ai_sdk_prompt",
    seq: 1,
    attempt: 1,
    mode: "summary",
    sessionId: "s1",
    agent: "lead",
    agentId: "agent_l",
    conversationId: "conv",
    runId: "run_1",
    iteration: 1,
    project: "/p",
    model: "m",
    provider: "p",
    tsMs: 1000,
    payloadBytes: 3000,
    estimatedTokens: 1000,
    messageCount: 1,
    messageBytes: 10,
    messageTokens: 4,
    roleSystem: 0,
    roleUser: 1,
    roleAssistant: 0,
    roleTool: 0,
    roleOther: 0,
    toolResults: 0,
    reasoningBlocks: 0,
    ...over,
  };
}

describe("buildCapturesReport", () => {
  it("a stage captured again in one iteration: the last record counts, all are counted", () => {
    const r = buildCapturesReport([
      row({ stage: "wire_request", seq: 1, estimatedTokens: 500 }),
      row({ stage: "wire_request", seq: 2, attempt: 2, estimatedTokens: 510 }),
      row({ stage: "wire_request", iteration: 2, estimatedTokens: 700 }),
    ]);
    const its = r.sessions[0]?.runs[0]?.iterations;
    expect(its?.[0]?.stages.wire_request).toMatchObject({ captures: 2, retries: 1, estimatedTokens: 510 });
    expect(its?.[1]?.stages.wire_request).toMatchObject({ growthTokens: 190 });
    expect(r.totals.byStage.wire_request).toMatchObject({ captures: 3, retries: 1, estimatedTokens: 1710 });
  });

  it("growth is per run and stage, skipping iterations the stage is missing from; no iteration sorts last", () => {
    const r = buildCapturesReport([
      row({ iteration: 3, estimatedTokens: 1300, tsMs: 3 }),
      row({ iteration: 1, estimatedTokens: 1000, tsMs: 1 }),
      row({ iteration: 2, stage: "wire_request", estimatedTokens: 1500, tsMs: 2 }),
      row({ iteration: null, estimatedTokens: 1400, tsMs: 4 }),
    ]);
    const its = r.sessions[0]?.runs[0]?.iterations ?? [];
    expect(its.map((i) => i.iteration)).toEqual([1, 2, 3, null]);
    expect(its[2]?.stages.ai_sdk_prompt?.growthTokens).toBe(300);
    expect(its[1]?.stages.wire_request?.growthTokens).toBeNull();
    expect(its[3]?.stages.ai_sdk_prompt?.growthTokens).toBe(100);
  });

  it("sub-agents are their own runs; sessions and runs in time order", () => {
    const r = buildCapturesReport([
      row({ sessionId: "late", tsMs: 50 }),
      row({ agentId: "agent_sub", agent: "subagent", runId: "run_2", tsMs: 20, estimatedTokens: 9 }),
      row({ tsMs: 10 }),
    ]);
    expect(r.sessions.map((s) => s.sessionId)).toEqual(["s1", "late"]);
    expect(r.sessions[0]?.runs.map((x) => [x.agent, x.runId])).toEqual([
      ["lead", "run_1"],
      ["subagent", "run_2"],
    ]);
    expect(r.sessions[0]?.runs[1]?.iterations[0]?.stages.ai_sdk_prompt?.growthTokens).toBeNull();
  });

  it("stages in pipeline order, unknown ones after", () => {
    expect(orderStages(["wire_request", "zeta", "ai_sdk_prompt", "pre_build_for_api", "alpha"])).toEqual([
      "pre_build_for_api",
      "ai_sdk_prompt",
      "wire_request",
      "alpha",
      "zeta",
    ]);
  });

  it("renders retries and growth signs", () => {
    const text = renderCapturesTable(
      buildCapturesReport([
        row({ seq: 1, estimatedTokens: 2000 }),
        row({ seq: 2, estimatedTokens: 2000 }),
        row({ iteration: 2, estimatedTokens: 1500, payloadBytes: 4500 }),
      ]),
    );
    expect(text).toContain("2,000 (×2)");
    expect(text).toContain("-500");
    expect(text).toContain("+1,500");
  });
});
