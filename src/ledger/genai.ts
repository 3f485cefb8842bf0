/**
 * The GenAI histogram series (gen_ai.client.token.usage, gen_ai.client.operation.duration,
 * cline.tool.duration; src/export/genai/metrics.ts): running totals and bucket counts per series,
 * written by Signals in the same transaction as the rows they sum (one upsert per series and
 * commit transaction), read by the metric producer like the other series.
 */
import type Database from "better-sqlite3";
import { durationMs } from "../adapter/timing.ts";
import { bucketIndex } from "./schema.ts";

export type GenaiMetric = "token_usage" | "operation_duration" | "tool_duration";

/**
 * Explicit bucket boundaries (inclusive upper bounds). Token usage and operation duration are the
 * GenAI semantic conventions' own; tool durations add three longer bounds (commands run minutes).
 * Persisted as bucket indexes in genai_buckets: they change only with a migration that re-buckets.
 */
export const GENAI_TOKEN_BOUNDARIES: readonly number[] = Object.freeze([
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]);
export const GENAI_DURATION_BOUNDARIES: readonly number[] = Object.freeze([
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]);
export const TOOL_DURATION_BOUNDARIES: readonly number[] = Object.freeze([
  ...GENAI_DURATION_BOUNDARIES,
  163.84,
  327.68,
  655.36,
]);
export const GENAI_BOUNDARIES: Readonly<Record<GenaiMetric, readonly number[]>> = Object.freeze({
  token_usage: GENAI_TOKEN_BOUNDARIES,
  operation_duration: GENAI_DURATION_BOUNDARIES,
  tool_duration: TOOL_DURATION_BOUNDARIES,
});

export interface GenaiDims {
  readonly sessionId: string;
  readonly model: string;
  readonly provider: string;
  /** token_usage: input | output; else "". */
  readonly tokenType: string;
  /** tool_duration only; else "". */
  readonly toolName: string;
  /** tool_duration: success | failure | unknown; else "". */
  readonly outcome: string;
}

/** One GenAI histogram series (or its delta over a window). Values: tokens, or seconds. */
export interface GenaiSeriesRow extends GenaiDims {
  readonly metric: GenaiMetric;
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  /** Per bucket, length = boundaries + 1. */
  readonly counts: readonly number[];
  readonly firstMs: number;
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

interface ChatWindowRow {
  sessionId: string;
  model: string;
  provider: string;
  inputAll: number;
  output: number;
  tsMs: number;
  startMs: number;
  ingestedMs: number;
}

interface PendingGenai {
  readonly metric: GenaiMetric;
  readonly dims: GenaiDims;
  count: number;
  sum: number;
  min: number;
  max: number;
  tsMs: number;
  readonly buckets: Map<number, number>;
}

export class GenaiSeries {
  private w: ReturnType<typeof prepareWrites> | undefined;
  private r: ReturnType<typeof prepareReads> | undefined;
  private liveGenai: { series: Database.Statement; buckets: Database.Statement } | undefined;
  private pageGenai: { series: Database.Statement; buckets: Database.Statement } | undefined;
  /** Observations of the commit in progress, by series (written once per series by `flush`). */
  private readonly pending = new Map<string, PendingGenai>();

  constructor(private readonly db: Database.Database) {}

  private writes(): ReturnType<typeof prepareWrites> {
    this.w ??= prepareWrites(this.db);
    return this.w;
  }

  private reads(): ReturnType<typeof prepareReads> {
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /** Adds one observation to this commit's sums; `flush` writes one upsert per series. */
  observe(metric: GenaiMetric, dims: GenaiDims, value: number, tsMs: number): void {
    const k = `${metric}\u0000${dims.sessionId}\u0000${dims.model}\u0000${dims.provider}\u0000${dims.tokenType}\u0000${dims.toolName}\u0000${dims.outcome}`;
    let p = this.pending.get(k);
    if (p === undefined) {
      p = { metric, dims, count: 0, sum: 0, min: value, max: value, tsMs, buckets: new Map() };
      this.pending.set(k, p);
    }
    p.count++;
    p.sum += value;
    if (value < p.min) p.min = value;
    if (value > p.max) p.max = value;
    if (tsMs > p.tsMs) p.tsMs = tsMs;
    const b = bucketIndex(value, GENAI_BOUNDARIES[metric]);
    p.buckets.set(b, (p.buckets.get(b) ?? 0) + 1);
  }

  /** Forgets the observations of a commit that did not complete (its rows were rolled back). */
  discard(): void {
    this.pending.clear();
  }

  /** Writes the observations of the commit in progress (call inside its transaction). */
  flush(nowMs: number): void {
    if (this.pending.size === 0) return;
    const w = this.writes();
    for (const p of this.pending.values()) {
      const series = w.genaiSeries.get({
        metric: p.metric,
        ...p.dims,
        count: p.count,
        sum: p.sum,
        min: p.min,
        max: p.max,
        nowMs,
        tsMs: p.tsMs,
      }) as { id: number };
      for (const [bucket, count] of p.buckets) w.genaiBucket.run({ seriesId: series.id, bucket, count });
    }
    this.pending.clear();
  }

  /** Every GenAI histogram series with its buckets (cumulative export). */
  series(): GenaiSeriesRow[] {
    const r = this.reads();
    return withCounts(
      () => r.genaiSeries.iterate(),
      () => r.genaiBuckets.iterate(),
    );
  }

  /**
   * The GenAI series the cumulative TTL keeps (newest event at or after `eventSinceMs`, or changed
   * at or after `updatedSinceMs`), filtered in SQL and read one row at a time: an export of an
   * idle history reads nothing of it. For exports where each series is one row (session id on).
   */
  seriesLive(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }): GenaiSeriesRow[] {
    const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
    const params = { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
    const live = "(s.last_event_ms >= @eventSince OR s.updated_ms >= @updatedSince)";
    this.liveGenai ??= {
      series: this.db.prepare(
        `SELECT s.id, s.metric, s.session_id AS sessionId, s.model, s.provider, s.token_type AS tokenType,
           s.tool_name AS toolName, s.outcome, s.count, s.sum, s.min, s.max, s.first_ms AS firstMs,
           s.updated_ms AS updatedMs, s.last_event_ms AS lastEventMs
         FROM genai_series s WHERE ${live} ORDER BY s.id`,
      ),
      buckets: this.db.prepare(
        `SELECT b.series_id AS seriesId, b.bucket, b.count FROM genai_buckets b
         JOIN genai_series s ON s.id = b.series_id WHERE ${live} ORDER BY b.series_id, b.bucket`,
      ),
    };
    const stmts = this.liveGenai;
    return withCounts(
      () => stmts.series.iterate(params),
      () => stmts.buckets.iterate(params),
    );
  }

  /**
   * One keyset page of seriesLive: the live series with id > `afterId`, at most `limit`, with
   * their buckets, and the id of the last one (the next page's `afterId`; `afterId` when empty).
   * Two short synchronous queries: no cursor stays open while the page is being sent.
   */
  seriesLivePage(
    f: { readonly eventSinceMs: number; readonly updatedSinceMs: number },
    page: { readonly afterId: number; readonly limit: number },
  ): { readonly rows: GenaiSeriesRow[]; readonly lastId: number } {
    const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
    const live = "(s.last_event_ms >= @eventSince OR s.updated_ms >= @updatedSince)";
    this.pageGenai ??= {
      series: this.db.prepare(
        `SELECT s.id, s.metric, s.session_id AS sessionId, s.model, s.provider, s.token_type AS tokenType,
           s.tool_name AS toolName, s.outcome, s.count, s.sum, s.min, s.max, s.first_ms AS firstMs,
           s.updated_ms AS updatedMs, s.last_event_ms AS lastEventMs
         FROM genai_series s WHERE s.id > @afterId AND ${live} ORDER BY s.id LIMIT @limit`,
      ),
      buckets: this.db.prepare(
        `SELECT series_id AS seriesId, bucket, count FROM genai_buckets
         WHERE series_id > @afterId AND series_id <= @lastId ORDER BY series_id, bucket`,
      ),
    };
    const stmts = this.pageGenai;
    const series = stmts.series.all({
      eventSince: clamp(f.eventSinceMs),
      updatedSince: clamp(f.updatedSinceMs),
      afterId: page.afterId,
      limit: page.limit,
    }) as (Omit<GenaiSeriesRow, "counts"> & { id: number })[];
    const lastId = series.at(-1)?.id ?? page.afterId;
    if (series.length === 0) return { rows: [], lastId };
    // Buckets of the id range: those of series the TTL dropped inside it are read and ignored.
    const rows = withCounts(
      () => series,
      () => stmts.buckets.iterate({ afterId: page.afterId, lastId }),
    );
    return { rows, lastId };
  }

  /**
   * The request histograms over the usage events with after < id <= upTo (delta export: the same
   * event window, and so the same watermark, as the cline.* counters). Tool durations become
   * known after their call is delivered, so they are cumulative only.
   */
  delta(after: number, upTo: number): GenaiSeriesRow[] {
    const out = new Map<
      string,
      { -readonly [K in keyof GenaiSeriesRow]: GenaiSeriesRow[K] } & { counts: number[] }
    >();
    const add = (
      metric: GenaiMetric,
      dims: GenaiDims,
      value: number,
      r: { tsMs: number; ingestedMs: number },
    ) => {
      const k = JSON.stringify([metric, dims.sessionId, dims.model, dims.provider, dims.tokenType]);
      let s = out.get(k);
      if (s === undefined) {
        s = {
          metric,
          ...dims,
          count: 0,
          sum: 0,
          min: value,
          max: value,
          firstMs: r.ingestedMs,
          updatedMs: r.ingestedMs,
          lastEventMs: r.tsMs,
          counts: new Array<number>(GENAI_BOUNDARIES[metric].length + 1).fill(0),
        };
        out.set(k, s);
      }
      s.count++;
      s.sum += value;
      s.min = Math.min(s.min, value);
      s.max = Math.max(s.max, value);
      s.updatedMs = Math.max(s.updatedMs, r.ingestedMs);
      s.lastEventMs = Math.max(s.lastEventMs, r.tsMs);
      const i = bucketIndex(value, GENAI_BOUNDARIES[metric]);
      s.counts[i] = (s.counts[i] ?? 0) + 1;
    };
    for (const r of this.reads().chatWindow.iterate({ after, upTo }) as IterableIterator<ChatWindowRow>) {
      const dims = {
        sessionId: r.sessionId,
        model: r.model,
        provider: r.provider,
        toolName: "",
        outcome: "",
      };
      add("token_usage", { ...dims, tokenType: "input" }, r.inputAll, r);
      add("token_usage", { ...dims, tokenType: "output" }, r.output, r);
      const d = durationMs(r.startMs, r.tsMs);
      if (d !== undefined) add("operation_duration", { ...dims, tokenType: "" }, d / 1000, r);
    }
    return [...out.values()];
  }
}

/**
 * Joins series rows with their bucket rows (both ordered by series id) into rows with a dense
 * `counts` array, one slot per bucket of the metric's boundaries (buckets never hit read as 0).
 * The buckets are read to the end before the series query starts: one open cursor at a time.
 */
function withCounts(
  seriesRows: () => Iterable<unknown>,
  bucketRows: () => Iterable<unknown>,
): GenaiSeriesRow[] {
  const buckets = new Map<number, number[]>();
  for (const b of bucketRows() as Iterable<{ seriesId: number; bucket: number; count: number }>) {
    let arr = buckets.get(b.seriesId);
    if (arr === undefined) {
      arr = [];
      buckets.set(b.seriesId, arr);
    }
    arr[b.bucket] = b.count;
  }
  const out: GenaiSeriesRow[] = [];
  for (const { id, ...row } of seriesRows() as Iterable<Omit<GenaiSeriesRow, "counts"> & { id: number }>) {
    const n = GENAI_BOUNDARIES[row.metric].length + 1;
    const got = buckets.get(id) ?? [];
    out.push({ ...row, counts: Array.from({ length: n }, (_, i) => got[i] ?? 0) });
  }
  return out;
}

function prepareWrites(db: Database.Database) {
  return {
    genaiSeries: db.prepare(
      `INSERT INTO genai_series (metric, session_id, model, provider, token_type, tool_name, outcome, count, sum, min,
         max, first_ms, updated_ms, last_event_ms)
       VALUES (@metric, @sessionId, @model, @provider, @tokenType, @toolName, @outcome, @count, @sum, @min, @max,
         @nowMs, @nowMs, @tsMs)
       ON CONFLICT (metric, session_id, model, provider, token_type, tool_name, outcome) DO UPDATE SET
         count = count + excluded.count, sum = sum + excluded.sum, min = min(min, excluded.min), max = max(max, excluded.max),
         updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms)
       RETURNING id`,
    ),
    genaiBucket: db.prepare(
      `INSERT INTO genai_buckets (series_id, bucket, count) VALUES (@seriesId, @bucket, @count)
       ON CONFLICT (series_id, bucket) DO UPDATE SET count = count + excluded.count`,
    ),
  };
}

function prepareReads(db: Database.Database) {
  return {
    genaiSeries: db.prepare(
      `SELECT id, metric, session_id AS sessionId, model, provider, token_type AS tokenType, tool_name AS toolName,
         outcome, count, sum, min, max, first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs
       FROM genai_series ORDER BY id`,
    ),
    genaiBuckets: db.prepare(
      "SELECT series_id AS seriesId, bucket, count FROM genai_buckets ORDER BY series_id, bucket",
    ),
    chatWindow: db.prepare(
      `SELECT e.session_id AS sessionId, e.model, e.provider, e.input + e.cache_read + e.cache_write AS inputAll,
         e.output, e.ts_ms AS tsMs, IFNULL(q.start_ms, 0) AS startMs, e.ingested_ms AS ingestedMs
       FROM events e LEFT JOIN signal_queue q ON q.kind = 'chat' AND q.ref_key = e.dedup_key
       WHERE e.id > @after AND e.id <= @upTo ORDER BY e.id`,
    ),
  };
}
