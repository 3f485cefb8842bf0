import type Database from "better-sqlite3";
import { SCHEMA_VERSION } from "../schema.ts";
import { clientColumn } from "../statements.ts";

/** The key of a usage series (and the prefix of a tool series key). */
export const SERIES_KEY = "session_id, agent, project, model, provider, client";
/** The key columns read, `client` as `clientColumn` says for the ledger's version. */
const seriesCols = (version: number) =>
  `session_id AS sessionId, agent, project, model, provider, ${clientColumn(version)} AS client`;

export interface UsageSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  /** `cline.client` ('' for a series from before schema v2, or an adapter that does not say). */
  readonly client: string;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly events: number;
  readonly firstMs: number;
  /** Ingestion time of the last row added (when the total last changed). */
  readonly updatedMs: number;
  /** The newest event time (`ts_ms`) of the rows summed: when the series last saw activity. */
  readonly lastEventMs: number;
}

export interface ToolSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly client: string;
  readonly toolName: string;
  /**
   * For `calls`: whether the calls' usage was known when they were first counted. The tokens of
   * a call upgraded later (its message's metrics arrived after the call) sum in the `true` row.
   */
  readonly usageKnown: boolean;
  readonly calls: number;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest `ts_ms` of the calls summed. */
  readonly lastEventMs: number;
}

/** Rows with after < id <= upTo: one delta window of a table. */
export interface IdWindow {
  readonly after: number;
  readonly upTo: number;
}

/** The cumulative TTL as a row filter: a series is live by its newest event or its last change. */
export interface LiveFilter {
  readonly eventSinceMs: number;
  readonly updatedSinceMs: number;
}

/** SQLite integers: an unbounded side of the filter becomes the smallest safe integer. */
function liveParams(f: LiveFilter): { eventSince: number; updatedSince: number } {
  const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
  return { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
}

/** A keyset page: rows with id > afterId, at most limit of them. */
export interface SeriesPage {
  readonly afterId: number;
  readonly limit: number;
}

type RawTool = Omit<ToolSeriesRow, "usageKnown"> & { usageKnown: number };
const toTool = (r: RawTool): ToolSeriesRow => ({ ...r, usageKnown: r.usageKnown === 1 });

/**
 * What the exporters read: the running series totals (cumulative) and the rows of one id
 * window aggregated per series (delta), plus the ledger's audit reads.
 */
export class SeriesReads {
  private readonly st;
  private deltaSt: { usage: Database.Statement; tool: Database.Statement } | undefined;
  private liveSt: { usage: Database.Statement; tool: Database.Statement } | undefined;
  private pageSt: { usage: Database.Statement; tool: Database.Statement } | undefined;
  private countSt: Database.Statement | undefined;

  private readonly cols: string;

  constructor(
    private readonly db: Database.Database,
    version: number = SCHEMA_VERSION,
  ) {
    const SERIES_COLS = seriesCols(version);
    this.cols = SERIES_COLS;
    this.st = {
      usage: db.prepare(
        `SELECT ${SERIES_COLS}, input, output, cache_read AS cacheRead, cache_write AS cacheWrite, events,
           first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs FROM usage_series ORDER BY id`,
      ),
      tool: db.prepare(
        `SELECT ${SERIES_COLS}, tool_name AS toolName, usage_known AS usageKnown, calls, input, output,
           cache_read AS cacheRead, cache_write AS cacheWrite, first_ms AS firstMs, updated_ms AS updatedMs,
           last_event_ms AS lastEventMs
         FROM tool_series ORDER BY id`,
      ),
      maxIds: db.prepare(
        "SELECT (SELECT IFNULL(MAX(id), 0) FROM events) AS event, (SELECT IFNULL(MAX(id), 0) FROM tool_calls) AS call",
      ),
      allEvents: db.prepare("SELECT * FROM events ORDER BY id"),
      counts: db.prepare(
        `SELECT (SELECT COUNT(*) FROM events) AS events, (SELECT COUNT(*) FROM tool_calls) AS calls,
           (SELECT COUNT(*) FROM checkpoints) AS sources`,
      ),
    };
  }

  usageSeries(): UsageSeriesRow[] {
    return this.st.usage.all() as UsageSeriesRow[];
  }

  /**
   * The series whose newest event is at or after `eventSinceMs` or that changed at or after
   * `updatedSinceMs` (the cumulative exporter's TTL, in SQL), one row at a time: an export reads
   * what it sends, not the whole history.
   */
  *liveUsageSeries(f: LiveFilter): IterableIterator<UsageSeriesRow> {
    yield* this.live().usage.iterate(liveParams(f)) as IterableIterator<UsageSeriesRow>;
  }

  /** As liveUsageSeries, for the tool series. */
  *liveToolSeries(f: LiveFilter): IterableIterator<ToolSeriesRow> {
    for (const r of this.live().tool.iterate(liveParams(f)) as IterableIterator<RawTool>) yield toTool(r);
  }

  /**
   * One keyset page of liveUsageSeries: the live rows with id > `afterId`, at most `limit`, in id
   * order, each with its id (the next page's `afterId`). A page is one short synchronous query, so
   * no cursor stays open while a request is being sent and ingestion can commit between pages.
   */
  *liveUsagePage(
    f: LiveFilter,
    page: SeriesPage,
  ): IterableIterator<UsageSeriesRow & { readonly id: number }> {
    yield* this.livePages().usage.iterate({ ...liveParams(f), ...page }) as IterableIterator<
      UsageSeriesRow & { id: number }
    >;
  }

  /** As liveUsagePage, for the tool series. */
  *liveToolPage(f: LiveFilter, page: SeriesPage): IterableIterator<ToolSeriesRow & { readonly id: number }> {
    for (const r of this.livePages().tool.iterate({ ...liveParams(f), ...page }) as IterableIterator<
      RawTool & { id: number }
    >)
      yield { ...r, usageKnown: r.usageKnown === 1 };
  }

  /**
   * How many usage and tool series the filter keeps: the size of a cumulative export read in
   * pages (its progress), counted once when it is longer than one page.
   */
  liveCount(f: LiveFilter): number {
    if (this.countSt === undefined) {
      const where = `WHERE last_event_ms >= @eventSince OR updated_ms >= @updatedSince`;
      this.countSt = this.db.prepare(
        `SELECT (SELECT COUNT(*) FROM usage_series ${where}) + (SELECT COUNT(*) FROM tool_series ${where}) AS n`,
      );
    }
    return (this.countSt.get(liveParams(f)) as { n: number }).n;
  }

  private livePages(): { usage: Database.Statement; tool: Database.Statement } {
    if (this.pageSt !== undefined) return this.pageSt;
    // id first: the rowid range is the scan, the TTL a filter on it.
    const where = `WHERE id > @afterId AND (last_event_ms >= @eventSince OR updated_ms >= @updatedSince)`;
    this.pageSt = {
      usage: this.db.prepare(
        `SELECT id, ${this.cols}, input, output, cache_read AS cacheRead, cache_write AS cacheWrite, events,
           first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs FROM usage_series
         ${where} ORDER BY id LIMIT @limit`,
      ),
      tool: this.db.prepare(
        `SELECT id, ${this.cols}, tool_name AS toolName, usage_known AS usageKnown, calls, input, output,
           cache_read AS cacheRead, cache_write AS cacheWrite, first_ms AS firstMs, updated_ms AS updatedMs,
           last_event_ms AS lastEventMs
         FROM tool_series ${where} ORDER BY id LIMIT @limit`,
      ),
    };
    return this.pageSt;
  }

  private live(): { usage: Database.Statement; tool: Database.Statement } {
    if (this.liveSt !== undefined) return this.liveSt;
    const where = `WHERE last_event_ms >= @eventSince OR updated_ms >= @updatedSince`;
    this.liveSt = {
      usage: this.db.prepare(
        `SELECT ${this.cols}, input, output, cache_read AS cacheRead, cache_write AS cacheWrite, events,
           first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs FROM usage_series
         ${where} ORDER BY id`,
      ),
      tool: this.db.prepare(
        `SELECT ${this.cols}, tool_name AS toolName, usage_known AS usageKnown, calls, input, output,
           cache_read AS cacheRead, cache_write AS cacheWrite, first_ms AS firstMs, updated_ms AS updatedMs,
           last_event_ms AS lastEventMs
         FROM tool_series ${where} ORDER BY id`,
      ),
    };
    return this.liveSt;
  }

  toolSeries(): ToolSeriesRow[] {
    return (this.st.tool.all() as RawTool[]).map(toTool);
  }

  /** Usage aggregated per series over the events of one window (delta export). */
  usageDelta(events: IdWindow): UsageSeriesRow[] {
    return this.delta().usage.all({ after: events.after, upTo: events.upTo }) as UsageSeriesRow[];
  }

  /**
   * Tool calls aggregated per series over one window: the calls of the call window, counted where
   * they were first counted, plus the tokens of earlier calls that the events of the event window
   * upgraded (calls 0: they were counted when first seen). Each call's count and tokens are in
   * exactly one window, however the two watermarks move.
   */
  toolDelta(calls: IdWindow, events: IdWindow): ToolSeriesRow[] {
    return (
      this.delta().tool.all({
        callAfter: calls.after,
        callUpTo: calls.upTo,
        eventAfter: events.after,
        eventUpTo: events.upTo,
      }) as RawTool[]
    ).map(toTool);
  }

  /** Highest event and call ids: the delta exporter's next watermark candidates. */
  maxIds(): { event: number; call: number } {
    return this.st.maxIds.get() as { event: number; call: number };
  }

  /** Events of the ledger in ingestion order (tests, audits, cost verification). */
  *iterateEvents(): IterableIterator<Record<string, unknown>> {
    yield* this.st.allEvents.iterate() as IterableIterator<Record<string, unknown>>;
  }

  counts(): { events: number; calls: number; sources: number } {
    return this.st.counts.get() as { events: number; calls: number; sources: number };
  }

  /** Prepared on first use: only a writable ledger (at this build's schema) exports deltas. */
  private delta(): { usage: Database.Statement; tool: Database.Statement } {
    if (this.deltaSt !== undefined) return this.deltaSt;
    const upgrades = `UNION ALL
           SELECT c.session_id, c.agent, c.project, c.model, c.provider, c.client, c.tool_name, 1, 0, c.share_input,
             c.share_output, c.share_cache_read, c.share_cache_write, e.ingested_ms, c.ts_ms, @callUpTo + e.id
           FROM events e JOIN tool_calls c ON c.usage_key = e.dedup_key AND c.first_known = 0
           WHERE e.id > @eventAfter AND e.id <= @eventUpTo`;
    this.deltaSt = {
      usage: this.db.prepare(
        `SELECT ${this.cols}, SUM(input) AS input, SUM(output) AS output, SUM(cache_read) AS cacheRead,
           SUM(cache_write) AS cacheWrite, COUNT(*) AS events, MIN(ingested_ms) AS firstMs,
           MAX(ingested_ms) AS updatedMs, MAX(ts_ms) AS lastEventMs
         FROM events WHERE id > @after AND id <= @upTo GROUP BY ${SERIES_KEY} ORDER BY MIN(id)`,
      ),
      tool: this.db.prepare(
        `SELECT session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName,
           known AS usageKnown, SUM(n) AS calls, SUM(si) AS input, SUM(so) AS output, SUM(sr) AS cacheRead,
           SUM(sw) AS cacheWrite, MIN(ingested) AS firstMs, MAX(ingested) AS updatedMs, MAX(ts) AS lastEventMs
         FROM (
           SELECT session_id, agent, project, model, provider, client, tool_name, first_known AS known, 1 AS n,
             share_input * first_known AS si, share_output * first_known AS so, share_cache_read * first_known AS sr,
             share_cache_write * first_known AS sw, ingested_ms AS ingested, ts_ms AS ts, id AS ord
           FROM tool_calls WHERE id > @callAfter AND id <= @callUpTo
           ${upgrades}
         )
         GROUP BY ${SERIES_KEY}, tool_name, known ORDER BY MIN(ord)`,
      ),
    };
    return this.deltaSt;
  }
}
