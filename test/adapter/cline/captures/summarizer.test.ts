/**
 * Captures of the agentic compaction summarizer (docs/cline-format.md §14) are not retries and have no
 * session: the named rule, the real CLI's captures (compaction-agentic: 10 loop requests and 2
 * summaries sharing one captureId as attempts 1 and 2), and what report and metrics make of them.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createClineSurfaces } from "../../../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../../../src/adapter/cline/captures/paths.ts";
import {
  capturePurpose,
  isCaptureRetry,
  isCompactionSummarizerCapture,
  type SummarizerCaptureShape,
} from "../../../../src/adapter/cline/captures/summarizer.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { runPass } from "../../../../src/collector/pass.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import { buildCapturesReport, renderCapturesTable } from "../../../../src/report/captures.ts";
import { captureDirOf, expectedCaptures, FIXTURES, homeOf } from "./helpers.ts";

const work = mkdtempSync(join(tmpdir(), "summarizer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SUMMARY: SummarizerCaptureShape = {
  captureId: "cap_ed85bcfc744fa576",
  sessionId: "",
  runId: "",
  iteration: null,
  messageCount: 1,
  userMessages: 1,
};

describe("isCompactionSummarizerCapture", () => {
  it("matches a summarizer record", () => {
    expect(isCompactionSummarizerCapture(SUMMARY)).toBe(true);
    expect(capturePurpose(SUMMARY)).toBe("compaction-summarizer");
  });

  it.each([
    ["a session id", { sessionId: "1796_x" }],
    ["a run id", { runId: "run_1" }],
    ["an iteration", { iteration: 3 }],
    ["a run's captureId", { captureId: "cap_run_x_1_ed85bcfc744fa576" }],
    ["two messages", { messageCount: 2 }],
    ["no user message", { userMessages: 0 }],
  ])("does not match a record with %s", (_, over) => {
    expect(isCompactionSummarizerCapture({ ...SUMMARY, ...over })).toBe(false);
  });

  it("a summarizer's attempt 2 is not a retry; a loop request's attempt 2 is", () => {
    expect(isCaptureRetry({ ...SUMMARY, attempt: 2 })).toBe(false);
    expect(isCaptureRetry({ ...SUMMARY, sessionId: "s", runId: "r", iteration: 1, attempt: 2 })).toBe(true);
    expect(isCaptureRetry({ ...SUMMARY, sessionId: "s", runId: "r", iteration: 1, attempt: 1 })).toBe(false);
  });

  it("no capture of the other real-CLI fixtures is a summarizer (they carry session, run and iteration)", () => {
    for (const scenario of ["captures", "captures-full"]) {
      for (const c of expectedCaptures(scenario)) {
        const shape = {
          captureId: c.captureId,
          sessionId: c.sessionId ?? "",
          runId: c.runId ?? "",
          iteration: c.iteration ?? null,
          messageCount: c.messageCount,
          userMessages: c.roleCounts.user ?? 0,
        };
        expect(isCompactionSummarizerCapture(shape), c.file).toBe(false);
      }
    }
  });
});

describe("the real CLI's summarizer captures (compaction-agentic)", async () => {
  const root = join(work, "agentic");
  cpSync(homeOf("compaction-agentic"), join(root, "home"), { recursive: true });
  const captureDir = join(root, "captures");
  cpSync(captureDirOf("compaction-agentic"), captureDir, { recursive: true });
  const cline = resolveClinePaths({}, {}, join(root, "home"));
  const ledger = Ledger.open(join(root, "state"));
  await runPass(createClineSurfaces(cline, resolveCaptureDirs({ captureDir }, {}, cline)), ledger);
  const rows = ledger.captureRows();
  const series = ledger.captureSeries();
  const delta = ledger.captureDelta(0, ledger.maxCaptureId());
  ledger.close();
  const files = readdirSync(join(FIXTURES, "compaction-agentic", "captures"));

  it("reads every capture; the two summaries share one captureId as attempts 1 and 2", () => {
    expect(rows).toHaveLength(files.length);
    const summaries = rows.filter((r) => r.sessionId === "");
    expect(summaries.map((r) => r.attempt).sort()).toEqual([1, 2]);
    expect(new Set(summaries.map((r) => r.captureId)).size).toBe(1);
  });

  it("report --captures: the loop's session without retries, the summaries apart and of no session", () => {
    const report = buildCapturesReport(rows);
    const loop = rows.find((r) => r.sessionId !== "")?.sessionId;
    expect(loop).toBeDefined();
    expect(report.sessions.map((s) => s.sessionId)).toEqual([loop]);
    expect(report.sessions.some((s) => s.sessionId === "")).toBe(false);
    expect(report.compactionSummarizer).toMatchObject({ captures: 2, sessionId: null });
    expect(report.compactionSummarizer.groups).toEqual([
      expect.objectContaining({ stage: "ai_sdk_prompt", captures: 2, maxAttempt: 2, model: "mock-model" }),
    ]);
    expect(report.totals.captures).toBe(files.length);
    expect(Object.values(report.totals.byStage).reduce((a, t) => a + t.retries, 0)).toBe(0);
    const text = renderCapturesTable(report);
    expect(text).toContain("Compaction summarizer requests");
    expect(text).toContain("Not retries");
    expect(text).not.toContain("Session   ");
  });

  it("metrics: cline.request.retries counts none of them (cumulative series and delta window)", () => {
    expect(series.reduce((a, s) => a + s.retries, 0)).toBe(0);
    expect(delta.reduce((a, s) => a + s.retries, 0)).toBe(0);
    // ...while they are still captures (of no session), counted as such.
    expect(series.filter((s) => s.sessionId === "").reduce((a, s) => a + s.captures, 0)).toBe(2);
  });
});
