/**
 * The reads of `genai_rows`: every series, the live ones (the cumulative TTL, in SQL), and a
 * row's histograms expanded into series (a request row holds up to three).
 */
import type Database from "better-sqlite3";
import {
  DUR,
  GENAI_BOUNDARIES,
  type GenaiMetric,
  type GenaiSeriesRow,
  type Histogram,
  histogramColumns,
  MAIN,
  OUT,
} from "./layout.ts";

/** Every column of genai_rows (a request row's three histograms; a tool row uses the first). */
export const SELECT_ROWS = `SELECT id, session_id AS sessionId, client, project, model, provider,
    tool_name AS toolName, outcome,
    ${[...histogramColumns(MAIN), ...histogramColumns(OUT), ...histogramColumns(DUR)].join(", ")}
  FROM genai_rows`;

/** The cumulative TTL (seriesLive): a row with at least one live series. */
export const LIVE = `(${[MAIN, OUT, DUR]
  .map((h) => `${h.prefix}last_event_ms >= @eventSince OR ${h.prefix}updated_ms >= @updatedSince`)
  .join(" OR ")})`;

export interface LiveParams {
  readonly eventSince: number;
  readonly updatedSince: number;
}

export function liveParams(f: {
  readonly eventSinceMs: number;
  readonly updatedSinceMs: number;
}): LiveParams {
  const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);
  return { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
}

export type DbRow = {
  readonly id: number;
  readonly sessionId: string;
  readonly client: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly toolName: string;
  readonly outcome: string;
} & { readonly [column: string]: string | number | null };

/** A row's series in their export order (input, output, duration; or its tool). */
export function expand(r: DbRow, live: LiveParams | undefined): GenaiSeriesRow[] {
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
      client: r.client,
      project: r.project,
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

export function toSeries(rows: Iterable<unknown>, live: LiveParams | undefined): GenaiSeriesRow[] {
  const out: GenaiSeriesRow[] = [];
  for (const r of rows as Iterable<DbRow>) out.push(...expand(r, live));
  return out;
}

export function prepareReads(db: Database.Database) {
  return {
    all: db.prepare(`${SELECT_ROWS} ORDER BY id`),
    chatWindow: db.prepare(
      `SELECT e.session_id AS sessionId, e.client, e.project, e.model, e.provider, e.input + e.cache_read + e.cache_write AS inputAll,
         e.output, e.ts_ms AS tsMs, IFNULL(e.start_ms, 0) AS startMs, e.ingested_ms AS ingestedMs
       FROM events e
       WHERE e.id > @after AND e.id <= @upTo ORDER BY e.id`,
    ),
  };
}
