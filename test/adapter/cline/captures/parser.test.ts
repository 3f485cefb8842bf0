import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCaptureRecord, timestampMs } from "../../../../src/adapter/cline/captures/parser.ts";
import { parseCaptureFileName } from "../../../../src/adapter/cline/captures/paths.ts";
import { captureRecordSchema } from "../../../../src/adapter/cline/captures/schema.ts";
import { scanBuffer, scanFile } from "../../../../src/scan/scanner.ts";
import { captureDirOf, captureRecord, expectedCaptures, type RecordSpec } from "./helpers.ts";

const NAME = { captureId: "cap_run_x_1_0123456789abcdef", stage: "ai_sdk_prompt", seq: 1 };
const FACTS = () => ({ project: "/work/ws", agent: "lead", client: "cli" });

function parse(rec: unknown, name = NAME) {
  const value = scanBuffer(Buffer.from(JSON.stringify(rec)), captureRecordSchema);
  return parseCaptureRecord(value, name, "/caps/x.json", FACTS);
}

function parseSpec(spec: RecordSpec, name = NAME) {
  return parse(captureRecord(spec), name);
}

describe("parseCaptureRecord on the real CLI's captures", () => {
  for (const scenario of ["captures", "captures-full"]) {
    it(`${scenario}: every number equals the record's own`, async () => {
      const want = expectedCaptures(scenario);
      expect(want).toHaveLength(6);
      for (const w of want) {
        const path = join(captureDirOf(scenario), w.file);
        const name = parseCaptureFileName(w.file);
        expect(name).toBeDefined();
        const { value } = await scanFile(path, captureRecordSchema);
        const { capture, problems } = parseCaptureRecord(
          value,
          name as NonNullable<typeof name>,
          path,
          FACTS,
        );
        expect(problems).toEqual([]);
        const r = w.roleCounts;
        expect(capture).toEqual({
          captureKey: `cline-capture|${w.captureId}|${w.stage}|${w.seq}`,
          captureId: w.captureId,
          stage: w.stage,
          seq: w.seq,
          attempt: w.attempt,
          mode: w.mode,
          sessionId: w.sessionId,
          agent: "lead",
          agentId: w.agentId,
          conversationId: expect.stringMatching(/^conv_/),
          runId: w.runId,
          iteration: w.iteration,
          model: w.model,
          provider: w.provider,
          project: "/work/ws",
          client: "cli",
          timestampMs: w.timestampMs,
          payloadBytes: w.payloadBytes,
          estimatedTokens: w.estimatedTokens,
          messageCount: w.messageCount,
          messageBytes: w.messageBytes,
          messageTokens: w.messageTokens,
          roles: {
            system: r.system ?? 0,
            user: r.user ?? 0,
            assistant: r.assistant ?? 0,
            tool: r.tool ?? 0,
            other: w.messageCount - Object.values(r).reduce((a, b) => a + b, 0),
          },
          toolResults: w.toolResults,
          reasoningBlocks: w.reasoningBlocks,
          sourcePath: path,
        });
      }
    });
  }
});

describe("parseCaptureRecord rules", () => {
  it("roles outside the four named ones are `other`", () => {
    const { capture } = parseSpec({ roleCounts: { system: 1, user: 2, developer: 3 } });
    expect(capture?.roles).toEqual({ system: 1, user: 2, assistant: 0, tool: 0, other: 3 });
    expect(capture?.messageCount).toBe(6);
  });

  it("keeps the attempt; a missing one is 1, an invalid one is 1 and reported", () => {
    expect(parseSpec({ attempt: 3 }).capture?.attempt).toBe(3);
    const rec = captureRecord();
    delete rec.attempt;
    expect(parse(rec).capture?.attempt).toBe(1);
    const bad = parse({ ...captureRecord(), attempt: "2" });
    expect(bad.capture?.attempt).toBe(1);
    expect(bad.problems.map((p) => p.code)).toEqual(["invalid-capture-attempt"]);
  });

  it("rejects a record whose stage contradicts its file name", () => {
    const r = parseSpec({ stage: "wire_request" });
    expect(r.capture).toBeUndefined();
    expect(r.problems.map((p) => p.code)).toEqual(["capture-stage-mismatch"]);
  });

  it.each([
    ["payloadBytes negative", { payloadBytes: -1 }],
    ["payloadBytes fractional", { payloadBytes: 1.5 }],
    ["payloadBytes a string", { payloadBytes: "12" }],
    ["payloadBytes beyond 2^53", { payloadBytes: 2 ** 53 }],
    ["payloadBytes missing", { payloadBytes: undefined }],
    ["toolResultCount negative", { messages: { toolResultCount: -2 } }],
    ["a role count negative", { messages: { roleCounts: { user: -1 } } }],
  ])("rejects invalid summary numbers: %s", (_n, over) => {
    const rec = captureRecord();
    const summary = rec.summary as Record<string, unknown>;
    const { messages, ...top } = over as { messages?: Record<string, unknown> } & Record<string, unknown>;
    for (const [k, v] of Object.entries(top)) summary[k] = v;
    if (messages) Object.assign(summary.messages as object, messages);
    const r = parse(rec);
    expect(r.capture).toBeUndefined();
    expect(r.problems.map((p) => p.code)).toEqual(["invalid-capture-summary"]);
  });

  it("rejects records without a summary, and documents that are not objects", () => {
    const rec = captureRecord();
    delete rec.summary;
    expect(parse(rec).problems.map((p) => p.code)).toEqual(["capture-no-summary"]);
    expect(parse([1, 2]).problems.map((p) => p.code)).toEqual(["not-a-capture-record"]);
  });

  it("role counts above messageCount are reported, other is 0", () => {
    const rec = captureRecord({ roleCounts: { user: 2 } });
    (
      (rec.summary as Record<string, Record<string, unknown>>).messages as Record<string, unknown>
    ).messageCount = 1;
    const r = parse(rec);
    expect(r.capture?.roles.other).toBe(0);
    expect(r.problems.map((p) => p.code)).toEqual(["capture-role-counts"]);
  });

  it("a missing iteration is null; missing correlation ids are empty", () => {
    const rec = captureRecord();
    delete rec.correlation;
    const r = parse(rec);
    expect(r.capture).toMatchObject({ iteration: null, sessionId: "", agentId: "", runId: "", model: "" });
  });

  it("timestamps: ISO to ms, anything else 0", () => {
    expect(timestampMs("2026-11-30T05:50:52.986Z")).toBe(Date.UTC(2026, 10, 30, 5, 50, 52, 986));
    expect(timestampMs("yesterday")).toBe(0);
    expect(timestampMs(12)).toBe(0);
  });

  it("a huge string in an allow-listed field is not decoded (too long), and rejects nothing else", () => {
    const rec = captureRecord();
    (rec.correlation as Record<string, unknown>).modelId = "m".repeat(5000);
    expect(parse(rec).capture?.model).toBe("");
  });
});
