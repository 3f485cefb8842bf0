/**
 * The PromQL of docs/captures.md ("Prompt growth by stage and iteration") on a real Prometheus
 * (2.42, /usr/bin/prometheus) scraping capture metrics built from a real ledger by
 * captureSeriesToMetricData and served by @opentelemetry/exporter-prometheus. The queries are
 * read from the doc, so the doc cannot drift from what was tested.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { emptyResource } from "@opentelemetry/resources";
import { MeterProvider, type MetricProducer } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestCapture } from "../../src/adapter/types.ts";
import { PRODUCER_ATTRIBUTE } from "../../src/export/attributes.ts";
import { captureSeriesToMetricData } from "../../src/export/captures.ts";
import { nsToHrTime } from "../../src/export/metric-data.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { freePort, waitFor } from "../deploy/support/processes.ts";
import { type RunningPrometheus, startPrometheus } from "../deploy/support/prometheus.ts";
import { ROOT } from "../helpers/cli.ts";

const F =
  'session_id=~".*", cline_agent=~".*", gen_ai_request_model=~".*", gen_ai_provider_name=~".*", cline_project=~".*"';
const RATE = "20s";

/** The ```promql blocks of docs/captures.md, with the dashboard variables filled in. */
function docQueries(): string[] {
  const doc = readFileSync(join(ROOT, "docs", "captures.md"), "utf8");
  return [...doc.matchAll(/```promql\n([\s\S]*?)```/g)].map((m) =>
    (m[1] as string)
      .replace(/\$F/g, F)
      .replace(/\$__rate_interval/g, RATE)
      .replace(/\$__range/g, "1h")
      .trim(),
  );
}

interface Spec {
  stage: string;
  iteration: number;
  tokens: number;
  seq?: number;
  attempt?: number;
}

function capture(s: Spec): RequestCapture {
  const k = s.iteration;
  const roles = {
    system: s.stage === "wire_request" ? 1 : 0,
    user: k,
    assistant: k - 1,
    tool: k - 1,
    other: 0,
  };
  return {
    captureKey: `cline-capture|cap_${k}|${s.stage}|${s.seq ?? 1}`,
    captureId: `cap_${k}`,
    stage: s.stage,
    seq: s.seq ?? 1,
    attempt: s.attempt ?? 1,
    mode: "summary",
    sessionId: "s1",
    agent: "lead",
    agentId: "agent_1",
    conversationId: "conv",
    runId: "run_1",
    iteration: k,
    model: "mock-model",
    provider: "openai-compatible",
    project: "/work/ws",
    timestampMs: 1_796_000_000_000 + k,
    payloadBytes: s.tokens * 3,
    estimatedTokens: s.tokens,
    messageCount: roles.system + roles.user + roles.assistant + roles.tool,
    messageBytes: 10,
    messageTokens: 4,
    roles,
    toolResults: roles.tool,
    reasoningBlocks: 0,
    sourcePath: `/caps/${k}`,
  };
}

// Phase 1 is the baseline every series starts from; rates over the window see phase 2 only. The
// baseline is larger than phase 2's increase, as on any long-running counter: a series that starts
// near zero inside the window has its rate extrapolated less by Prometheus (its zero guard).
const PHASE1: Spec[] = [1, 2, 3, 4, 5, 6].flatMap((k) => [
  { stage: "ai_sdk_prompt", iteration: k, tokens: 900 + 100 * k },
  { stage: "wire_request", iteration: k, tokens: 990 + 110 * k },
]);
const PHASE2: Spec[] = [
  { stage: "ai_sdk_prompt", iteration: 7, tokens: 1500 },
  { stage: "wire_request", iteration: 7, tokens: 2200 },
  { stage: "ai_sdk_prompt", iteration: 8, tokens: 1900 },
  { stage: "wire_request", iteration: 8, tokens: 2500 },
  { stage: "wire_request", iteration: 8, tokens: 2500, seq: 2, attempt: 2 },
];

let dir = "";
let ledger: Ledger;
let provider: MeterProvider;
let prom: RunningPrometheus;
let at = 0;

function commit(specs: Spec[], path: string): void {
  ledger.commit({
    status: "read",
    source: { adapterId: "cline-capture", path, origin: "walk", hint: {} },
    checkpoint: { path, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    captures: specs.map(capture),
    problems: [],
  });
}

async function scraped(captures: number): Promise<void> {
  await waitFor(
    `Prometheus to scrape ${captures} captures`,
    async () => {
      const r = await prom.query("sum(cline_request_captures_total)");
      return Number(r[0]?.value[1]) === captures ? true : undefined;
    },
    20_000,
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cap-promql-"));
  ledger = Ledger.open(dir);
  const producer: MetricProducer = {
    async collect() {
      const metrics = captureSeriesToMetricData(ledger.captureSeries(), {
        project: "path",
        includeSessionId: true,
        // What every exported point carries, and what the docs' queries select.
        constant: PRODUCER_ATTRIBUTE,
        temporality: "cumulative",
        startTime: nsToHrTime(ledger.streamStartNs),
        endTime: nsToHrTime(BigInt(Date.now()) * 1_000_000n),
      });
      return {
        resourceMetrics: {
          resource: emptyResource(),
          scopeMetrics: [{ scope: { name: "cline-otel" }, metrics }],
        },
        errors: [],
      };
    },
  };
  const port = await freePort();
  const exporter = new PrometheusExporter({ host: "127.0.0.1", port, metricProducers: [producer] });
  await exporter.startServer();
  provider = new MeterProvider({ readers: [exporter] });
  prom = await startPrometheus([`127.0.0.1:${port}`]);
  commit(PHASE1, "/caps/1");
  await scraped(PHASE1.length);
  await new Promise((r) => setTimeout(r, 2_000));
  commit(PHASE2, "/caps/2");
  await scraped(PHASE1.length + PHASE2.length);
  await new Promise((r) => setTimeout(r, 2_000));
  at = Date.now() / 1000;
}, 90_000);

afterAll(async () => {
  await prom?.stop();
  await provider?.shutdown();
  ledger?.close();
  rmSync(dir, { recursive: true, force: true });
});

const mean = (stage: string) => {
  const xs = PHASE2.filter((s) => s.stage === stage);
  return xs.reduce((a, s) => a + s.tokens, 0) / xs.length;
};

describe("docs/captures.md PromQL on Prometheus 2.42", () => {
  const queries = docQueries();
  const byStage = async (q: string) =>
    Object.fromEntries(
      (await prom.query(q, at)).map((s) => [s.metric.cline_capture_stage, Number(s.value[1])]),
    );

  it("the doc has the eight queries this test knows", () => {
    expect(queries).toHaveLength(8);
  });

  it("mean estimated tokens per request by stage = the window's sum / count", async () => {
    const r = await byStage(queries[0] as string);
    expect(r.ai_sdk_prompt).toBeCloseTo(mean("ai_sdk_prompt"), 6);
    expect(r.wire_request).toBeCloseTo(mean("wire_request"), 6);
  });

  it("p95 by stage lands in the bucket of the window's largest prompts", async () => {
    const r = await byStage(queries[1] as string);
    expect(r.ai_sdk_prompt).toBeGreaterThan(1000);
    expect(r.ai_sdk_prompt).toBeLessThanOrEqual(2000);
    expect(r.wire_request).toBeGreaterThan(2000);
    expect(r.wire_request).toBeLessThanOrEqual(4000);
  });

  it("what the wire adds per request", async () => {
    const r = await prom.query(queries[2] as string, at);
    expect(Number(r[0]?.value[1])).toBeCloseTo(mean("wire_request") - mean("ai_sdk_prompt"), 6);
  });

  it("messages per request by role at ai_sdk_prompt", async () => {
    const r = Object.fromEntries(
      (await prom.query(queries[3] as string, at)).map((s) => [
        s.metric.cline_message_role,
        Number(s.value[1]),
      ]),
    );
    const sdk = PHASE2.filter((s) => s.stage === "ai_sdk_prompt").map(capture);
    for (const role of ["user", "assistant", "tool"] as const) {
      expect(r[role]).toBeCloseTo(sdk.reduce((a, c) => a + c.roles[role], 0) / sdk.length, 6);
    }
    expect(r.system).toBeUndefined(); // never sent at this stage: no series
  });

  it("tool results per request by stage", async () => {
    const r = await byStage(queries[4] as string);
    const per = (stage: string) => {
      const xs = PHASE2.filter((s) => s.stage === stage).map(capture);
      return xs.reduce((a, c) => a + c.toolResults, 0) / xs.length;
    };
    expect(r.ai_sdk_prompt).toBeCloseTo(per("ai_sdk_prompt"), 6);
    expect(r.wire_request).toBeCloseTo(per("wire_request"), 6);
  });

  it("the range totals (captures, retries, bytes) answer for every stage", async () => {
    for (const q of queries.slice(5)) {
      const r = await byStage(q);
      expect(Object.keys(r).sort(), q).toEqual(["ai_sdk_prompt", "wire_request"]);
      for (const v of Object.values(r)) expect(Number.isFinite(v)).toBe(true);
    }
    const retries = await byStage(queries[6] as string);
    expect(retries.wire_request).toBeGreaterThan(0);
    expect(retries.ai_sdk_prompt).toBe(0);
  });
});
