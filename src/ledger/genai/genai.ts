/**
 * The GenAI histogram series (gen_ai.client.token.usage, gen_ai.client.operation.duration,
 * cline.tool.duration; src/export/genai/metrics.ts): running totals and bucket counts per series,
 * written by Signals in the same transaction as the rows they sum, read by the metric producer like
 * the other series. Stored as `genai_rows` (tables/genai.ts): a request's three series of one session,
 * model and provider (input tokens, output tokens, operation duration) are ONE row, so a commit
 * writes one upsert per (session, model, provider) instead of three; a tool duration series is a
 * row of its own (its tool and outcome set). The counts are columns (b0..b17, o0..o14, d0..d14).
 */
import type Database from "better-sqlite3";
import { durationMs } from "../../adapter/timing.ts";
import {
  chatDims,
  DUR,
  GENAI_BUCKET_COLUMNS,
  type GenaiDims,
  type GenaiSeriesRow,
  OUT,
  TOKEN_BUCKETS,
} from "./layout.ts";
import { type DbRow, expand, LIVE, liveParams, prepareReads, SELECT_ROWS, toSeries } from "./reads.ts";
import { add, newSeries, type PendingGenai, prepareUpsert, pushHistogram, UPSERT_ROWS } from "./upserts.ts";
import { WindowHistograms } from "./window.ts";

export {
  GENAI_BOUNDARIES,
  GENAI_BUCKET_COLUMNS,
  GENAI_DURATION_BOUNDARIES,
  GENAI_TOKEN_BOUNDARIES,
  type GenaiDims,
  type GenaiMetric,
  type GenaiSeriesRow,
  TOOL_DURATION_BOUNDARIES,
} from "./layout.ts";
export { WindowHistograms } from "./window.ts";

interface ChatWindowRow {
  sessionId: string;
  client: string;
  project: string;
  model: string;
  provider: string;
  inputAll: number;
  output: number;
  tsMs: number;
  startMs: number;
  ingestedMs: number;
}

/** A request's three series in one commit (observeChat); duration only once one had a start. */
interface PendingChat {
  readonly input: PendingGenai;
  readonly output: PendingGenai;
  duration: PendingGenai | undefined;
}

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
    const k = `${dims.sessionId}\u0000${dims.client}\u0000${dims.model}\u0000${dims.provider}\u0000${dims.toolName}\u0000${dims.outcome}`;
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
    r: {
      readonly sessionId: string;
      readonly client?: string | undefined;
      readonly project: string;
      readonly model: string;
      readonly provider: string;
    },
    inputAll: number,
    output: number,
    durationS: number | undefined,
    tsMs: number,
  ): void {
    const k = `${r.sessionId}\u0000${r.client ?? ""}\u0000${r.model}\u0000${r.provider}`;
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
      args.push(d.sessionId, d.client, d.project, d.model, d.provider);
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
      args.push(d.sessionId, d.client, d.project, d.model, d.provider, d.toolName, d.outcome);
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
