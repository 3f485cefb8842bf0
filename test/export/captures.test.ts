import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { emptyResource } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  DataPointType,
  type HistogramMetricData,
  type MetricData,
  type SumMetricData,
} from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import {
  CAPTURE_ALLOWED_ATTRIBUTES,
  CAPTURE_METRICS,
  captureAttributes,
  captureSeriesToMetricData,
  liveCapturePoints,
  translateCaptures,
} from "../../src/export/captures.ts";
import type { CaptureSeriesRow } from "../../src/ledger/ledger.ts";
import { CAPTURE_PAYLOAD_BOUNDARIES, CAPTURE_TOKEN_BOUNDARIES } from "../../src/ledger/schema.ts";

function row(over: Partial<CaptureSeriesRow> = {}): CaptureSeriesRow {
  const payloadBuckets = new Array(CAPTURE_PAYLOAD_BOUNDARIES.length + 1).fill(0);
  const tokenBuckets = new Array(CAPTURE_TOKEN_BOUNDARIES.length + 1).fill(0);
  payloadBuckets[2] = 2;
  tokenBuckets[2] = 1;
  tokenBuckets[3] = 1;
  return {
    sessionId: "s1",
    agent: "lead",
    project: "/work/ws",
    model: "mock-model",
    provider: "openai-compatible",
    client: "",
    stage: "ai_sdk_prompt",
    captures: 2,
    retries: 1,
    payloadBytes: 21284 + 21753,
    payloadMin: 21284,
    payloadMax: 21753,
    estimatedTokens: 7095 + 7251,
    tokensMin: 7095,
    tokensMax: 7251,
    messages: 4,
    roleSystem: 0,
    roleUser: 3,
    roleAssistant: 1,
    roleTool: 0,
    roleOther: 0,
    toolResults: 1,
    reasoningBlocks: 0,
    payloadBuckets,
    tokenBuckets,
    firstMs: 1000,
    updatedMs: 2000,
    lastEventMs: 1500,
    ...over,
  };
}

const OPTS = {
  project: "path" as const,
  includeSessionId: true,
  temporality: "cumulative" as const,
  startTime: [1_796_000_000, 0] as [number, number],
  endTime: [1_796_000_060, 0] as [number, number],
};

function byName(metrics: MetricData[], name: string): MetricData {
  const m = metrics.find((x) => x.descriptor.name === name);
  if (m === undefined) throw new Error(`no ${name}`);
  return m;
}

describe("capture series -> MetricData", () => {
  const rows = [
    row(),
    row({ stage: "wire_request", payloadBytes: 47_550, estimatedTokens: 15_851, retries: 0 }),
    row({ sessionId: "s2", agent: "", roleOther: 2, messages: 6, reasoningBlocks: 3 }),
  ];
  const metrics = captureSeriesToMetricData(rows, OPTS);

  it("payload size and estimated tokens are histograms whose sums and counts are exact", () => {
    const payload = byName(metrics, "cline.request.payload.size") as HistogramMetricData;
    const tokens = byName(metrics, "cline.request.estimated_tokens") as HistogramMetricData;
    expect(payload.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(payload.descriptor.unit).toBe("By");
    expect(tokens.descriptor.unit).toBe("{token}");
    const sum = (m: HistogramMetricData) => m.dataPoints.reduce((a, p) => a + (p.value.sum ?? 0), 0);
    const count = (m: HistogramMetricData) => m.dataPoints.reduce((a, p) => a + p.value.count, 0);
    expect(sum(payload)).toBe(rows.reduce((a, r) => a + r.payloadBytes, 0));
    expect(sum(tokens)).toBe(rows.reduce((a, r) => a + r.estimatedTokens, 0));
    expect(count(payload)).toBe(6);
    const p0 = payload.dataPoints[0];
    expect(p0?.value.buckets.boundaries).toEqual([...CAPTURE_PAYLOAD_BOUNDARIES]);
    expect(p0?.value.buckets.counts.reduce((a, b) => a + b, 0)).toBe(p0?.value.count);
    expect(p0?.value).toMatchObject({ min: 21284, max: 21753 });
    expect(p0?.startTime).toEqual(OPTS.startTime);
    expect(p0?.endTime).toEqual(OPTS.endTime);
  });

  it("counters: records, retries, messages by role, tool results, reasoning blocks", () => {
    const total = (name: string, filter: (a: Record<string, unknown>) => boolean = () => true) =>
      (byName(metrics, name) as SumMetricData).dataPoints
        .filter((p) => filter(p.attributes))
        .reduce((a, p) => a + p.value, 0);
    for (const name of [
      "cline.request.captures",
      "cline.request.retries",
      "cline.request.messages",
      "cline.request.tool_results",
    ]) {
      const m = byName(metrics, name) as SumMetricData;
      expect(m.dataPointType).toBe(DataPointType.SUM);
      expect(m.isMonotonic).toBe(true);
      expect(m.aggregationTemporality).toBe(AggregationTemporality.CUMULATIVE);
    }
    expect(total("cline.request.captures")).toBe(6);
    expect(total("cline.request.retries")).toBe(2);
    expect(total("cline.request.messages")).toBe(4 + 4 + 6);
    expect(total("cline.request.messages", (a) => a["cline.message.role"] === "other")).toBe(2);
    expect(total("cline.request.messages", (a) => a["cline.message.role"] === "system")).toBe(0);
    expect(total("cline.request.reasoning_blocks")).toBe(3);
  });

  it("attributes: the allow-list only; cline.agent only when known; the stage always", () => {
    for (const m of metrics) {
      for (const p of m.dataPoints) {
        for (const k of Object.keys(p.attributes)) expect(CAPTURE_ALLOWED_ATTRIBUTES.has(k)).toBe(true);
        expect(p.attributes["cline.capture.stage"]).toMatch(/^(ai_sdk_prompt|wire_request)$/);
      }
    }
    expect(captureAttributes(row({ agent: "" }), OPTS)).not.toHaveProperty("cline.agent");
    expect(captureAttributes(row(), OPTS)).toEqual({
      "session.id": "s1",
      "cline.agent": "lead",
      "cline.project": "/work/ws",
      "gen_ai.request.model": "mock-model",
      "gen_ai.provider.name": "openai-compatible",
      "cline.capture.stage": "ai_sdk_prompt",
    });
    expect(captureAttributes(row(), { project: "basename", includeSessionId: false })).toEqual({
      "cline.agent": "lead",
      "cline.project": "ws",
      "gen_ai.request.model": "mock-model",
      "gen_ai.provider.name": "openai-compatible",
      "cline.capture.stage": "ai_sdk_prompt",
    });
  });

  it("series that coincide without session.id are merged: sums, counts and buckets added, min/max combined", () => {
    const a = row();
    const b = row({ sessionId: "s2", payloadMin: 100, payloadMax: 99_000, payloadBytes: 99_100 });
    const points = translateCaptures([a, b], { project: "path", includeSessionId: false });
    expect(points).toHaveLength(1);
    expect(points[0]?.payload).toMatchObject({
      sum: a.payloadBytes + 99_100,
      count: 4,
      min: 100,
      max: 99_000,
    });
    expect(points[0]?.payload.counts[2]).toBe(4);
    expect(points[0]?.captures).toBe(4);
  });

  it("delta temporality; empty input gives no metrics", () => {
    const d = captureSeriesToMetricData([row()], { ...OPTS, temporality: "delta" });
    for (const m of d) expect(m.aggregationTemporality).toBe(AggregationTemporality.DELTA);
    expect(captureSeriesToMetricData([], OPTS)).toEqual([]);
  });

  it("live points: no capture within the TTL AND delivered is dropped, anything else kept", () => {
    const pts = translateCaptures(
      [
        row({ updatedMs: 100, lastEventMs: 90 }),
        row({ sessionId: "s9", updatedMs: 150, lastEventMs: 5000 }),
        // Old captures read recently (a backfill): live until delivered, then dropped.
        row({ sessionId: "s7", updatedMs: 9000, lastEventMs: 90 }),
      ],
      OPTS,
    );
    const sessions = (nowMs: number, delivered: number) =>
      liveCapturePoints(pts, nowMs, 6000, delivered).map((p) => p.attributes["session.id"]);
    expect(sessions(10_000, 200)).toEqual(["s9", "s7"]);
    expect(sessions(10_000, 9500)).toEqual(["s9"]);
    expect(sessions(10_000, 50)).toEqual(["s1", "s9", "s7"]); // not delivered yet
    // Rows that merge (session.id off) keep the newest event of the merged ones.
    const merged = translateCaptures(
      [row({ lastEventMs: 90 }), row({ sessionId: "s9", lastEventMs: 5000 })],
      { ...OPTS, includeSessionId: false },
    );
    expect(merged.map((p) => p.lastEventMs)).toEqual([5000]);
  });

  it("Prometheus sees the names the dashboard queries", () => {
    const text = new PrometheusSerializer().serialize({
      resource: emptyResource(),
      scopeMetrics: [{ scope: { name: "cline-otel" }, metrics }],
    });
    for (const name of [
      "cline_request_payload_size_bucket",
      "cline_request_payload_size_sum",
      "cline_request_payload_size_count",
      "cline_request_estimated_tokens_bucket",
      "cline_request_captures_total",
      "cline_request_retries_total",
      "cline_request_messages_total",
      "cline_request_tool_results_total",
      "cline_request_reasoning_blocks_total",
    ]) {
      expect(text).toMatch(new RegExp(`^${name}\\{[^}]*cline_capture_stage="`, "m"));
    }
    expect(text).toMatch(/^cline_request_payload_size_bucket\{[^}]*le="4096"\} /m);
    expect(text).toMatch(/^cline_request_messages_total\{[^}]*cline_message_role="user"/m);
  });

  it("metric names and units are the contract's", () => {
    expect(Object.values(CAPTURE_METRICS).map((m) => [m.name, m.unit])).toEqual([
      ["cline.request.payload.size", "By"],
      ["cline.request.estimated_tokens", "{token}"],
      ["cline.request.captures", "{request}"],
      ["cline.request.retries", "{request}"],
      ["cline.request.messages", "{message}"],
      ["cline.request.tool_results", "{block}"],
      ["cline.request.reasoning_blocks", "{block}"],
    ]);
  });
});
