/**
 * The GenAI histogram series (gen_ai.client.token.usage, gen_ai.client.operation.duration,
 * cline.tool.duration; src/export/genai/metrics.ts): running totals and bucket counts per series,
 * written by Signals in the same transaction as the rows they sum, read by the metric producer like
 * the other series. Stored as `genai_rows` (schema v13): a request's three series of one session,
 * model and provider (input tokens, output tokens, operation duration) are ONE row, so a commit
 * writes one upsert per (session, model, provider) instead of three; a tool duration series is a
 * row of its own (its tool and outcome set). The counts are columns (b0..b17, o0..o14, d0..d14).
 */
import type Database from "better-sqlite3";
import { durationMs } from "../adapter/timing.ts";
import { bucketIndex } from "./schema.ts";

export type GenaiMetric = "token_usage" | "operation_duration" | "tool_duration";

/**
 * Explicit bucket boundaries (inclusive upper bounds). Token usage and operation duration are the
 * GenAI semantic conventions' own; tool durations add three longer bounds (commands run minutes).
 * Persisted as bucket indexes (column bK of genai_rows counts bucket K): they change only
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
 * Bucket count columns of a genai_rows row's first histogram (b0..b17: a request's input tokens,
 * or a tool's duration): the longest boundary list + 1. A metric uses its first boundaries + 1 of
 * them; the others stay 0. A request's output tokens have o0..o14, its duration d0..d14. Fixed
 * by the schema: a longer list needs a migration that adds columns.
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

/**
 * One histogram's columns in a genai_rows row: `count, sum, min, max, first_ms, updated_ms,
 * last_event_ms` behind a prefix, then its bucket columns. NULL count = no such series (yet).
 */
interface Histogram {
  readonly prefix: string;
  readonly buckets: readonly string[];
}
const bucketColumns = (p: string, n: number) => Array.from({ length: n }, (_, i) => `${p}${i}`);
/** A request row's input tokens, or a tool row's duration. */
const MAIN: Histogram = { prefix: "", buckets: BUCKETS };
/** A request row's output tokens. */
const OUT: Histogram = { prefix: "out_", buckets: bucketColumns("o", GENAI_TOKEN_BOUNDARIES.length + 1) };
/** A request row's operation duration. */
const DUR: Histogram = { prefix: "dur_", buckets: bucketColumns("d", GENAI_DURATION_BOUNDARIES.length + 1) };
const TOTALS = ["count", "sum", "min", "max", "first_ms", "updated_ms", "last_event_ms"] as const;
const histogramColumns = (h: Histogram, buckets = h.buckets.length): string[] => [
  ...TOTALS.map((c) => `${h.prefix}${c}`),
  ...h.buckets.slice(0, buckets),
];

/** Input tokens use the first token buckets of MAIN's columns (b0..b14). */
const TOKEN_BUCKETS = GENAI_TOKEN_BOUNDARIES.length + 1;

export class GenaiSeries {
  /** The series upserts by kind and row count, prepared on first use. */
  private readonly upserts = new Map<string, Database.Statement>();
  private r: ReturnType<typeof prepareReads> | undefined;
  private liveGenai: Database.Statement | undefined;
  private pageGenai: Database.Statement | undefined;
  /**
   * Observations of the commit in progress, each series once (written once per row by
   * `flush`): requests by session, model and provider; tool calls by their series.
   */
  private readonly pendingChat = new Map<string, PendingChat>();
  private readonly pendingTools = new Map<string, PendingGenai>();

  constructor(private readonly db: Database.Database) {}

  /** The upsert of `rows` request or tool rows (1..UPSERT_ROWS), prepared on first use. */
  private upsert(kind: "request" | "tool", rows: number): Database.Statement {
    const k = `${kind}${rows}`;
    let st = this.upserts.get(k);
    if (st === undefined) {
      st = prepareUpsert(this.db, kind, rows);
      this.upserts.set(k, st);
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
   * start is known: its three series, one row (a backfill observes every request: this is the
   * per-row path).
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

  /** Writes the observations of the commit in progress (call inside its transaction). */
  flush(nowMs: number): void {
    if (this.pendingChat.size === 0 && this.pendingTools.size === 0) return;
    // Up to UPSERT_ROWS rows per statement, bound by position (prepareUpsert's column order).
    const args: (string | number | null)[] = [];
    let rows = 0;
    for (const c of this.pendingChat.values()) {
      const d = c.input.dims;
      args.push(d.sessionId, d.model, d.provider);
      pushHistogram(args, c.input, nowMs, TOKEN_BUCKETS);
      pushHistogram(args, c.output, nowMs, OUT.buckets.length);
      pushHistogram(args, c.duration, nowMs, DUR.buckets.length);
      if (++rows === UPSERT_ROWS) {
        this.upsert("request", rows).run(args);
        args.length = 0;
        rows = 0;
      }
    }
    if (rows > 0) this.upsert("request", rows).run(args);
    args.length = 0;
    rows = 0;
    for (const p of this.pendingTools.values()) {
      const d = p.dims;
      args.push(d.sessionId, d.model, d.provider, d.toolName, d.outcome);
      pushHistogram(args, p, nowMs, GENAI_BUCKET_COLUMNS);
      if (++rows === UPSERT_ROWS) {
        this.upsert("tool", rows).run(args);
        args.length = 0;
        rows = 0;
      }
    }
    if (rows > 0) this.upsert("tool", rows).run(args);
    this.discard();
  }

  /** Every GenAI histogram series with its buckets (cumulative export). */
  series(): GenaiSeriesRow[] {
    return toSeries(this.reads().all.iterate(), undefined);
  }

  /**
   * The GenAI series the cumulative TTL keeps (newest event at or after `eventSinceMs`, or changed
   * at or after `updatedSinceMs`), filtered in SQL and read one row at a time: an export of an
   * idle history reads nothing of it. For exports where each series is one point (session id on).
   */
  seriesLive(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }): GenaiSeriesRow[] {
    this.liveGenai ??= this.db.prepare(`${SELECT_ROWS} WHERE ${LIVE} ORDER BY id`);
    const p = liveParams(f);
    return toSeries(this.liveGenai.iterate(p), p);
  }

  /**
   * One keyset page of seriesLive: the live series of the rows with id > `afterId`, at most
   * `limit` series, whole rows only (a request row holds up to three series), and the id of the
   * last row taken (the next page's `afterId`; `afterId` when none); `done` once no live row is
   * left after it. One short synchronous query: no cursor stays open while the page is sent.
   */
  seriesLivePage(
    f: { readonly eventSinceMs: number; readonly updatedSinceMs: number },
    page: { readonly afterId: number; readonly limit: number },
  ): { readonly rows: GenaiSeriesRow[]; readonly lastId: number; readonly done: boolean } {
    this.pageGenai ??= this.db.prepare(
      `${SELECT_ROWS} WHERE id > @afterId AND ${LIVE} ORDER BY id LIMIT @limit`,
    );
    const p = liveParams(f);
    // Each live row holds at least one live series: `limit` rows are enough to fill the page.
    const got = this.pageGenai.all({ ...p, afterId: page.afterId, limit: page.limit }) as DbRow[];
    const rows: GenaiSeriesRow[] = [];
    let lastId = page.afterId;
    let taken = 0;
    for (const r of got) {
      const series = expand(r, p);
      if (rows.length + series.length > page.limit) break;
      rows.push(...series);
      lastId = r.id;
      taken++;
    }
    return { rows, lastId, done: taken === got.length && got.length < page.limit };
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

/** One histogram's values in upsert order (`histogramColumns`); absent: NULL totals, 0 buckets. */
function pushHistogram(
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

/** Every column of genai_rows (a request row's three histograms; a tool row uses the first). */
const SELECT_ROWS = `SELECT id, session_id AS sessionId, model, provider, tool_name AS toolName, outcome,
    ${[...histogramColumns(MAIN), ...histogramColumns(OUT), ...histogramColumns(DUR)].join(", ")}
  FROM genai_rows`;
/** The cumulative TTL (seriesLive): a row with at least one live series. */
const LIVE = `(${[MAIN, OUT, DUR]
  .map((h) => `${h.prefix}last_event_ms >= @eventSince OR ${h.prefix}updated_ms >= @updatedSince`)
  .join(" OR ")})`;

interface LiveParams {
  readonly eventSince: number;
  readonly updatedSince: number;
}

function liveParams(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }): LiveParams {
  const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
  return { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
}

type DbRow = {
  readonly id: number;
  readonly sessionId: string;
  readonly model: string;
  readonly provider: string;
  readonly toolName: string;
  readonly outcome: string;
} & { readonly [column: string]: string | number | null };

/** A row's series in the order they were created before v13 (input, output, duration; or its tool). */
function expand(r: DbRow, live: LiveParams | undefined): GenaiSeriesRow[] {
  const out: GenaiSeriesRow[] = [];
  const one = (h: Histogram, metric: GenaiMetric, tokenType: string, toolName: string, outcome: string) => {
    const p = h.prefix;
    const count = r[`${p}count`] as number | null;
    if (count === null) return;
    const updatedMs = r[`${p}updated_ms`] as number;
    const lastEventMs = r[`${p}last_event_ms`] as number;
    if (live !== undefined && lastEventMs < live.eventSince && updatedMs < live.updatedSince) return;
    const counts = new Array<number>(GENAI_BOUNDARIES[metric].length + 1);
    for (let i = 0; i < counts.length; i++) counts[i] = r[h.buckets[i] as string] as number;
    out.push({
      metric,
      sessionId: r.sessionId,
      model: r.model,
      provider: r.provider,
      tokenType,
      toolName,
      outcome,
      count,
      sum: r[`${p}sum`] as number,
      min: r[`${p}min`] as number,
      max: r[`${p}max`] as number,
      counts,
      firstMs: r[`${p}first_ms`] as number,
      updatedMs,
      lastEventMs,
    });
  };
  if (r.outcome !== "") one(MAIN, "tool_duration", "", r.toolName, r.outcome);
  else {
    one(MAIN, "token_usage", "input", "", "");
    one(OUT, "token_usage", "output", "", "");
    one(DUR, "operation_duration", "", "", "");
  }
  return out;
}

function toSeries(rows: Iterable<unknown>, live: LiveParams | undefined): GenaiSeriesRow[] {
  const out: GenaiSeriesRow[] = [];
  for (const r of rows as Iterable<DbRow>) out.push(...expand(r, live));
  return out;
}

/**
 * Rows per upsert statement. Its values are bound by position, not by name, and several rows
 * share one run: in better-sqlite3 each named parameter is a property lookup from native code
 * and each run a native call, which made the per-series upsert cost about 2x what SQLite spends
 * on it (docs/performance.md "GenAI buckets inline").
 */
const UPSERT_ROWS = 16;

/**
 * How one histogram's columns merge on conflict. A histogram may be absent on either side (NULL
 * totals: a request row before its first known duration, or a commit without one); its bucket
 * columns always add (0 when absent).
 */
function mergeHistogram(h: Histogram, buckets: number): string[] {
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
 * The upsert of `rows` request rows (session, model, provider: input, output and duration) or
 * tool rows (session, model, provider, tool, outcome: duration), each once per commit
 * transaction (`flush` aggregates, so no two rows of one statement share a key).
 */
function prepareUpsert(db: Database.Database, kind: "request" | "tool", rows: number): Database.Statement {
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
     ON CONFLICT (session_id, model, provider, tool_name, outcome) DO UPDATE SET
       ${hist.flatMap(([h, n]) => mergeHistogram(h, n)).join(",\n       ")}`,
  );
}

function prepareReads(db: Database.Database) {
  return {
    all: db.prepare(`${SELECT_ROWS} ORDER BY id`),
    chatWindow: db.prepare(
      `SELECT e.session_id AS sessionId, e.model, e.provider, e.input + e.cache_read + e.cache_write AS inputAll,
         e.output, e.ts_ms AS tsMs, IFNULL(e.start_ms, 0) AS startMs, e.ingested_ms AS ingestedMs
       FROM events e
       WHERE e.id > @after AND e.id <= @upTo ORDER BY e.id`,
    ),
  };
}
