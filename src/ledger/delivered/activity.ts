/**
 * Activity (issue 29 items 3-5; tables in tables/activity-v3.ts): active time, commits and pull
 * requests, and session starts. Each record an adapter read is normalized to one row (`kind`, its
 * attribute `detail`, the `amount` it adds), stored exactly once by its key (the first view wins:
 * a gap seen again after a rewrite or a restart adds nothing), in the commit transaction of its
 * document; its running series (`activity_series`) are summed from the rows when read (schema v7,
 * series-store.ts `fold`). Exporters read the series (cumulative: live rows, or folded in SQL by fold.ts) or
 * the rows of one id window aggregated per series (delta: export_state.activity_watermark).
 * Generic: the ledger knows the normalized records, no format.
 */
import type Database from "better-sqlite3";
import type { ActiveTimeline, DeliveryRecord, SessionStartRecord } from "../../adapter/types.ts";
import { foldSql, idReads, SERIES_FOLDS_VERSION, SeriesStore } from "./series-store.ts";

/** Schema version that added activity (tables/activity-v3.ts; the lead numbers the combined step). */
export const ACTIVITY_VERSION = 3;

export type ActivityKind = "active_time" | "commit" | "pull_request" | "session";

/** The key columns of an activity series, in order (ONE list: fold.ts and the upsert share it). */
export const ACTIVITY_SERIES_KEY: readonly string[] = [
  "session_id",
  "agent",
  "project",
  "model",
  "provider",
  "client",
  "kind",
  "detail",
];

/** One series of cline.active_time, cline.commits, cline.pull_requests or cline.sessions. */
export interface ActivitySeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly client: string;
  readonly kind: ActivityKind;
  /** active_time: user | agent; session: new | resumed; '' otherwise. */
  readonly detail: string;
  /** ms of active time; the number of records for the other kinds. */
  readonly amount: number;
  readonly records: number;
  readonly firstMs: number;
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

/** One record as a row: what every kind shares. */
export interface ActivityRow {
  readonly key: string;
  readonly kind: ActivityKind;
  readonly detail: string;
  readonly amount: number;
  readonly sessionId: string;
  readonly agent: string;
  readonly tsMs: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly client: string;
  readonly sourcePath: string;
}

const HOUR_MS = 3_600_000;

const common = (r: DeliveryRecord | SessionStartRecord) => ({
  sessionId: r.sessionId,
  agent: r.agent,
  project: r.project,
  client: r.client ?? "",
  sourcePath: r.sourcePath,
});

/**
 * The active-time gaps of one timeline not counted yet (starting at or after `coveredMs`), summed
 * into one row per type, hour (of the gap's start: a report window places them to the hour),
 * model, provider and client (a group of the timeline and an hour); and the new covered end. A
 * row's key is its stream, type and first gap's start: a gap belongs to one row, and a later read
 * adds only gaps that start after every gap counted before.
 */
export function activeTimeRows(
  t: ActiveTimeline,
  coveredMs: number,
): { rows: ActivityRow[]; coveredMs: number } {
  const { startMs, durationMs, group, groups } = t;
  const n = startMs.length;
  if (durationMs.length !== n || group.length !== n)
    throw new Error(
      `active time ${t.streamKey}: columns of ${n}, ${durationMs.length} and ${group.length} gaps`,
    );
  const rows: ActivityRow[] = [];
  // Per group, the row of its latest hour: a timeline's gaps come in time order, so a gap falls in
  // its group's latest row or opens the next one (a gap out of order opens a row of its own).
  const open: ({ hour: number; row: ActivityRow & { amount: number } } | undefined)[] = [];
  const client = t.client ?? "";
  let covered = coveredMs;
  for (let i = 0; i < n; i++) {
    const start = startMs[i] as number;
    const duration = durationMs[i] as number;
    if (!Number.isSafeInteger(duration) || duration <= 0)
      throw new Error(`active time ${t.streamKey} at ${start}: not a duration in ms: ${duration}`);
    const gi = group[i] as number;
    const g = groups[gi];
    if (g === undefined) throw new Error(`active time ${t.streamKey} at ${start}: no group ${gi}`);
    if (start < coveredMs) continue;
    covered = Math.max(covered, start + duration);
    const hour = Math.floor(start / HOUR_MS);
    const last = open[gi];
    if (last !== undefined && last.hour === hour) {
      last.row.amount += duration;
      continue;
    }
    const row = {
      key: `${t.streamKey}|${g.type}|${start}`,
      kind: "active_time" as const,
      detail: g.type,
      amount: duration,
      sessionId: t.sessionId,
      agent: t.agent,
      tsMs: start,
      model: g.model,
      provider: g.provider,
      project: t.project,
      client,
      sourcePath: t.sourcePath,
    };
    rows.push(row);
    open[gi] = { hour, row };
  }
  return { rows, coveredMs: covered };
}

/** The observation's commits, pull requests and session starts as rows. */
export function activityRows(o: {
  readonly deliveries?: readonly DeliveryRecord[];
  readonly sessionStarts?: readonly SessionStartRecord[];
}): ActivityRow[] {
  const rows: ActivityRow[] = [];
  for (const d of o.deliveries ?? [])
    rows.push({
      key: d.deliveryKey,
      kind: d.kind,
      detail: "",
      amount: 1,
      tsMs: d.timestampMs,
      model: d.model,
      provider: d.provider,
      ...common(d),
    });
  for (const s of o.sessionStarts ?? [])
    rows.push({
      key: s.startKey,
      kind: "session",
      detail: s.startType,
      amount: 1,
      tsMs: s.timestampMs,
      model: s.model,
      provider: s.provider,
      ...common(s),
    });
  return rows;
}

const KEY = ACTIVITY_SERIES_KEY.join(", ");
/**
 * The rows of one id window summed per series, the key in ACTIVITY_SERIES_KEY's order: the delta
 * exporter's window, and what a fold adds to `activity_series` (series-store.ts foldSql).
 */
const DELTA = `SELECT session_id AS sessionId, agent, project, model, provider, client, kind, detail,
    SUM(amount) AS amount, COUNT(*) AS records, MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs,
    MAX(ts_ms) AS lastEventMs
  FROM activity WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`;
const COLS = `session_id AS sessionId, agent, project, model, provider, client, kind, detail, amount, records,
  first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs`;

export class Activity extends SeriesStore<
  ActivitySeriesRow,
  ReturnType<typeof prepareWrites>,
  ReturnType<typeof prepareReads>
> {
  /** `version`: the ledger's schema; below ACTIVITY_VERSION (a read-only view of an older ledger) no tables. */
  constructor(db: Database.Database, version: number) {
    super(
      db,
      version >= ACTIVITY_VERSION,
      version >= SERIES_FOLDS_VERSION,
      "activity",
      prepareWrites,
      prepareReads,
    );
  }

  /** Stores one record once (its key); true when this INSERT inserted it, and then `added` is told. */
  insert(r: ActivityRow, adapter: string, nowMs: number, added: (r: ActivityRow) => void): boolean {
    // Positional, in INSERT_COLUMNS' order (named parameters cost a lookup each: see Edits.insert).
    const { insert } = this.st.writes();
    const info = insert.run(
      r.key,
      r.kind,
      r.detail,
      r.amount,
      adapter,
      r.sessionId,
      r.agent,
      r.tsMs,
      r.model,
      r.provider,
      r.project,
      r.client,
      r.sourcePath,
      nowMs,
    );
    if (info.changes === 0) return false;
    added(r);
    return true;
  }

  /**
   * The observation's active time: per timeline, the gaps from where it was counted up to, summed
   * (activeTimeRows), and the timeline's new covered end; returns the rows inserted.
   */
  insertActiveTime(
    timelines: readonly ActiveTimeline[],
    adapter: string,
    nowMs: number,
    onAdded: (r: ActivityRow) => void,
  ): number {
    const w = this.st.writes();
    let added = 0;
    // A stream read twice in one observation (none of the adapters does): the second view reads the
    // covered end the first one wrote, so it adds only what starts after it, as a later read would.
    for (const t of timelines) {
      const stream = t.streamKey;
      const covered = (w.covered.get({ stream }) as { coveredMs: number } | undefined)?.coveredMs ?? 0;
      const fresh = activeTimeRows(t, covered);
      if (fresh.rows.length === 0) continue;
      for (const r of fresh.rows) if (this.insert(r, adapter, nowMs, onAdded)) added++;
      w.cover.run({ stream, coveredMs: fresh.coveredMs });
    }
    return added;
  }
}

/** The columns of a record's INSERT, in the order `insert` binds them. */
const INSERT_COLUMNS = [
  "activity_key",
  "kind",
  "detail",
  "amount",
  "adapter",
  "session_id",
  "agent",
  "ts_ms",
  "model",
  "provider",
  "project",
  "client",
  "source_path",
  "ingested_ms",
] as const;

function prepareWrites(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO activity (${INSERT_COLUMNS.join(", ")}) VALUES (${INSERT_COLUMNS.map(() => "?").join(", ")})
       ON CONFLICT (activity_key) DO NOTHING`,
    ),
    covered: db.prepare("SELECT covered_ms AS coveredMs FROM activity_streams WHERE stream_key = @stream"),
    cover: db.prepare(
      `INSERT INTO activity_streams (stream_key, covered_ms) VALUES (@stream, @coveredMs)
       ON CONFLICT (stream_key) DO UPDATE SET covered_ms = max(covered_ms, excluded.covered_ms)`,
    ),
    fold: db.prepare(foldSql("activity_series", ACTIVITY_SERIES_KEY, ["amount", "records"], DELTA)),
  };
}

function prepareReads(db: Database.Database) {
  return {
    all: db.prepare(`SELECT ${COLS} FROM activity_series ORDER BY id`),
    // id first: the rowid range is the scan, the TTL a filter on it (as edits.ts's page).
    page: db.prepare(
      `SELECT id, ${COLS} FROM activity_series
       WHERE id > @afterId AND (last_event_ms >= @eventSince OR updated_ms >= @updatedSince) ORDER BY id LIMIT @limit`,
    ),
    live: db.prepare(
      `SELECT ${COLS} FROM activity_series
       WHERE last_event_ms >= @eventSince OR updated_ms >= @updatedSince ORDER BY id`,
    ),
    delta: db.prepare(DELTA),
    ...idReads(db, "activity"),
  };
}
