/**
 * Export benchmark: `npx tsx bench/export.ts [sessions ...]` (default 1000 10000; not part of npm test).
 *
 * A synthetic ledger (2 models, 3 tools, 3 agents, 4 messages per session) is exported, cumulative,
 * through the real OTLP exporters (http/protobuf and http/json) to a local receiver that counts
 * bytes. Each size runs in its own child process so RSS numbers are not mixed. Reports exported
 * series per metric, payload bytes (raw and gzip), ledger read (collect) time, collect+export wall
 * time, and RSS. Then the idle case: a ledger of the same size whose events are 30 days old (a
 * first run over a long history), exported once, then again with nothing new: what the idle
 * export still sends is what the series TTL did not drop.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { resolveConfig } from "../src/config/config.ts";
import { DeliveryTracker } from "../src/export/delivery.ts";
import { ExportPipeline, otlpExporterKey } from "../src/export/pipeline.ts";
import { buildPriceLookup } from "../src/export/price-lookup.ts";
import { LedgerMetricProducer } from "../src/export/producer.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { applyHeapPolicy } from "../src/util/heap.ts";
import { silentLogger } from "../src/util/log.ts";
import { fillLedger } from "../test/export/helpers/ledger.ts";

const CHILD_FLAG = "--export-bench-child";

export interface ExportBenchResult {
  readonly sessions: number;
  readonly events: number;
  readonly toolCalls: number;
  /** Data points (= exported series) per metric name in one cumulative collection. */
  readonly seriesByMetric: Readonly<Record<string, number>>;
  readonly series: number;
  readonly fillMs: number;
  /** Ledger read + translation into SDK metric data (one collection). */
  readonly collectMs: number;
  readonly protobuf: ProtocolResult;
  readonly json: ProtocolResult;
  /** RSS after both exports, and the peak (process.resourceUsage().maxRSS). The receiver runs in
   * the same process but keeps only sizes; gzipping each request adds to the peak a little. */
  readonly rssMB: number;
  readonly maxRssMB: number;
  /** Peak RSS after filling the ledger, before any export (what the export adds is the rest). */
  readonly fillMaxRssMB: number;
  readonly idle: IdleExportResult;
}

/** One export of the idle case (http/protobuf). */
export interface IdleExport {
  readonly points: number;
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly requests: number;
  readonly ok: boolean;
}

export interface IdleExportResult {
  /** Age of every event: older than the default series TTL (7 days). */
  readonly eventAgeDays: number;
  /** The export right after the backfill: every series is new to the backend. */
  readonly first: IdleExport;
  /** The next export, with nothing new in the ledger. */
  readonly idle: IdleExport;
}

export interface ProtocolResult {
  readonly bytes: number;
  readonly gzipBytes: number;
  readonly requests: number;
  /** pipeline.flush(): collect + serialize + send + receiver answer. */
  readonly flushMs: number;
  readonly ok: boolean;
}

/** Counts request sizes only (keeping the bodies would inflate this process's RSS). */
async function receiver() {
  const bodies: { bytes: number; gzipBytes: number }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      bodies.push({ bytes: body.length, gzipBytes: gzipSync(body).length });
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen({ host: "127.0.0.1", port: 0 }, r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/metrics`,
    bodies,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const EVENT_AGE_DAYS = 30;
const DAY_MS = 24 * 3600_000;

/**
 * The idle case: `sessions` sessions whose events are EVENT_AGE_DAYS old, ingested now, exported
 * twice over http/protobuf with nothing new in between.
 */
export async function measureIdleExport(sessions: number): Promise<IdleExportResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-idle-"));
  const ledger = Ledger.open(dir);
  const rx = await receiver();
  try {
    fillLedger(ledger, { sessions, eventsPerSession: 4, timestampMs: Date.now() - EVENT_AGE_DAYS * DAY_MS });
    const priceOf = buildPriceLookup(undefined);
    const translate = { project: "path", includeSessionId: true, priceOf } as const;
    const cfg = resolveConfig(
      { stateDir: join(dir, "unused"), sessionsDir: join(dir, "s"), dbDir: join(dir, "d") },
      {
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
        OTEL_METRIC_EXPORT_INTERVAL: "3600000",
        OTEL_METRIC_EXPORT_TIMEOUT: "120000",
        OTEL_EXPORTER_OTLP_TIMEOUT: "120000",
      },
      dir,
      dir,
    );
    const pipeline = await ExportPipeline.start(cfg.export, ledger, {
      logger: silentLogger,
      priceOf,
      serviceVersion: "bench",
    });
    // What the pipeline's producer is about to send: the same exporter state, read without exporting.
    const pointsDue = async (): Promise<number> => {
      const probe = new LedgerMetricProducer(ledger, new DeliveryTracker(), {
        exporter: otlpExporterKey(rx.url),
        temporality: "cumulative",
        seriesTtlMs: cfg.export.seriesTtlMs,
        translate,
      });
      const c = await probe.collect();
      return c.resourceMetrics.scopeMetrics
        .flatMap((sm) => sm.metrics)
        .reduce((x, m) => x + m.dataPoints.length, 0);
    };
    const once = async (): Promise<IdleExport> => {
      const points = await pointsDue();
      const outcome = await pipeline.flush();
      const sent = rx.bodies.splice(0);
      return {
        points,
        bytes: sent.reduce((x, b) => x + b.bytes, 0),
        gzipBytes: sent.reduce((x, b) => x + b.gzipBytes, 0),
        requests: sent.length,
        ok: outcome.ok,
      };
    };
    const first = await once();
    const idle = await once();
    await pipeline.shutdown();
    return { eventAgeDays: EVENT_AGE_DAYS, first, idle };
  } finally {
    await rx.close();
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Measures one size in THIS process (the parent runs it in a child per size). */
export async function measureExport(sessions: number): Promise<ExportBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-export-"));
  const ledger = Ledger.open(dir);
  try {
    const t0 = performance.now();
    const filled = fillLedger(ledger, { sessions, eventsPerSession: 4 });
    const fillMs = performance.now() - t0;
    const fillMaxRssMB = process.resourceUsage().maxRSS / 1024;
    const priceOf = buildPriceLookup(undefined);

    const run = async (protocol: "http/protobuf" | "http/json"): Promise<ProtocolResult> => {
      const rx = await receiver();
      const cfg = resolveConfig(
        { stateDir: join(dir, "unused"), sessionsDir: join(dir, "s"), dbDir: join(dir, "d") },
        {
          OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
          OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: protocol,
          OTEL_METRIC_EXPORT_INTERVAL: "3600000",
          OTEL_METRIC_EXPORT_TIMEOUT: "120000",
          OTEL_EXPORTER_OTLP_TIMEOUT: "120000",
        },
        dir,
        dir,
      );
      const pipeline = await ExportPipeline.start(cfg.export, ledger, {
        logger: silentLogger,
        priceOf,
        serviceVersion: "bench",
      });
      const f0 = performance.now();
      const outcome = await pipeline.flush();
      const flushMs = performance.now() - f0;
      // Only this export: shutdown's final flush would send everything once more.
      const sent = rx.bodies.splice(0);
      await pipeline.shutdown();
      await rx.close();
      const bytes = sent.reduce((x, b) => x + b.bytes, 0);
      const gzipBytes = sent.reduce((x, b) => x + b.gzipBytes, 0);
      return { bytes, gzipBytes, requests: sent.length, flushMs, ok: outcome.ok };
    };
    const protobuf = await run("http/protobuf");
    const json = await run("http/json");
    const rssMB = process.memoryUsage().rss / 2 ** 20;
    const maxRssMB = process.resourceUsage().maxRSS / 1024;
    // After the exports and their peak RSS: one whole collection (every live series as SDK points,
    // what a pull exporter serves) to count the series per metric and time the ledger read.
    const { collectMs, seriesByMetric } = await (async () => {
      const producer = new LedgerMetricProducer(ledger, new DeliveryTracker(), {
        exporter: "bench",
        temporality: "cumulative",
        seriesTtlMs: 7 * 24 * 3600_000,
        translate: { project: "path", includeSessionId: true, priceOf },
      });
      await producer.collect(); // warm-up
      const c0 = performance.now();
      const collected = await producer.collect();
      const ms = performance.now() - c0;
      const byMetric: Record<string, number> = {};
      for (const m of collected.resourceMetrics.scopeMetrics.flatMap((sm) => sm.metrics)) {
        byMetric[m.descriptor.name] = m.dataPoints.length;
      }
      return { collectMs: ms, seriesByMetric: byMetric };
    })();

    const idle = await measureIdleExport(sessions);
    return {
      sessions,
      events: filled.events,
      toolCalls: filled.calls,
      seriesByMetric,
      series: Object.values(seriesByMetric).reduce((x, n) => x + n, 0),
      fillMs,
      collectMs,
      protobuf,
      json,
      rssMB,
      maxRssMB,
      fillMaxRssMB,
      idle,
    };
  } finally {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs each size in a fresh child process and returns the results (for bench/run.ts). */
export function benchExport(sizes: readonly number[] = [1000, 10_000]): ExportBenchResult[] {
  const self = fileURLToPath(import.meta.url);
  return sizes.map((n) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", self, CHILD_FLAG, String(n)], {
      encoding: "utf8",
      maxBuffer: 16 * 2 ** 20,
    });
    if (r.status !== 0) throw new Error(`export bench child (${n} sessions) failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as ExportBenchResult;
  });
}

const mb = (b: number) => (b / 2 ** 20).toFixed(2);

export function formatExportBench(results: readonly ExportBenchResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `${r.sessions} sessions (${r.events} events, ${r.toolCalls} tool calls): ${r.series} series ` +
        `(${Object.entries(r.seriesByMetric)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")})`,
      `  ledger read + translate (collect): ${r.collectMs.toFixed(0)} ms; fill: ${r.fillMs.toFixed(0)} ms`,
      `  http/protobuf: ${mb(r.protobuf.bytes)} MiB (gzip ${mb(r.protobuf.gzipBytes)} MiB) in ${r.protobuf.requests} request(s), collect+export ${r.protobuf.flushMs.toFixed(0)} ms${r.protobuf.ok ? "" : " NOT DELIVERED"}`,
      `  http/json:     ${mb(r.json.bytes)} MiB (gzip ${mb(r.json.gzipBytes)} MiB) in ${r.json.requests} request(s), collect+export ${r.json.flushMs.toFixed(0)} ms${r.json.ok ? "" : " NOT DELIVERED"}`,
      `  RSS ${r.rssMB.toFixed(0)} MiB (peak ${r.maxRssMB.toFixed(0)} MiB, ${r.fillMaxRssMB.toFixed(0)} MiB before exporting); bytes per series: protobuf ${(r.protobuf.bytes / r.series).toFixed(0)}, json ${(r.json.bytes / r.series).toFixed(0)}`,
      `  idle, events ${r.idle.eventAgeDays} days old (http/protobuf): first export ${r.idle.first.points} points, ` +
        `${mb(r.idle.first.bytes)} MiB in ${r.idle.first.requests} request(s); next export with nothing new ` +
        `${r.idle.idle.points} points, ${mb(r.idle.idle.bytes)} MiB (gzip ${mb(r.idle.idle.gzipBytes)} MiB) in ${r.idle.idle.requests} request(s)` +
        `${r.idle.first.ok && r.idle.idle.ok ? "" : " NOT DELIVERED"}`,
    );
  }
  return lines.join("\n");
}

if (process.argv[2] === CHILD_FLAG) {
  // The heap policy the CLI applies to `report` and `run` (src/cli/main.ts): peak RSS as users see it.
  applyHeapPolicy();
  const r = await measureExport(Number(process.argv[3]));
  process.stdout.write(`${JSON.stringify(r)}\n`);
  // The SDK leaves no timers, but do not let a stray handle hold the child.
  process.exit(0);
} else if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = process.argv.slice(2).map(Number);
  console.log(formatExportBench(benchExport(sizes.length > 0 ? sizes : undefined)));
}
