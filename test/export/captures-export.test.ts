/**
 * The provider-request capture metrics (`cline.request.*`) through the real export pipeline: the
 * real CLI's capture fixtures collected into a ledger, exported by the SDK's OTLP exporters to an
 * in-process receiver (and served on the Prometheus endpoint). What a backend reconstructs must
 * equal the capture files' own numbers, read independently with JSON.parse, for both
 * temporalities, across restarts, and without a record delivered twice.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClineSurfaces } from "../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { runPass } from "../../src/collector/pass.ts";
import { CAPTURE_ALLOWED_ATTRIBUTES } from "../../src/export/captures.ts";
import { ExportPipeline, otlpExporterKey } from "../../src/export/pipeline.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { CAPTURE_PAYLOAD_BOUNDARIES, CAPTURE_TOKEN_BOUNDARIES } from "../../src/ledger/schema.ts";
import { createLogger } from "../../src/util/log.ts";
import { captureDirOf, expectedCaptures, homeOf } from "../adapter/cline/captures/helpers.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";
import {
  bucketCount,
  cumulativeTotals,
  deltaTotals,
  histogramCount,
  type ReceivedPoint,
  type Receiver,
  startReceiver,
  sumBy,
} from "./helpers/otlp-receiver.ts";

const SCENARIOS = ["captures", "captures-full"] as const;
type Scenario = (typeof SCENARIOS)[number];

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const pipelines: ExportPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

const priceOf = buildPriceLookup(undefined);

async function collect(ledger: Ledger, scenario: Scenario) {
  const cline = resolveClinePaths({}, {}, homeOf(scenario));
  const dirs = resolveCaptureDirs({ captureDir: captureDirOf(scenario) }, {}, cline);
  const pass = await runPass(createClineSurfaces(cline, dirs), ledger);
  expect(pass.failed).toBe(0);
  return pass;
}

async function start(ledger: Ledger, env: Record<string, string>): Promise<ExportPipeline> {
  const cfg = exportTestConfig({
    ...(rx ? { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url } : {}),
    ...env,
  });
  const p = await ExportPipeline.start(cfg.export, ledger, {
    logger: createLogger("error", () => {}),
    priceOf,
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

/** Inclusive upper bounds: the first bound >= v, else the overflow bucket. */
function bucketOf(v: number, bounds: readonly number[]): number {
  const i = bounds.findIndex((b) => v <= b);
  return i === -1 ? bounds.length : i;
}

type ByStage = Record<string, number>;
interface Want {
  records: number;
  sessions: Set<string>;
  captures: ByStage;
  retries: ByStage;
  payload: ByStage;
  tokens: ByStage;
  toolResults: ByStage;
  reasoningBlocks: ByStage;
  roles: Record<string, number>;
  payloadBuckets: number[];
  tokenBuckets: number[];
}

/** Totals straight from the capture files (JSON.parse), independent of the product. */
function want(scenarios: readonly Scenario[]): Want {
  const w: Want = {
    records: 0,
    sessions: new Set(),
    captures: {},
    retries: {},
    payload: {},
    tokens: {},
    toolResults: {},
    reasoningBlocks: {},
    roles: {},
    payloadBuckets: new Array(CAPTURE_PAYLOAD_BOUNDARIES.length + 1).fill(0),
    tokenBuckets: new Array(CAPTURE_TOKEN_BOUNDARIES.length + 1).fill(0),
  };
  const add = (m: ByStage | Record<string, number>, k: string, v: number) => {
    m[k] = (m[k] ?? 0) + v;
  };
  for (const c of scenarios.flatMap((s) => expectedCaptures(s))) {
    w.records++;
    add(w.captures, c.stage, 1);
    add(w.retries, c.stage, c.attempt > 1 ? 1 : 0);
    add(w.payload, c.stage, c.payloadBytes);
    add(w.tokens, c.stage, c.estimatedTokens);
    add(w.toolResults, c.stage, c.toolResults);
    add(w.reasoningBlocks, c.stage, c.reasoningBlocks);
    let named = 0;
    for (const role of ["system", "user", "assistant", "tool"]) {
      const n = c.roleCounts[role] ?? 0;
      named += n;
      if (n > 0) add(w.roles, role, n);
    }
    if (c.messageCount > named) add(w.roles, "other", c.messageCount - named);
    const pb = bucketOf(c.payloadBytes, CAPTURE_PAYLOAD_BOUNDARIES);
    const tb = bucketOf(c.estimatedTokens, CAPTURE_TOKEN_BOUNDARIES);
    w.payloadBuckets[pb] = (w.payloadBuckets[pb] as number) + 1;
    w.tokenBuckets[tb] = (w.tokenBuckets[tb] as number) + 1;
    w.sessions.add(c.sessionId);
  }
  return w;
}

type Totals = typeof cumulativeTotals;

/** What the backend reconstructed equals the files, metric by metric, stage by stage, bucket by bucket. */
function expectCaptureTotals(points: readonly ReceivedPoint[], totals: Totals, w: Want): void {
  const stage = "cline.capture.stage";
  const by = (metric: string, value?: (p: ReceivedPoint) => number) =>
    sumBy(totals(points, metric, value), stage);
  expect(by("cline.request.payload.size")).toEqual(w.payload);
  expect(by("cline.request.payload.size", histogramCount)).toEqual(w.captures);
  expect(by("cline.request.estimated_tokens")).toEqual(w.tokens);
  expect(by("cline.request.estimated_tokens", histogramCount)).toEqual(w.captures);
  expect(by("cline.request.captures")).toEqual(w.captures);
  expect(by("cline.request.retries")).toEqual(w.retries);
  expect(by("cline.request.tool_results")).toEqual(w.toolResults);
  expect(by("cline.request.reasoning_blocks")).toEqual(w.reasoningBlocks);
  expect(sumBy(totals(points, "cline.request.messages"), "cline.message.role")).toEqual(w.roles);
  const buckets = (metric: string, n: number) =>
    Array.from({ length: n }, (_, i) =>
      [...totals(points, metric, bucketCount(i)).values()].reduce((a, b) => a + b, 0),
    );
  expect(buckets("cline.request.payload.size", w.payloadBuckets.length)).toEqual(w.payloadBuckets);
  expect(buckets("cline.request.estimated_tokens", w.tokenBuckets.length)).toEqual(w.tokenBuckets);
}

const isCapture = (p: ReceivedPoint) => p.metric.startsWith("cline.request.");

describe("fixture expectations", () => {
  it("the fixtures hold captures of both stages, and the expectation counts every record", () => {
    const w = want(SCENARIOS);
    expect(w.records).toBe(12);
    expect(Object.keys(w.captures).sort()).toEqual(["ai_sdk_prompt", "wire_request"]);
    expect(w.payloadBuckets.reduce((a, b) => a + b, 0)).toBe(12);
    expect(w.sessions.size).toBe(2);
  });
});

describe.each(["http/protobuf", "http/json"] as const)("capture metrics over OTLP %s", (protocol) => {
  it("cumulative: exact sums, counts and buckets over the fixture records; a restart changes no total", async () => {
    t = tempLedger();
    for (const s of SCENARIOS) await collect(t.ledger, s);
    rx = await startReceiver();
    const env = { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol };
    const p = await start(t.ledger, env);
    expect(await p.flush()).toEqual({ ok: true });
    const w = want(SCENARIOS);
    expectCaptureTotals(rx.points, cumulativeTotals, w);
    const ours = rx.points.filter(isCapture);
    for (const x of ours) {
      expect(x.scope).toBe("cline-otel");
      expect(x.temporality).toBe("cumulative");
      expect(x.startNs).toBe(t.ledger.streamStartNs);
      for (const k of Object.keys(x.attributes)) expect(CAPTURE_ALLOWED_ATTRIBUTES.has(k), k).toBe(true);
      expect(x.attributes["cline.agent"]).toBe("lead");
    }
    expect(new Set(ours.map((x) => String(x.attributes["session.id"])))).toEqual(w.sessions);
    const hist = ours.filter((x) => x.kind === "histogram");
    expect(new Set(hist.map((x) => x.metric))).toEqual(
      new Set(["cline.request.payload.size", "cline.request.estimated_tokens"]),
    );
    for (const x of hist) {
      expect(x.histogram?.bounds).toEqual(
        x.metric === "cline.request.payload.size"
          ? [...CAPTURE_PAYLOAD_BOUNDARIES]
          : [...CAPTURE_TOKEN_BOUNDARIES],
      );
      expect(x.histogram?.counts.reduce((a, b) => a + b, 0)).toBe(x.histogram?.count);
    }
    expect(ours.find((x) => x.metric === "cline.request.payload.size")?.unit).toBe("By");
    // The usage metrics still ride along: 3 responses per scenario.
    expect([...cumulativeTotals(rx.points, "cline.requests").values()].reduce((a, b) => a + b, 0)).toBe(6);

    // Restart: a new process on the same ledger re-reads nothing and re-sends the same streams.
    await p.shutdown();
    pipelines.splice(pipelines.indexOf(p), 1);
    const l2 = t.reopen();
    const again = await Promise.all(SCENARIOS.map((s) => collect(l2, s)));
    // Each scenario is its own capture dir here, so a pass prunes the other's checkpoints and
    // re-reads its files: nothing is added twice (one ledger row per capture key).
    expect(again.map((r) => [r.eventsAdded, r.captures?.added])).toEqual([
      [0, 0],
      [0, 0],
    ]);
    const p2 = await start(l2, env);
    expect(await p2.flush()).toEqual({ ok: true });
    expectCaptureTotals(rx.points, cumulativeTotals, w);
    expect(new Set(rx.points.filter(isCapture).map((x) => x.startNs))).toEqual(new Set([l2.streamStartNs]));
  });
});

describe("capture metrics over OTLP, delta temporality", () => {
  it("through 503s and a restart, every record is delivered exactly once", async () => {
    t = tempLedger();
    rx = await startReceiver((i) => (i % 3 === 1 ? 503 : 200));
    const env = { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta" };
    let p = await start(t.ledger, env);
    await collect(t.ledger, "captures");
    await p.flush();
    await p.flush();
    // Restart between the two scenarios: the capture watermark is in the ledger.
    await p.shutdown();
    pipelines.splice(pipelines.indexOf(p), 1);
    const l2 = t.reopen();
    p = await start(l2, env);
    await collect(l2, "captures-full");
    await p.flush();
    rx.setStatus(() => 200);
    expect(await p.flush()).toEqual({ ok: true });
    await p.flush(); // nothing new: nothing sent
    expect(rx.requests.some((r) => r.status === 503)).toBe(true);
    const ours = rx.points.filter(isCapture);
    expect(ours.every((x) => x.temporality === "delta")).toBe(true);
    // Doubling any window would double these sums and counts.
    expectCaptureTotals(rx.points, deltaTotals, want(SCENARIOS));
    expect(l2.getExportState(otlpExporterKey(rx.url)).captureWatermark).toBe(l2.maxCaptureId());
  });
});

describe("capture metrics on the Prometheus endpoint", () => {
  it("serves the same cumulative histograms and counters", async () => {
    t = tempLedger();
    for (const s of SCENARIOS) await collect(t.ledger, s);
    const p = await start(t.ledger, {
      OTEL_METRICS_EXPORTER: "prometheus",
      OTEL_EXPORTER_PROMETHEUS_PORT: "0",
    });
    const text = await (await fetch(p.prometheusUrl as string)).text();
    const w = want(SCENARIOS);
    /** `sum by (cline_capture_stage)` of one Prometheus series name, from the exposition text. */
    const byStage = (name: string): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)`, "gm"))) {
        const st = /cline_capture_stage="([^"]*)"/.exec(m[1] as string)?.[1] ?? "";
        out[st] = (out[st] ?? 0) + Number(m[2]);
      }
      return out;
    };
    expect(text).toMatch(/^# TYPE cline_request_payload_size histogram$/m);
    expect(text).toMatch(/^# TYPE cline_request_estimated_tokens histogram$/m);
    expect(byStage("cline_request_payload_size_sum")).toEqual(w.payload);
    expect(byStage("cline_request_payload_size_count")).toEqual(w.captures);
    expect(byStage("cline_request_estimated_tokens_sum")).toEqual(w.tokens);
    expect(byStage("cline_request_captures_total")).toEqual(w.captures);
    expect(byStage("cline_request_tool_results_total")).toEqual(w.toolResults);
  });
});
