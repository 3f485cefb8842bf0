/**
 * Series count benchmark: `npx tsx bench/series.ts [sessions-per-day] [days]` (default 38 and 7;
 * not part of npm test). The bench corpus (bench/lib/corpus.ts: sessions ~12.5 min apart, 24
 * projects, 3 models, sub-agents and teammates) is collected into a fresh ledger for one
 * developer's day and for a week (the default series TTL), then one cumulative collection is
 * made per OTEL_METRICS_INCLUDE_* setting. Prints, per setting: series (data points of one
 * collection, what Prometheus holds as active series) and distinct attribute sets (what
 * Honeycomb turns one collection into: points with the same attributes and time are one event).
 * docs/metrics.md "Cardinality" holds a run's table.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClineAdapter } from "../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../src/adapter/cline/paths.ts";
import { runPass } from "../src/collector/pass.ts";
import { resolveConfig } from "../src/config/config.ts";
import { DeliveryTracker } from "../src/export/delivery.ts";
import { buildPriceLookup } from "../src/export/price-lookup.ts";
import { LedgerMetricProducer } from "../src/export/producer.ts";
import { buildResource } from "../src/export/resource.ts";
import { teamOptions } from "../src/export/team-options.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { silentLogger } from "../src/util/log.ts";
import { writeCorpus } from "./lib/corpus.ts";

const SETTINGS: readonly { readonly name: string; readonly env: Record<string, string> }[] = [
  { name: "defaults (session id, project, user)", env: {} },
  { name: "project, user (team: no session id)", env: { OTEL_METRICS_INCLUDE_SESSION_ID: "false" } },
  {
    name: "no session id, no project",
    env: { OTEL_METRICS_INCLUDE_SESSION_ID: "false", OTEL_METRICS_INCLUDE_PROJECT: "false" },
  },
  {
    name: "no session id, no project, no user",
    env: {
      OTEL_METRICS_INCLUDE_SESSION_ID: "false",
      OTEL_METRICS_INCLUDE_PROJECT: "false",
      OTEL_METRICS_INCLUDE_USER: "false",
    },
  },
];

export interface SeriesCount {
  readonly setting: string;
  readonly series: number;
  /** Prometheus series: a histogram point is `_bucket` per bound + `+Inf`, `_sum` and `_count`. */
  readonly promSeries: number;
  readonly attributeSets: number;
}

async function countFor(ledger: Ledger, env: Record<string, string>): Promise<Omit<SeriesCount, "setting">> {
  const cfg = resolveConfig(
    { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-s", dbDir: "/tmp/unused-d" },
    { CLINE_OTEL_USER: "dev-1", OTEL_RESOURCE_ATTRIBUTES: "team.id=payments", ...env },
    "/tmp",
    "/tmp",
  ).export;
  const resource = buildResource(cfg, ledger.instanceId, "0.0.0", "host-1");
  const team = teamOptions(cfg, resource, silentLogger);
  const producer = new LedgerMetricProducer(ledger, new DeliveryTracker(), {
    exporter: "bench-series",
    temporality: "cumulative",
    // Every series of the corpus is live: what a backend holds within the TTL.
    seriesTtlMs: Number.MAX_SAFE_INTEGER,
    translate: team.translate(buildPriceLookup(undefined)),
  });
  const c = await producer.collect();
  const metrics = c.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  // Sums and histograms alike: only the attributes and the bucket bounds are read here.
  const points = metrics.flatMap(
    (m) =>
      m.dataPoints as readonly {
        attributes: Record<string, unknown>;
        value: number | { buckets?: { boundaries: readonly number[] } };
      }[],
  );
  let promSeries = 0;
  for (const p of points) {
    const bounds = typeof p.value === "number" ? undefined : p.value.buckets?.boundaries;
    promSeries += bounds === undefined ? 1 : bounds.length + 3;
  }
  const sets = new Set(
    points.map((p) =>
      JSON.stringify(
        Object.keys(p.attributes)
          .sort()
          .map((k) => [k, p.attributes[k]]),
      ),
    ),
  );
  return { series: points.length, promSeries, attributeSets: sets.size };
}

export async function seriesBench(
  sessionsPerDay: number,
  days: number,
): Promise<Record<string, SeriesCount[]>> {
  const tmp = mkdtempSync(join(tmpdir(), "cline-otel-series-"));
  try {
    const out: Record<string, SeriesCount[]> = {};
    for (const [label, sessions] of [
      ["day", sessionsPerDay],
      ["week", sessionsPerDay * days],
    ] as const) {
      const home = join(tmp, label);
      // No repository rows: the corpus' workspaces do not exist, and a repository is a function
      // of the project (its workspace), so it adds no series where the project is on (docs).
      writeCorpus(home, { sessions, totalBytes: sessions * 40_000, seed: 7 });
      const state = join(tmp, `${label}-state`);
      mkdirSync(state);
      const ledger = Ledger.open(state);
      try {
        const paths = resolveClinePaths({ clineDir: join(home, ".cline") }, {}, home, home);
        await runPass(createClineAdapter(paths), ledger);
        out[label] = [];
        for (const s of SETTINGS) out[label].push({ setting: s.name, ...(await countFor(ledger, s.env)) });
      } finally {
        ledger.close();
      }
    }
    return out;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const perDay = Number(process.argv[2] ?? 38);
  const days = Number(process.argv[3] ?? 7);
  const r = await seriesBench(perDay, days);
  for (const [label, rows] of Object.entries(r)) {
    process.stdout.write(`\n${label} (${label === "day" ? perDay : perDay * days} sessions)\n`);
    for (const row of rows)
      process.stdout.write(
        `${String(row.series).padStart(7)} OTLP points ${String(row.promSeries).padStart(7)} Prometheus series ${String(row.attributeSets).padStart(7)} attribute sets  ${row.setting}\n`,
      );
  }
}
