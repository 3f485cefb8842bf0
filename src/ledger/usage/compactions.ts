import type Database from "better-sqlite3";
import type { Compaction } from "../../adapter/types.ts";
import { clientColumn, versionedStatements } from "../statements.ts";
import type { IdWindow } from "./series.ts";

/** Schema version from which the ledger has the `compactions` table (the baseline). */
export const COMPACTIONS_VERSION = 1;

/** The dimensions of a compaction: its series key (KEY below). */
export interface CompactionDims {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  /** `cline.client`: its agent's latest usage series' ('' before schema v2, or when none). */
  readonly client: string;
  readonly strategy: string;
  readonly reason: string;
}

/** One exported compaction series (or its delta over an id window). */
export interface CompactionSeriesRow extends CompactionDims {
  readonly compactions: number;
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest compaction time (`ts_ms`) of the rows counted. */
  readonly lastEventMs: number;
}

/** One compaction as stored (numbers and enums only). */
export interface CompactionRow extends CompactionDims {
  readonly id: number;
  readonly compactionKey: string;
  readonly tsMs: number;
  readonly sourceMessageCount: number;
  readonly messagesRemoved: number | null;
  readonly tokensBefore: number | null;
}

/** The key and the dims as read: `client` as `clientColumn` says for the ledger's version. */
const keyOf = (version: number) =>
  `session_id, agent, project, model, provider, strategy, reason, ${clientColumn(version)}`;
const dimsOf = (version: number) =>
  `session_id AS sessionId, agent, project, model, provider, strategy, reason, ${clientColumn(version)} AS client`;

/**
 * Observed context compactions (tables/captures.ts), one row per compaction key: the adapter's key
 * (session, agent, the file's `updated_at` and `source_message_count`) makes a re-read, a
 * restart or a second copy of the same file a no-op. Rows are few (one per compaction), so the
 * series are grouped at read time instead of being kept as running totals.
 */
export class Compactions {
  readonly present: boolean;
  private readonly st: ReturnType<typeof prepareReads> | undefined;
  private readonly writes: () => ReturnType<typeof prepareWrites>;

  constructor(db: Database.Database, version: number) {
    const s = versionedStatements(db, version, COMPACTIONS_VERSION, prepareReads, prepareWrites);
    this.st = s.reads;
    this.writes = s.writes;
    this.present = s.reads !== undefined;
  }

  /**
   * Stores one compaction (the caller's transaction). Its model and provider are those of the
   * agent's latest usage series (the document is committed before its compaction file), its
   * project the adapter's, else that series'. False: this compaction was already recorded.
   */
  insert(c: Compaction, adapter: string, nowMs: number): boolean {
    const w = this.writes();
    const series = w.latestSeries.get({ sessionId: c.sessionId, agent: c.agent }) as
      | { model: string; provider: string; project: string; client: string }
      | undefined;
    return (
      w.insert.run({
        compactionKey: c.compactionKey,
        adapter,
        sessionId: c.sessionId,
        rootSessionId: c.rootSessionId,
        agent: c.agent,
        project: c.project !== "" ? c.project : (series?.project ?? ""),
        model: series?.model ?? "",
        provider: series?.provider ?? "",
        client: series?.client ?? "",
        strategy: c.strategy,
        reason: c.reason,
        tsMs: c.timestampMs,
        sourceMessageCount: c.sourceMessageCount,
        messagesRemoved: c.messagesRemoved,
        tokensBefore: c.tokensBefore,
        sourcePath: c.sourcePath,
        nowMs,
      }).changes > 0
    );
  }

  /** Every compaction series with its count (cumulative export). */
  series(): CompactionSeriesRow[] {
    return this.st === undefined ? [] : (this.st.series.all() as CompactionSeriesRow[]);
  }

  /** Compaction series over rows with after < id <= upTo (delta export). */
  delta(w: IdWindow): CompactionSeriesRow[] {
    return this.st === undefined ? [] : (this.st.delta.all(w) as CompactionSeriesRow[]);
  }

  maxId(): number {
    return this.st === undefined ? 0 : (this.st.maxId.get() as { id: number }).id;
  }

  /** The stored compactions in time order (reports, tests). */
  rows(): CompactionRow[] {
    return this.st === undefined ? [] : (this.st.rows.all() as CompactionRow[]);
  }
}

function prepareReads(db: Database.Database, version: number) {
  const KEY = keyOf(version);
  const DIMS = dimsOf(version);
  const counted = `${DIMS}, COUNT(*) AS compactions, MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs,
    MAX(ts_ms) AS lastEventMs`;
  return {
    series: db.prepare(`SELECT ${counted} FROM compactions GROUP BY ${KEY} ORDER BY MIN(id)`),
    delta: db.prepare(
      `SELECT ${counted} FROM compactions WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`,
    ),
    maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS id FROM compactions"),
    rows: db.prepare(
      `SELECT id, compaction_key AS compactionKey, ${DIMS}, ts_ms AS tsMs,
         source_message_count AS sourceMessageCount, messages_removed AS messagesRemoved,
         tokens_before AS tokensBefore
       FROM compactions ORDER BY ts_ms, id`,
    ),
  };
}

function prepareWrites(db: Database.Database) {
  return {
    // The agent's most recent series (unique index on session_id, agent, ... serves it).
    latestSeries: db.prepare(
      `SELECT model, provider, project, client FROM usage_series WHERE session_id = @sessionId AND agent = @agent
       ORDER BY last_event_ms DESC, id DESC LIMIT 1`,
    ),
    insert: db.prepare(
      `INSERT INTO compactions (compaction_key, adapter, session_id, root_session_id, agent, project, model, provider,
         strategy, reason, ts_ms, source_message_count, messages_removed, tokens_before, source_path, ingested_ms,
         client)
       VALUES (@compactionKey, @adapter, @sessionId, @rootSessionId, @agent, @project, @model, @provider, @strategy,
         @reason, @tsMs, @sourceMessageCount, @messagesRemoved, @tokensBefore, @sourcePath, @nowMs, @client)
       ON CONFLICT (compaction_key) DO NOTHING`,
    ),
  };
}
