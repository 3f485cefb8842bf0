import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RequestCapture } from "../../../../src/adapter/types.ts";
import { Ledger } from "../../../../src/ledger/ledger.ts";
import {
  bucketIndex,
  CAPTURE_PAYLOAD_BOUNDARIES,
  CAPTURE_TOKEN_BOUNDARIES,
} from "../../../../src/ledger/schema.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cap-ledger-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function cap(key: string, over: Partial<RequestCapture> = {}): RequestCapture {
  return {
    captureKey: `cline-capture|${key}|ai_sdk_prompt|1`,
    captureId: key,
    stage: "ai_sdk_prompt",
    seq: 1,
    attempt: 1,
    mode: "summary",
    sessionId: "s1",
    agent: "lead",
    agentId: "agent_1",
    conversationId: "conv_1",
    runId: "run_1",
    iteration: 1,
    model: "m",
    provider: "p",
    project: "/w",
    timestampMs: 1_796_000_000_000,
    payloadBytes: 3000,
    estimatedTokens: 1000,
    messageCount: 3,
    messageBytes: 300,
    messageTokens: 100,
    roles: { system: 0, user: 2, assistant: 1, tool: 0, other: 0 },
    toolResults: 1,
    reasoningBlocks: 0,
    sourcePath: `/caps/${key}`,
    ...over,
  };
}

function commit(l: Ledger, path: string, captures: RequestCapture[]) {
  return l.commit({
    status: "read",
    source: { adapterId: "cline-capture", path, origin: "walk", hint: {} },
    checkpoint: { path, size: 10, mtimeNs: "1", ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    captures,
    problems: [],
  });
}

describe("bucketIndex", () => {
  it.each([
    [0, 0],
    [4096, 0],
    [4097, 1],
    [8192, 1],
    [8388608, 11],
    [8388609, 12],
  ])("payload %d bytes -> bucket %d (bounds are inclusive upper bounds)", (v, want) => {
    expect(bucketIndex(v, CAPTURE_PAYLOAD_BOUNDARIES)).toBe(want);
  });
  it("has one bucket more than bounds, bounds strictly increasing", () => {
    for (const b of [CAPTURE_PAYLOAD_BOUNDARIES, CAPTURE_TOKEN_BOUNDARIES]) {
      expect(bucketIndex(Number.MAX_SAFE_INTEGER, b)).toBe(b.length);
      for (let i = 1; i < b.length; i++) expect(b[i] as number).toBeGreaterThan(b[i - 1] as number);
    }
  });
});

describe("Ledger captures", () => {
  it("commits captures with their checkpoint, dedups by key, keeps series equal to the rows", () => {
    const l = Ledger.open(dir);
    expect(commit(l, "/caps/a", [cap("a"), cap("b", { payloadBytes: 9000, estimatedTokens: 3000 })])).toEqual(
      {
        eventsAdded: 0,
        callsAdded: 0,
        capturesAdded: 2,
      },
    );
    expect(
      commit(l, "/caps/a", [cap("a"), cap("c", { attempt: 2, payloadBytes: 100, estimatedTokens: 34 })]),
    ).toEqual({ eventsAdded: 0, callsAdded: 0, capturesAdded: 1 });
    expect(l.getCheckpoint("/caps/a")?.size).toBe(10);
    const rows = l.captureRows();
    expect(rows.map((r) => r.captureKey)).toHaveLength(3);
    const [s] = l.captureSeries();
    expect(l.captureSeries()).toHaveLength(1);
    expect(s).toMatchObject({
      captures: 3,
      retries: 1,
      payloadBytes: 3000 + 9000 + 100,
      payloadMin: 100,
      payloadMax: 9000,
      estimatedTokens: 1000 + 3000 + 34,
      tokensMin: 34,
      tokensMax: 3000,
      messages: 9,
      roleUser: 6,
      roleAssistant: 3,
      toolResults: 3,
    });
    // 3000 and 100 <= 4096; 9000 in (8192, 16384]. Tokens: 1000 and 34 <= 1000; 3000 in (2000, 4000].
    expect(s?.payloadBuckets).toEqual([2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(s?.tokenBuckets).toEqual([2, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    l.close();
  });

  it("one series per (session, agent, project, model, provider, stage)", () => {
    const l = Ledger.open(dir);
    commit(l, "/caps/a", [
      cap("a"),
      cap("b", { stage: "wire_request", captureKey: "cline-capture|b|wire_request|1" }),
      cap("c", { agent: "subagent" }),
      cap("d", { sessionId: "s2" }),
    ]);
    expect(l.captureSeries().map((s) => [s.sessionId, s.agent, s.stage, s.captures])).toEqual([
      ["s1", "lead", "ai_sdk_prompt", 1],
      ["s1", "lead", "wire_request", 1],
      ["s1", "subagent", "ai_sdk_prompt", 1],
      ["s2", "lead", "ai_sdk_prompt", 1],
    ]);
    l.close();
  });

  it("a capture the ledger refuses rolls back the whole source, checkpoint included", () => {
    const l = Ledger.open(dir);
    expect(() => commit(l, "/caps/bad", [cap("ok"), cap("bad", { payloadBytes: -1 })])).toThrow(/CHECK/);
    expect(l.getCheckpoint("/caps/bad")).toBeUndefined();
    expect(l.captureRows()).toEqual([]);
    expect(l.captureSeries()).toEqual([]);
    l.close();
  });

  it("delta windows add up to the series; watermarks persist per exporter", () => {
    const l = Ledger.open(dir);
    commit(l, "/caps/1", [cap("a"), cap("b", { payloadBytes: 50_000, estimatedTokens: 16_667 })]);
    const mid = l.maxCaptureId();
    commit(l, "/caps/2", [cap("c", { attempt: 3 }), cap("d", { stage: "wire_request" })]);
    const end = l.maxCaptureId();
    expect([mid, end]).toEqual([2, 4]);
    const first = l.captureDelta(0, mid);
    const second = l.captureDelta(mid, end);
    const all = l.captureDelta(0, end);
    const strip = (rows: typeof all) => rows.map(({ firstMs: _f, updatedMs: _u, ...r }) => r);
    expect(strip(all)).toEqual(strip(l.captureSeries()));
    const sum = (rows: typeof all, k: "captures" | "payloadBytes" | "retries") =>
      rows.reduce((a, r) => a + r[k], 0);
    for (const k of ["captures", "payloadBytes", "retries"] as const) {
      expect(sum(first, k) + sum(second, k)).toBe(sum(all, k));
    }
    expect(second.find((r) => r.stage === "ai_sdk_prompt")?.payloadBuckets[0]).toBe(1);
    // The capture watermark is part of the export state: it moves with the others, in one row.
    const st = l.getExportState("otlp x");
    expect(st.captureWatermark).toBe(0);
    l.putExportState({ ...st, captureWatermark: mid });
    expect(l.getExportState("otlp x")).toMatchObject({ captureWatermark: mid, eventWatermark: 0 });
    l.putExportState({ ...l.getExportState("otlp x"), eventWatermark: 7 });
    expect(l.getExportState("otlp x")).toMatchObject({ captureWatermark: mid, eventWatermark: 7 });
    l.close();
  });
});
