/**
 * `cline.tool.calls` by `cline.tool.outcome` (docs/metrics.md "Tool outcome"): a call is counted
 * once it is FINAL, that is once its tool_calls row has its signal record (`signal_seq`: its
 * tool_result was read, or its document or turn ended without one: outcome unknown). A counter
 * cannot move a call from `unknown` to `success` later, so nothing is counted before the outcome
 * is decided.
 *
 * The seqs are the order in which calls became final (src/ledger/signals/signals.ts), so both exports are
 * reads over seq ranges of tool_calls (its partial index tool_calls_signal_seq):
 * - cumulative: running totals per series (`tool_outcome_series`), brought up to the last final
 *   call (`tool_outcome_state.counted_seq`) by `count()` inside the transaction that made them final,
 *   one grouped statement per transaction (not one upsert per call);
 * - delta: the final calls of a seq window (after < seq <= upTo), its watermark
 *   `export_state.final_call_watermark`, committed with the exporter's other watermarks. The same
 *   window gives the delta `cline.tool.duration` histograms.
 * The record and the dimensions are one row, so nothing is joined. `usage_known` is
 * tool_calls.first_known (immutable: the two temporalities agree).
 */
import type Database from "better-sqlite3";
import { durationMs, type ToolOutcome } from "../../adapter/timing.ts";
import { type GenaiSeriesRow, WindowHistograms } from "../genai/genai.ts";
import type { IdWindow, LiveFilter, SeriesPage, ToolSeriesRow } from "../usage/series.ts";

/** One `cline.tool.calls` series: final calls by tool, usage knowledge and outcome. */
export interface ToolOutcomeRow
  extends Pick<
    ToolSeriesRow,
    "sessionId" | "agent" | "project" | "model" | "provider" | "client" | "toolName"
  > {
  /** Whether the paying response's usage was known when the call was first read. */
  readonly usageKnown: boolean;
  readonly outcome: ToolOutcome;
  readonly calls: number;
  readonly firstMs: number;
  /** Ingestion time of the last change (the transaction that made its last call final). */
  readonly updatedMs: number;
  /** The newest calling-message `ts` of the calls summed. */
  readonly lastEventMs: number;
}

type Raw = Omit<ToolOutcomeRow, "usageKnown"> & { usageKnown: number };
const toRow = (r: Raw): ToolOutcomeRow => ({ ...r, usageKnown: r.usageKnown === 1 });

const KEY = "session_id, agent, project, model, provider, tool_name, usage_known, outcome, client";
const COLS = `session_id AS sessionId, agent, project, model, provider, client, tool_name AS toolName,
  usage_known AS usageKnown, outcome, calls, first_ms AS firstMs, updated_ms AS updatedMs,
  last_event_ms AS lastEventMs`;
/** A final call's series key, from its tool_calls row (alias c). */
const CALL_KEY = `c.session_id, c.agent, c.project, c.model, c.provider, c.tool_name, c.first_known,
  IFNULL(c.outcome, 'unknown'), c.client`;

const clamp = (ms: number): number => (Number.isFinite(ms) ? Math.trunc(ms) : Number.MIN_SAFE_INTEGER);

interface DurationRow {
  sessionId: string;
  project: string;
  client: string;
  model: string;
  provider: string;
  toolName: string;
  outcome: string;
  tsMs: number;
  endMs: number;
  ingestedMs: number;
}

export class ToolOutcomes {
  private w: ReturnType<typeof prepareWrites> | undefined;
  private r: ReturnType<typeof prepareReads> | undefined;

  constructor(private readonly db: Database.Database) {}

  private writes(): ReturnType<typeof prepareWrites> {
    this.w ??= prepareWrites(this.db);
    return this.w;
  }

  /** Prepared on first use: only a writer (at this build's schema) exports. */
  private reads(): ReturnType<typeof prepareReads> {
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /**
   * Adds the calls final since the last count to the running series: call inside the
   * transaction that made them final (Signals.flush, Signals.finalizeQuiet), so the totals and
   * the records commit together. Returns how many series it changed; free when none is new.
   */
  count(nowMs: number): number {
    const w = this.writes();
    const s = w.state.get() as { counted: number; max: number };
    if (s.max <= s.counted) return 0;
    const n = w.add.run({ after: s.counted, upTo: s.max, nowMs }).changes;
    w.advance.run({ upTo: s.max });
    return n;
  }

  /** Every series (tests, audits). */
  series(): ToolOutcomeRow[] {
    return (this.reads().all.all() as Raw[]).map(toRow);
  }

  /** The series the cumulative TTL keeps (see SeriesReads.liveToolSeries), one row at a time. */
  *live(f: LiveFilter): IterableIterator<ToolOutcomeRow> {
    const params = { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs) };
    for (const r of this.reads().live.iterate(params) as IterableIterator<Raw>) yield toRow(r);
  }

  /** One keyset page of `live`: rows with id > afterId, at most limit, each with its id. */
  *livePage(f: LiveFilter, page: SeriesPage): IterableIterator<ToolOutcomeRow & { readonly id: number }> {
    const params = { eventSince: clamp(f.eventSinceMs), updatedSince: clamp(f.updatedSinceMs), ...page };
    for (const r of this.reads().page.iterate(params) as IterableIterator<Raw & { id: number }>)
      yield { ...r, usageKnown: r.usageKnown === 1 };
  }

  /** The highest seq of a final call (a cumulative exporter's watermark; the end of every window). */
  maxSeq(): number {
    return (this.reads().maxSeq.get() as { max: number }).max;
  }

  /**
   * The end of the next delta window after `after`: the seq of its `limit`-th final call, or the
   * last final call when fewer are left.
   */
  windowEnd(after: number, limit: number): number {
    const r = this.reads().nth.get({ after, skip: Math.max(0, Math.trunc(limit) - 1) }) as
      | { seq: number }
      | undefined;
    return r?.seq ?? Math.max(after, this.maxSeq());
  }

  /** Whether a call became final after `after` (a delta backlog). */
  pending(after: number): boolean {
    return this.reads().pending.get({ after }) !== undefined;
  }

  /** The final calls of one window aggregated per series (delta `cline.tool.calls`). */
  delta(w: IdWindow): ToolOutcomeRow[] {
    return (this.reads().delta.all(w) as Raw[]).map(toRow);
  }

  /**
   * `cline.tool.duration` over the final calls of one window (delta): the observation the
   * cumulative series got when each call became final (Signals.observeToolDuration: durationMs
   * of its ts and end, in seconds; calls without a valid time have none).
   */
  durationDelta(w: IdWindow): GenaiSeriesRow[] {
    const out = new WindowHistograms();
    for (const r of this.reads().durations.iterate(w) as IterableIterator<DurationRow>) {
      const d = durationMs(r.tsMs, r.endMs);
      if (d === undefined) continue;
      const dims = {
        sessionId: r.sessionId,
        project: r.project,
        client: r.client,
        model: r.model,
        provider: r.provider,
        tokenType: "",
        toolName: r.toolName,
        outcome: r.outcome,
      };
      out.add("tool_duration", dims, d / 1000, r);
    }
    return out.rows();
  }
}

// Every read of the final calls is a seq range of the partial index tool_calls_signal_seq (the
// plans are checked in test/ledger/tool-outcomes.test.ts): never a scan of every call.
/** The statements that read the final calls, by name (exported for their query-plan test). */
export const QUEUE_SQL = Object.freeze({
  add: `INSERT INTO tool_outcome_series (${KEY}, calls, first_ms, updated_ms, last_event_ms)
    SELECT ${CALL_KEY}, COUNT(*), @nowMs, @nowMs, MAX(c.ts_ms)
    FROM tool_calls c
    WHERE c.signal_seq > @after AND c.signal_seq <= @upTo
    GROUP BY ${CALL_KEY}
    ON CONFLICT (${KEY}) DO UPDATE SET calls = calls + excluded.calls, updated_ms = excluded.updated_ms,
      last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
  nth: `SELECT signal_seq AS seq FROM tool_calls WHERE signal_seq > @after
    ORDER BY signal_seq LIMIT 1 OFFSET @skip`,
  pending: "SELECT 1 FROM tool_calls WHERE signal_seq > @after LIMIT 1",
  delta: `SELECT c.session_id AS sessionId, c.agent, c.project, c.model, c.provider, c.client,
      c.tool_name AS toolName,
      c.first_known AS usageKnown, IFNULL(c.outcome, 'unknown') AS outcome, COUNT(*) AS calls,
      MIN(c.ingested_ms) AS firstMs, MAX(c.ingested_ms) AS updatedMs, MAX(c.ts_ms) AS lastEventMs
    FROM tool_calls c
    WHERE c.signal_seq > @after AND c.signal_seq <= @upTo
    GROUP BY ${CALL_KEY} ORDER BY MIN(c.signal_seq)`,
  durations: `SELECT c.session_id AS sessionId, c.project, c.client, c.model, c.provider, c.tool_name AS toolName,
      IFNULL(c.outcome, 'unknown') AS outcome, c.ts_ms AS tsMs, c.end_ms AS endMs, c.ingested_ms AS ingestedMs
    FROM tool_calls c
    WHERE c.signal_seq > @after AND c.signal_seq <= @upTo ORDER BY c.signal_seq`,
  max: "SELECT IFNULL(MAX(signal_seq), 0) AS max FROM tool_calls WHERE signal_seq IS NOT NULL",
});

function prepareWrites(db: Database.Database) {
  return {
    state: db.prepare(
      `SELECT counted_seq AS counted, (${QUEUE_SQL.max}) AS max FROM tool_outcome_state WHERE id = 1`,
    ),
    add: db.prepare(QUEUE_SQL.add),
    advance: db.prepare("UPDATE tool_outcome_state SET counted_seq = @upTo WHERE id = 1"),
  };
}

function prepareReads(db: Database.Database) {
  const live = "(last_event_ms >= @eventSince OR updated_ms >= @updatedSince)";
  return {
    all: db.prepare(`SELECT ${COLS} FROM tool_outcome_series ORDER BY id`),
    live: db.prepare(`SELECT ${COLS} FROM tool_outcome_series WHERE ${live} ORDER BY id`),
    // id first: the rowid range is the scan, the TTL a filter on it.
    page: db.prepare(
      `SELECT id, ${COLS} FROM tool_outcome_series WHERE id > @afterId AND ${live} ORDER BY id LIMIT @limit`,
    ),
    maxSeq: db.prepare(QUEUE_SQL.max),
    nth: db.prepare(QUEUE_SQL.nth),
    pending: db.prepare(QUEUE_SQL.pending),
    delta: db.prepare(QUEUE_SQL.delta),
    durations: db.prepare(QUEUE_SQL.durations),
  };
}
