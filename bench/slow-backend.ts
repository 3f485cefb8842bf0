/**
 * A first export of a long history to a slow backend: `npx tsx bench/slow-backend.ts [sessions]`
 * (default 10000; also `npm run bench -- slow`).
 *
 * A synthetic ledger (bench/export.ts's, events 30 days old: a history) is exported cumulatively
 * through the real OTLP http/protobuf exporter to a throttled receiver (bench/lib/throttled-receiver.ts),
 * once at 1 request/s and once at 256 KB/s, with the default timeouts (OTEL_METRIC_EXPORT_TIMEOUT
 * 30 s, OTEL_EXPORTER_OTLP_TIMEOUT 10 s). Each run is what `run --once` does with its pipeline:
 * start, final export, shutdown, ledger closed. Runs repeat until one is delivered (at most
 * `MAX_RUNS`), then one more shows the steady state. Reports per run: delivered or not, wall
 * time, requests and bytes that went out; and the time to deliver the whole history.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveConfig } from "../src/config/config.ts";
import { ExportPipeline } from "../src/export/pipeline.ts";
import { buildPriceLookup } from "../src/export/price-lookup.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { createLogger } from "../src/util/log.ts";
import { fillLedger } from "../test/export/helpers/ledger.ts";
import { type Throttle, throttledReceiver } from "./lib/throttled-receiver.ts";

/** Runs tried before giving up on a backend (the code before issue 21 never converged). */
export const MAX_RUNS = 3;
const DAY_MS = 24 * 3600_000;

export interface SlowRun {
  readonly ok: boolean;
  readonly ms: number;
  readonly requests: number;
  readonly bytes: number;
  /** The first failure reason, when not delivered. */
  readonly reason?: string;
}

export interface SlowBackendResult {
  readonly throttle: string;
  readonly sessions: number;
  /** Every run stopped this long after its start (absent: runs end on their own). */
  readonly stopAfterMs?: number;
  /** Runs until the history was delivered (the last one delivered), or MAX_RUNS undelivered. */
  readonly runs: readonly SlowRun[];
  readonly delivered: boolean;
  /** Sum of the runs' wall times until delivered. */
  readonly timeToDeliverMs: number;
  readonly bytesToDeliver: number;
  /** The run after delivery: what the steady state sends. */
  readonly steady: SlowRun | undefined;
  /** Error lines the runs logged (e.g. a closed ledger used by a late export). */
  readonly errors: readonly string[];
}

function describeThrottle(t: Throttle): string {
  return "perRequestMs" in t ? `${1000 / t.perRequestMs} request/s` : `${t.bytesPerSecond / 1024} KB/s`;
}

/**
 * `stopAfterMs`: every run is stopped that long after its start (SIGTERM: `stopWithin(0)`), as a
 * cron timeout or a restart would; runs then repeat until delivered (at most `maxRuns`).
 */
export async function measureSlowBackend(
  sessions: number,
  throttle: Throttle,
  opts: { stopAfterMs?: number; maxRuns?: number } = {},
): Promise<SlowBackendResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-slow-"));
  const rx = await throttledReceiver(throttle);
  const errors: string[] = [];
  const logger = createLogger("warn", (l) => {
    if (/not open|failing/.test(l)) errors.push(l.replace(/^\S+\s+/, ""));
  });
  try {
    const fill = Ledger.open(dir);
    fillLedger(fill, { sessions, eventsPerSession: 4, timestampMs: Date.now() - 30 * DAY_MS });
    fill.close();
    const priceOf = buildPriceLookup(undefined);
    const cfg = resolveConfig(
      { stateDir: join(dir, "unused"), sessionsDir: join(dir, "s"), dbDir: join(dir, "d") },
      { OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf" },
      dir,
      dir,
    );
    const once = async (): Promise<SlowRun> => {
      const ledger = Ledger.open(dir);
      const before = rx.counts();
      const t0 = performance.now();
      try {
        const pipeline = await ExportPipeline.start(cfg.export, ledger, {
          logger,
          priceOf,
          serviceVersion: "bench",
        });
        const stop =
          opts.stopAfterMs === undefined
            ? undefined
            : setTimeout(() => pipeline.stopWithin(0), opts.stopAfterMs);
        const outcome = await pipeline.shutdown();
        clearTimeout(stop);
        const after = rx.counts();
        return {
          ok: outcome.ok,
          ms: performance.now() - t0,
          requests: after.requests - before.requests,
          bytes: after.bytes - before.bytes,
          ...(outcome.ok ? {} : { reason: outcome.failures[0]?.reason ?? "" }),
        };
      } finally {
        ledger.close();
      }
    };
    const runs: SlowRun[] = [];
    while (runs.length < (opts.maxRuns ?? MAX_RUNS)) {
      const r = await once();
      runs.push(r);
      if (r.ok) break;
      // What an abandoned export still sends after its run lands in the next run's counts otherwise.
      await new Promise((res) => setTimeout(res, 2000));
    }
    const delivered = runs.at(-1)?.ok === true;
    const steady = delivered ? await once() : undefined;
    return {
      throttle: describeThrottle(throttle),
      sessions,
      ...(opts.stopAfterMs === undefined ? {} : { stopAfterMs: opts.stopAfterMs }),
      runs,
      delivered,
      timeToDeliverMs: runs.reduce((x, r) => x + r.ms, 0),
      bytesToDeliver: runs.reduce((x, r) => x + r.bytes, 0),
      steady,
      errors: [...new Set(errors)],
    };
  } finally {
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The two backends of issue 21: 1 s per request, and a 256 KB/s link. */
export const THROTTLES: readonly Throttle[] = [{ perRequestMs: 1000 }, { bytesPerSecond: 256 * 1024 }];

const mb = (b: number) => (b / 2 ** 20).toFixed(1);

export function formatSlowBackend(results: readonly SlowBackendResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `${r.sessions} sessions, backend at ${r.throttle}${r.stopAfterMs === undefined ? "" : `, every run stopped after ${r.stopAfterMs / 1000} s`}: ${
        r.delivered
          ? `delivered in ${r.runs.length} run(s), ${(r.timeToDeliverMs / 1000).toFixed(0)} s, ${mb(r.bytesToDeliver)} MiB`
          : `NOT delivered after ${r.runs.length} runs (${(r.timeToDeliverMs / 1000).toFixed(0)} s, ${mb(r.bytesToDeliver)} MiB sent)`
      }`,
    );
    r.runs.forEach((x, i) => {
      lines.push(
        `  run ${i + 1}: ${x.ok ? "delivered" : `exit 1 (${x.reason})`}, ${(x.ms / 1000).toFixed(1)} s, ${x.requests} requests, ${mb(x.bytes)} MiB`,
      );
    });
    if (r.steady)
      lines.push(
        `  next run (steady state): ${(r.steady.ms / 1000).toFixed(1)} s, ${r.steady.requests} requests, ${mb(r.steady.bytes)} MiB`,
      );
    for (const e of r.errors) lines.push(`  logged: ${e}`);
  }
  return lines.join("\n");
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sessions = Number(process.argv[2] ?? 10_000);
  const only = process.argv[3];
  const results: SlowBackendResult[] = [];
  for (const t of THROTTLES) {
    if (only !== undefined && !describeThrottle(t).includes(only)) continue;
    results.push(await measureSlowBackend(sessions, t));
  }
  const stopAfter = process.env.BENCH_STOP_AFTER_MS;
  if (stopAfter !== undefined) {
    const t = THROTTLES[0] as Throttle;
    results.push(await measureSlowBackend(sessions, t, { stopAfterMs: Number(stopAfter), maxRuns: 100 }));
  }
  console.log(formatSlowBackend(results));
  console.log(JSON.stringify(results));
  process.exit(0);
}
