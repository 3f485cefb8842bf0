/**
 * `cline_otel.producer="cline-otel"` on every metric point cline-otel exports (docs/metrics.md
 * "Query convention"): the label every shipped query selects, so that a second producer of
 * `cline_*` names (Cline's own export) is never summed with ours. Through the real OTLP exporters
 * (both encodings) and the real Prometheus pull exporter, over a ledger holding every kind of
 * series: usage, tool calls, GenAI histograms, captures and compactions.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createClineSurfaces } from "../../src/adapter/cline/captures/collect.ts";
import { resolveCaptureDirs } from "../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import type { Observation } from "../../src/adapter/types.ts";
import { runPass } from "../../src/collector/pass.ts";
import { PRODUCER_ATTRIBUTE } from "../../src/export/attributes.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { SCOPE_NAME } from "../../src/export/producer.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";
import { silentLogger } from "../../src/util/log.ts";
import { captureDirOf, homeOf } from "../adapter/cline/captures/helpers.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { priceOf } from "./helpers/expected.ts";
import { fillLedger, sampleCompaction, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

const [KEY, VALUE] = Object.entries(PRODUCER_ATTRIBUTE)[0] as [string, string];
const LABEL = KEY.replaceAll(".", "_");

/** Every metric the contract exports, by kind: each must be in the export checked below. */
const EXPECTED_METRICS = [
  "cline.token.usage",
  "cline.requests",
  "cline.tool.calls",
  "cline.tool.token.usage",
  "cline.cost.usage",
  "cline.tool.cost.usage",
  "cline.compactions",
  "cline.request.payload.size",
  "cline.request.estimated_tokens",
  "gen_ai.client.token.usage",
  "cline.tool.duration",
];

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

/** A ledger with every kind of series: synthetic usage and tools, real captures, one compaction. */
async function everyKind(ledger: Ledger): Promise<void> {
  fillLedger(ledger, { sessions: 4 });
  const cline = resolveClinePaths({}, {}, homeOf("captures"));
  const dirs = resolveCaptureDirs({ captureDir: captureDirOf("captures") }, {}, cline);
  expect((await runPass(createClineSurfaces(cline, dirs), ledger)).failed).toBe(0);
  const c = sampleCompaction({
    compactionKey: "cline-compaction|s1|lead|2026-12-01T10:00:00.000Z|10",
    timestampMs: Date.now(),
  });
  const obs: Extract<Observation, { status: "read" }> = {
    status: "read",
    source: { adapterId: "cline-compaction", path: c.sourcePath, origin: "walk", hint: {} },
    checkpoint: { path: c.sourcePath, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    compactions: [c],
    problems: [],
  };
  ledger.commit(obs);
}

async function start(ledger: Ledger, env: Record<string, string>): Promise<ExportPipeline> {
  const cfg = exportTestConfig(env);
  const p = await ExportPipeline.start(cfg.export, ledger, {
    logger: silentLogger,
    priceOf,
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

describe("cline_otel.producer on every metric point", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    for (const temporality of ["cumulative", "delta"] as const) {
      it(`OTLP ${protocol}, ${temporality}: every point of every metric, whatever the resource says`, async () => {
        t = tempLedger();
        await everyKind(t.ledger);
        rx = await startReceiver();
        const p = await start(t.ledger, {
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: temporality,
          // A resource attribute of the same name, copied onto points: it must not change the producer.
          OTEL_RESOURCE_ATTRIBUTES: `${KEY}=someone-else,team.id=payments`,
          CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: `${KEY},team.id`,
        });
        expect(await p.flush()).toEqual({ ok: true });
        const ours = rx.points.filter((x) => x.scope === SCOPE_NAME);
        const metrics = new Set(ours.map((x) => x.metric));
        for (const m of EXPECTED_METRICS) expect(metrics, m).toContain(m);
        const without = ours
          .filter((x) => x.producer !== VALUE)
          .map((x) => `${x.metric} ${String(x.producer)}`);
        expect(without).toEqual([]);
        // The other copied attribute is still there: the producer is added, nothing else is lost.
        for (const x of ours) expect(x.attributes["team.id"]).toBe("payments");
      });
    }
  }

  it(`the Prometheus endpoint: ${LABEL}="${VALUE}" on every cline_* and gen_ai_* sample`, async () => {
    t = tempLedger();
    await everyKind(t.ledger);
    const p = await start(t.ledger, {
      OTEL_METRICS_EXPORTER: "prometheus",
      OTEL_EXPORTER_PROMETHEUS_PORT: "0",
    });
    const body = await (await fetch(p.prometheusUrl ?? "")).text();
    const samples = body
      .split("\n")
      .filter((l) => /^(cline|gen_ai)_/.test(l) && !l.startsWith("cline_otel_"));
    expect(samples.length).toBeGreaterThan(EXPECTED_METRICS.length);
    const names = new Set(
      samples.map((l) => l.replace(/[{ ].*/, "").replace(/_(total|bucket|sum|count)$/, "")),
    );
    for (const m of EXPECTED_METRICS) expect(names, m).toContain(m.replaceAll(".", "_"));
    expect(samples.filter((l) => !l.includes(`${LABEL}="${VALUE}"`))).toEqual([]);
  });
});
