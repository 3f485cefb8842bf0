/**
 * The writes of `genai_rows`: a commit's sums per series (PendingGenai), and the multi-row
 * upserts that merge them into the running totals, bound by position.
 */
import type Database from "better-sqlite3";
import { bucketIndex } from "../schema.ts";
import {
  DUR,
  GENAI_BOUNDARIES,
  GENAI_BUCKET_COLUMNS,
  type GenaiDims,
  type GenaiMetric,
  type Histogram,
  histogramColumns,
  MAIN,
  OUT,
  TOKEN_BUCKETS,
} from "./layout.ts";

export interface PendingGenai {
  readonly metric: GenaiMetric;
  readonly dims: GenaiDims;
  count: number;
  sum: number;
  min: number;
  max: number;
  tsMs: number;
  /** Per bucket of the metric (boundaries + 1). */
  readonly counts: number[];
}

/** A series first observed in this commit by `value` (min and max start there; `add` counts it). */
export function newSeries(metric: GenaiMetric, dims: GenaiDims, value: number, tsMs: number): PendingGenai {
  const counts = new Array<number>(GENAI_BOUNDARIES[metric].length + 1).fill(0);
  return { metric, dims, count: 0, sum: 0, min: value, max: value, tsMs, counts };
}

export function add(p: PendingGenai, value: number, tsMs: number): void {
  p.count++;
  p.sum += value;
  if (value < p.min) p.min = value;
  if (value > p.max) p.max = value;
  if (tsMs > p.tsMs) p.tsMs = tsMs;
  const b = bucketIndex(value, GENAI_BOUNDARIES[p.metric]);
  p.counts[b] = (p.counts[b] as number) + 1;
}

/** One histogram's values in upsert order (`histogramColumns`); absent: NULL totals, 0 buckets. */
export function pushHistogram(
  args: (string | number | null)[],
  p: PendingGenai | undefined,
  nowMs: number,
  buckets: number,
): void {
  if (p === undefined) {
    args.push(null, null, null, null, null, null, null);
    for (let i = 0; i < buckets; i++) args.push(0);
    return;
  }
  args.push(p.count, p.sum, p.min, p.max, nowMs, nowMs, p.tsMs);
  const c = p.counts;
  for (let i = 0; i < buckets; i++) args.push(i < c.length ? (c[i] as number) : 0);
}

/**
 * Rows per upsert statement. Its values are bound by position, not by name, and several rows
 * share one run: in better-sqlite3 each named parameter is a property lookup from native code
 * and each run a native call, which made the per-series upsert cost about 2x what SQLite spends
 * on it (docs/performance.md "GenAI buckets inline").
 */
export const UPSERT_ROWS = 16;

/**
 * How one histogram's columns merge on conflict. A histogram may be absent on either side (NULL
 * totals: a request row before its first known duration, or a commit without one); its bucket
 * columns always add (0 when absent).
 */
export function mergeHistogram(h: Histogram, buckets: number): string[] {
  const c = (n: string) => `${h.prefix}${n}`;
  const x = (n: string) => `excluded.${h.prefix}${n}`;
  const both = (n: string, f: string) => `${f}(IFNULL(${c(n)}, ${x(n)}), IFNULL(${x(n)}, ${c(n)}))`;
  const plus = (n: string) => `CASE WHEN ${x(n)} IS NULL THEN ${c(n)} ELSE IFNULL(${c(n)}, 0) + ${x(n)} END`;
  return [
    `${c("count")} = ${plus("count")}`,
    `${c("sum")} = ${plus("sum")}`,
    `${c("min")} = ${both("min", "min")}`,
    `${c("max")} = ${both("max", "max")}`,
    `${c("first_ms")} = IFNULL(${c("first_ms")}, ${x("first_ms")})`,
    `${c("updated_ms")} = IFNULL(${x("updated_ms")}, ${c("updated_ms")})`,
    `${c("last_event_ms")} = ${both("last_event_ms", "max")}`,
    ...h.buckets.slice(0, buckets).map((b) => `${b} = ${b} + excluded.${b}`),
  ];
}

/**
 * The upsert of `rows` request rows (session, client, model, provider: input, output and duration)
 * or tool rows (the same and tool, outcome: duration; the project is kept as first written), each once per commit
 * transaction (`flush` aggregates, so no two rows of one statement share a key).
 */
export function prepareUpsert(
  db: Database.Database,
  kind: "request" | "tool",
  rows: number,
): Database.Statement {
  const hist: [Histogram, number][] =
    kind === "request"
      ? [
          [MAIN, TOKEN_BUCKETS],
          [OUT, OUT.buckets.length],
          [DUR, DUR.buckets.length],
        ]
      : [[MAIN, GENAI_BUCKET_COLUMNS]];
  const columns = [
    "session_id",
    "client",
    "project",
    "model",
    "provider",
    "tool_name",
    "outcome",
    ...hist.flatMap(([h, n]) => histogramColumns(h, n)),
  ];
  const values = columns.map((c) =>
    kind === "request" && (c === "tool_name" || c === "outcome") ? "''" : "?",
  );
  const row = `(${values.join(", ")})`;
  return db.prepare(
    `INSERT INTO genai_rows (${columns.join(", ")})
     VALUES ${Array.from({ length: rows }, () => row).join(",\n       ")}
     ON CONFLICT (session_id, model, provider, tool_name, outcome, client) DO UPDATE SET
       ${hist.flatMap(([h, n]) => mergeHistogram(h, n)).join(",\n       ")}`,
  );
}
