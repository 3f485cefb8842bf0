/**
 * The GenAI histogram series (gen_ai.client.token.usage, gen_ai.client.operation.duration,
 * cline.tool.duration; src/export/genai/metrics.ts): running totals and bucket counts per series,
 * one `genai_histograms` row each (the counts are its columns b0..b17), written by Signals in the
 * same transaction as the rows they sum (one upsert per series and commit transaction), read by
 * the metric producer like the other series.
 */
import type Database from "better-sqlite3";
import { durationMs } from "../adapter/timing.ts";
import { bucketIndex } from "./schema.ts";

export type GenaiMetric = "token_usage" | "operation_duration" | "tool_duration";

/**
 * Explicit bucket boundaries (inclusive upper bounds). Token usage and operation duration are the
 * GenAI semantic conventions' own; tool durations add three longer bounds (commands run minutes).
 * Persisted as bucket indexes (column bK of genai_histograms counts bucket K): they change only
 * with a migration that re-buckets.
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

/**
 * Bucket count columns of genai_histograms (b0..b17): the longest boundary list + 1. A metric
 * uses its first boundaries + 1 of them; the others stay 0. Fixed by the schema: a longer list
 * needs a migration that adds columns.
 */
export const GENAI_BUCKET_COLUMNS = 18;
/** The bucket columns in order: `b0, b1, ...`. */
const BUCKETS = Array.from({ length: GENAI_BUCKET_COLUMNS }, (_, i) => `b${i}`);

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

/**
 * Histograms of a delta window, built from its rows in memory (a window is bounded by the
 * exporter's batch size): one per metric and dims, the same bucketing as the running totals.
 */
export class WindowHistograms {
  private readonly out = new Map<
    string,
    { -readonly [K in keyof GenaiSeriesRow]: GenaiSeriesRow[K] } & { counts: number[] }
  >();

  add(metric: GenaiMetric, dims: GenaiDims, value: number, r: { tsMs: number; ingestedMs: number }): void {
    const k = `${metric}\u0000${dims.sessionId}\u0000${dims.model}\u0000${dims.provider}\u0000${dims.tokenType}\u0000${dims.toolName}\u0000${dims.outcome}`;
    let s = this.out.get(k);
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
      this.out.set(k, s);
    }
    s.count++;
    s.sum += value;
    s.min = Math.min(s.min, value);
    s.max = Math.max(s.max, value);
    s.updatedMs = Math.max(s.updatedMs, r.ingestedMs);
    s.lastEventMs = Math.max(s.lastEventMs, r.tsMs);
    const i = bucketIndex(value, GENAI_BOUNDARIES[metric]);
    s.counts[i] = (s.counts[i] ?? 0) + 1;
  }

  rows(): GenaiSeriesRow[] {
    return [...this.out.values()];
  }
}

/** The dims a request's histograms share (token type aside). */
function chatDims(r: {
  readonly sessionId: string;
  readonly model: string;
  readonly provider: string;
}): Omit<GenaiDims, "tokenType"> {
  return { sessionId: r.sessionId, model: r.model, provider: r.provider, toolName: "", outcome: "" };
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
  /** Per bucket of the metric (boundaries + 1). */
  readonly counts: number[];
}

/** A request's three series in one commit (observeChat); duration only once one had a start. */
interface PendingChat {
  readonly input: PendingGenai;
  readonly output: PendingGenai;
  duration: PendingGenai | undefined;
}

/** A series first observed in this commit by `value` (min and max start there; `add` counts it). */
function newSeries(metric: GenaiMetric, dims: GenaiDims, value: number, tsMs: number): PendingGenai {
  const counts = new Array<number>(GENAI_BOUNDARIES[metric].length + 1).fill(0);
  return { metric, dims, count: 0, sum: 0, min: value, max: value, tsMs, counts };
}

function add(p: PendingGenai, value: number, tsMs: number): void {
  p.count++;
  p.sum += value;
  if (value < p.min) p.min = value;
  if (value > p.max) p.max = value;
  if (tsMs > p.tsMs) p.tsMs = tsMs;
  const b = bucketIndex(value, GENAI_BOUNDARIES[p.metric]);
  p.counts[b] = (p.counts[b] as number) + 1;
}

export class GenaiSeries {
  /** The series upserts by row count, prepared on first use. */
  private readonly upserts = new Map<number, Database.Statement>();
  private r: ReturnType<typeof prepareReads> | undefined;
  private liveGenai: Database.Statement | undefined;
  private pageGenai: Database.Statement | undefined;
  /**
   * Observations of the commit in progress, each series once (written once per series by
   * `flush`): requests by session, model and provider; tool calls by their series.
   */
  private readonly pendingChat = new Map<string, PendingChat>();
  private readonly pendingTools = new Map<string, PendingGenai>();

  constructor(private readonly db: Database.Database) {}

  /** The upsert of `rows` series (1..UPSERT_ROWS), prepared on first use. */
  private upsert(rows: number): Database.Statement {
    let st = this.upserts.get(rows);
    if (st === undefined) {
      st = prepareUpsert(this.db, rows);
      this.upserts.set(rows, st);
    }
    return st;
  }

  private reads(): ReturnType<typeof prepareReads> {
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /**
   * One final tool call's duration in seconds, added to this commit's sums (`flush` writes one
   * upsert per series).
   */
  observeTool(dims: Omit<GenaiDims, "tokenType">, durationS: number, tsMs: number): void {
    const k = `${dims.sessionId}\u0000${dims.model}\u0000${dims.provider}\u0000${dims.toolName}\u0000${dims.outcome}`;
    let p = this.pendingTools.get(k);
    if (p === undefined) {
      const d = { ...dims, tokenType: "" };
      p = newSeries("tool_duration", d, durationS, tsMs);
      this.pendingTools.set(k, p);
    }
    add(p, durationS, tsMs);
  }

  /**
   * One new request: its all-input and output token counts, and its duration in seconds when its
   * start is known: its three series, found with one lookup (a backfill observes every request:
   * this is the per-row path).
   */
  observeChat(
    r: { readonly sessionId: string; readonly model: string; readonly provider: string },
    inputAll: number,
    output: number,
    durationS: number | undefined,
    tsMs: number,
  ): void {
    const k = `${r.sessionId}\u0000${r.model}\u0000${r.provider}`;
    let c = this.pendingChat.get(k);
    if (c === undefined) {
      const dims = chatDims(r);
      c = {
        input: newSeries("token_usage", { ...dims, tokenType: "input" }, inputAll, tsMs),
        output: newSeries("token_usage", { ...dims, tokenType: "output" }, output, tsMs),
        duration: undefined,
      };
      this.pendingChat.set(k, c);
    }
    add(c.input, inputAll, tsMs);
    add(c.output, output, tsMs);
    if (durationS === undefined) return;
    c.duration ??= newSeries("operation_duration", { ...c.input.dims, tokenType: "" }, durationS, tsMs);
    add(c.duration, durationS, tsMs);
  }

  /** Forgets the observations of a commit that did not complete (its rows were rolled back). */
  discard(): void {
    this.pendingTools.clear();
    this.pendingChat.clear();
  }

  /** The series observed in the commit in progress, each once. */
  private *observed(): IterableIterator<PendingGenai> {
    for (const c of this.pendingChat.values()) {
      yield c.input;
      yield c.output;
      if (c.duration !== undefined) yield c.duration;
    }
    yield* this.pendingTools.values();
  }

  /** Writes the observations of the commit in progress (call inside its transaction). */
  flush(nowMs: number): void {
    if (this.pendingChat.size === 0 && this.pendingTools.size === 0) return;
    // Up to UPSERT_ROWS series per statement, bound by position in UPSERT_COLUMNS order.
    const args: (string | number)[] = [];
    let rows = 0;
    for (const p of this.observed()) {
      const d = p.dims;
      args.push(d.sessionId, d.model, d.provider, d.tokenType, d.toolName, d.outcome, p.metric);
      args.push(p.count, p.sum, p.min, p.max, nowMs, nowMs, p.tsMs, ...p.counts);
      for (let i = p.counts.length; i < GENAI_BUCKET_COLUMNS; i++) args.push(0);
      if (++rows === UPSERT_ROWS) {
        this.upsert(rows).run(args);
        args.length = 0;
        rows = 0;
      }
    }
    if (rows > 0) this.upsert(rows).run(args);
    this.discard();
  }

  /** Every GenAI histogram series with its buckets (cumulative export). */
  series(): GenaiSeriesRow[] {
    return withCounts(this.reads().all.iterate());
  }

  /**
   * The GenAI series the cumulative TTL keeps (newest event at or after `eventSinceMs`, or changed
   * at or after `updatedSinceMs`), filtered in SQL and read one row at a time: an export of an
   * idle history reads nothing of it. For exports where each series is one row (session id on).
   */
  seriesLive(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }): GenaiSeriesRow[] {
    this.liveGenai ??= this.db.prepare(`${SELECT_SERIES} WHERE ${LIVE} ORDER BY id`);
    return withCounts(this.liveGenai.iterate(liveParams(f)));
  }

  /**
   * One keyset page of seriesLive: the live series with id > `afterId`, at most `limit`, with
   * their buckets, and the id of the last one (the next page's `afterId`; `afterId` when empty).
   * One short synchronous query: no cursor stays open while the page is being sent.
   */
  seriesLivePage(
    f: { readonly eventSinceMs: number; readonly updatedSinceMs: number },
    page: { readonly afterId: number; readonly limit: number },
  ): { readonly rows: GenaiSeriesRow[]; readonly lastId: number } {
    this.pageGenai ??= this.db.prepare(
      `${SELECT_SERIES} WHERE id > @afterId AND ${LIVE} ORDER BY id LIMIT @limit`,
    );
    const got = this.pageGenai.all({
      ...liveParams(f),
      afterId: page.afterId,
      limit: page.limit,
    }) as SeriesDbRow[];
    return { rows: withCounts(got), lastId: got.at(-1)?.id ?? page.afterId };
  }

  /**
   * The request histograms over the usage events with after < id <= upTo (delta export: the same
   * event window, and so the same watermark, as the cline.* counters). Tool durations are known
   * once their call is final: their delta is ToolOutcomes.durationDelta, over the final-call window.
   */
  delta(after: number, upTo: number): GenaiSeriesRow[] {
    const w = new WindowHistograms();
    const add = w.add.bind(w);
    for (const r of this.reads().chatWindow.iterate({ after, upTo }) as IterableIterator<ChatWindowRow>) {
      const dims = chatDims(r);
      add("token_usage", { ...dims, tokenType: "input" }, r.inputAll, r);
      add("token_usage", { ...dims, tokenType: "output" }, r.output, r);
      const d = durationMs(r.startMs, r.tsMs);
      if (d !== undefined) add("operation_duration", { ...dims, tokenType: "" }, d / 1000, r);
    }
    return w.rows();
  }
}

/** The series columns as GenaiSeriesRow names, and the bucket columns b0..b17. */
const SELECT_SERIES = `SELECT id, metric, session_id AS sessionId, model, provider, token_type AS tokenType,
    tool_name AS toolName, outcome, count, sum, min, max, first_ms AS firstMs, updated_ms AS updatedMs,
    last_event_ms AS lastEventMs, ${BUCKETS.join(", ")}
  FROM genai_histograms`;
/** The cumulative TTL (seriesLive). */
const LIVE = "(last_event_ms >= @eventSince OR updated_ms >= @updatedSince)";

function liveParams(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }) {
  const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
  return { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
}

type SeriesDbRow = Omit<GenaiSeriesRow, "counts"> & { id: number } & Record<string, number>;

/**
 * Rows of SELECT_SERIES as GenaiSeriesRow: `counts` is the metric's first boundaries + 1 bucket
 * columns (buckets never hit read as 0).
 */
function withCounts(rows: Iterable<unknown>): GenaiSeriesRow[] {
  const out: GenaiSeriesRow[] = [];
  for (const r of rows as Iterable<SeriesDbRow>) {
    const counts = new Array<number>(GENAI_BOUNDARIES[r.metric].length + 1);
    for (let i = 0; i < counts.length; i++) counts[i] = r[BUCKETS[i] as string] as number;
    out.push({
      metric: r.metric,
      sessionId: r.sessionId,
      model: r.model,
      provider: r.provider,
      tokenType: r.tokenType,
      toolName: r.toolName,
      outcome: r.outcome,
      count: r.count,
      sum: r.sum,
      min: r.min,
      max: r.max,
      counts,
      firstMs: r.firstMs,
      updatedMs: r.updatedMs,
      lastEventMs: r.lastEventMs,
    });
  }
  return out;
}

/** The values of one series upsert, in the order `flush` binds them. */
const UPSERT_COLUMNS = [
  "session_id",
  "model",
  "provider",
  "token_type",
  "tool_name",
  "outcome",
  "metric",
  "count",
  "sum",
  "min",
  "max",
  "first_ms",
  "updated_ms",
  "last_event_ms",
  ...BUCKETS,
] as const;

/**
 * Series per upsert statement. Its values are bound by position, not by name, and several series
 * share one run: in better-sqlite3 each named parameter is a property lookup from native code
 * and each run a native call, which made the per-series upsert cost about 2x what SQLite spends
 * on it (docs/performance.md "GenAI buckets inline").
 */
const UPSERT_ROWS = 16;

/**
 * The upsert of `rows` series, each once per commit transaction (`flush` aggregates, so no two
 * rows of one statement share a key): its totals, and its bucket counts bK = bK + excluded.bK
 * (a batch touches few buckets; the others add 0).
 */
function prepareUpsert(db: Database.Database, rows: number): Database.Statement {
  const row = `(${UPSERT_COLUMNS.map(() => "?").join(", ")})`;
  return db.prepare(
    `INSERT INTO genai_histograms (${UPSERT_COLUMNS.join(", ")})
     VALUES ${Array.from({ length: rows }, () => row).join(",\n       ")}
     ON CONFLICT (metric, session_id, model, provider, token_type, tool_name, outcome) DO UPDATE SET
       count = count + excluded.count, sum = sum + excluded.sum, min = min(min, excluded.min), max = max(max, excluded.max),
       updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms),
       ${BUCKETS.map((b) => `${b} = ${b} + excluded.${b}`).join(", ")}`,
  );
}

function prepareReads(db: Database.Database) {
  return {
    all: db.prepare(`${SELECT_SERIES} ORDER BY id`),
    chatWindow: db.prepare(
      `SELECT e.session_id AS sessionId, e.model, e.provider, e.input + e.cache_read + e.cache_write AS inputAll,
         e.output, e.ts_ms AS tsMs, IFNULL(q.start_ms, 0) AS startMs, e.ingested_ms AS ingestedMs
       FROM events e LEFT JOIN signal_queue q ON q.kind = 'chat' AND q.ref_key = e.dedup_key
       WHERE e.id > @after AND e.id <= @upTo ORDER BY e.id`,
    ),
  };
}
