/**
 * Captures of the agentic compaction summarizer (docs/cline-format.md §14) are not retries and have no
 * session: the named rule, the real CLI's captures (compaction-agentic: 10 loop requests and 2
 * summaries sharing one captureId as attempts 1 and 2; compaction-agentic-wire: the same with every
 * request captured at wire_request too), and what report and metrics make of them.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
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
import { captureDirOf, expectedCaptures, homeOf } from "./helpers.ts";

const work = mkdtempSync(join(tmpdir(), "summarizer-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SUMMARY: SummarizerCaptureShape = {
  captureId: "cap_ed85bcfc744fa576",
  sessionId: "",
  runId: "",
  iteration: null,
  messageCount: 1,
  userMessages: 1,
  systemMessages: 0,
};

/** The same request at wire_request: the HTTP body carries the system prompt as a message. */
const WIRE_SUMMARY: SummarizerCaptureShape = { ...SUMMARY, messageCount: 2, systemMessages: 1 };

describe("isCompactionSummarizerCapture", () => {
  it("matches a summarizer record, at ai_sdk_prompt and on the wire (with its system prompt)", () => {
    expect(isCompactionSummarizerCapture(SUMMARY)).toBe(true);
    expect(capturePurpose(SUMMARY)).toBe("compaction-summarizer");
    expect(isCompactionSummarizerCapture(WIRE_SUMMARY)).toBe(true);
    expect(capturePurpose(WIRE_SUMMARY)).toBe("compaction-summarizer");
  });

  it.each([
    ["a session id", { sessionId: "1796_x" }],
    ["a run id", { runId: "run_1" }],
    ["an iteration", { iteration: 3 }],
    ["a run's captureId", { captureId: "cap_run_x_1_ed85bcfc744fa576" }],
    ["two messages", { messageCount: 2 }],
    ["no user message", { userMessages: 0 }],
    ["two user messages", { messageCount: 2, userMessages: 2 }],
    ["only a system message", { userMessages: 0, systemMessages: 1 }],
    ["two system messages", { messageCount: 3, systemMessages: 2 }],
    ["an assistant message beside system and user", { messageCount: 3, systemMessages: 1 }],
  ])("does not match a record with %s", (_, over) => {
    expect(isCompactionSummarizerCapture({ ...SUMMARY, ...over })).toBe(false);
  });

  it.each([
    ["a session id", { sessionId: "1796_x" }],
    ["a run id", { runId: "run_1" }],
    ["an iteration", { iteration: 3 }],
    ["a run's captureId", { captureId: "cap_run_x_1_ed85bcfc744fa576" }],
  ])("does not match a wire record with %s", (_, over) => {
    expect(isCompactionSummarizerCapture({ ...WIRE_SUMMARY, ...over })).toBe(false);
  });

  it("a summarizer's attempt 2 is not a retry; a loop request's attempt 2 is", () => {
    expect(isCaptureRetry({ ...SUMMARY, attempt: 2 })).toBe(false);
    expect(isCaptureRetry({ ...WIRE_SUMMARY, attempt: 2 })).toBe(false);
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
          systemMessages: c.roleCounts.system ?? 0,
        };
        expect(isCompactionSummarizerCapture(shape), c.file).toBe(false);
      }
    }
  });
});

/**
 * The real CLI's captures of a run with two agentic compactions: without wire capture
 * (compaction-agentic: 10 loop requests, 2 summaries) and with it (compaction-agentic-wire: each of
 * those also as a wire_request record, the summarizer's carrying its system prompt as a message).
 * Which files are the summarizer's is read from the files themselves: no sessionId in their
 * correlation (plain JSON.parse, independent of the rule).
 */
describe.each([
  "compaction-agentic",
  "compaction-agentic-wire",
])("the real CLI's summarizer captures (%s)", async (scenario) => {
  const root = join(work, scenario);
  cpSync(homeOf(scenario), join(root, "home"), { recursive: true });
  const captureDir = join(root, "captures");
  cpSync(captureDirOf(scenario), captureDir, { recursive: true });
  const cline = resolveClinePaths({}, {}, join(root, "home"));
  const ledger = Ledger.open(join(root, "state"));
  await runPass(createClineSurfaces(cline, resolveCaptureDirs({ captureDir }, {}, cline)), ledger);
  const rows = ledger.captureRows();
  const series = ledger.captureSeries();
  const delta = ledger.captureDelta(0, ledger.maxCaptureId());
  ledger.close();
  const files = expectedCaptures(scenario);
  const summaries = files.filter((f) => f.sessionId === undefined);
  const loop = files.filter((f) => f.sessionId !== undefined);
  const stages = [...new Set(summaries.map((f) => f.stage))].sort();

  it("the fixture: two summaries per stage, one captureId, attempts 1 and 2", () => {
    expect(stages).toEqual(
      scenario.endsWith("-wire") ? ["ai_sdk_prompt", "wire_request"] : ["ai_sdk_prompt"],
    );
    for (const stage of stages) {
      expect(
        summaries
          .filter((f) => f.stage === stage)
          .map((f) => f.attempt)
          .sort(),
      ).toEqual([1, 2]);
    }
    expect(new Set(summaries.map((f) => f.captureId)).size).toBe(1);
    expect(new Set(loop.map((f) => f.sessionId)).size).toBe(1);
  });

  it("reads every capture; the summaries are the rows of no session", () => {
    expect(rows).toHaveLength(files.length);
    expect(rows.filter((r) => r.sessionId === "")).toHaveLength(summaries.length);
  });

  it("report --captures: the loop's session without retries, the summaries apart and of no session", () => {
    const report = buildCapturesReport(rows);
    expect(report.sessions.map((s) => s.sessionId)).toEqual([loop[0]?.sessionId]);
    expect(report.sessions[0]?.captures).toBe(loop.length);
    expect(report.compactionSummarizer).toMatchObject({ captures: summaries.length, sessionId: null });
    expect(report.compactionSummarizer.groups).toEqual(
      stages.map((stage) =>
        expect.objectContaining({ stage, captures: 2, maxAttempt: 2, model: "mock-model" }),
      ),
    );
    expect(report.totals.captures).toBe(files.length);
    expect(Object.values(report.totals.byStage).reduce((a, t) => a + t.retries, 0)).toBe(0);
    const text = renderCapturesTable(report);
    expect(text).toContain("Compaction summarizer requests");
    expect(text).toContain("Not retries");
    expect(text).not.toMatch(/^Session {3}/m);
    expect(text).not.toContain("(×2)");
  });

  it("metrics: cline.request.retries counts none of them (cumulative series and delta window)", () => {
    expect(series.reduce((a, s) => a + s.retries, 0)).toBe(0);
    expect(delta.reduce((a, s) => a + s.retries, 0)).toBe(0);
    // ...while they are still captures (of no session), counted as such.
    expect(series.filter((s) => s.sessionId === "").reduce((a, s) => a + s.captures, 0)).toBe(
      summaries.length,
    );
  });
});
