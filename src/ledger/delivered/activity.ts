/**
 * Activity (issue 29 items 3-5; tables in tables/activity-v3.ts): active time, commits and pull
 * requests, and session starts. Each record an adapter read is normalized to one row (`kind`, its
 * attribute `detail`, the `amount` it adds), stored exactly once by its key (the first view wins:
 * a gap seen again after a rewrite or a restart adds nothing), in the commit transaction of its
 * document, and added to its running series (`activity_series`) by the same commit, one upsert
 * per series. Exporters read the series (cumulative: live rows, or folded in SQL by fold.ts) or
 * the rows of one id window aggregated per series (delta: export_state.activity_watermark).
 * Generic: the ledger knows the normalized records, no format.
 */
import type Database from "better-sqlite3";
import type { ActiveTimeRecord, DeliveryRecord, SessionStartRecord } from "../../adapter/types.ts";
import type { IdWindow, LiveFilter } from "../usage/series.ts";

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

const common = (r: ActiveTimeRecord | DeliveryRecord | SessionStartRecord) => ({
  sessionId: r.sessionId,
  agent: r.agent,
  model: r.model,
  provider: r.provider,
  project: r.project,
  client: r.client ?? "",
  sourcePath: r.sourcePath,
});

/**
 * The active-time gaps of one timeline not counted yet (starting at or after `coveredMs`), summed
 * into one row per type, hour (of the gap's start: a report window places them to the hour),
 * model, provider and client; and the new covered end.
 */
export function activeTimeRows(
  gaps: readonly ActiveTimeRecord[],
  coveredMs: number,
): { rows: ActivityRow[]; coveredMs: number } {
  const byGroup = new Map<string, ActivityRow & { amount: number }>();
  let covered = coveredMs;
  for (const g of gaps) {
    if (!Number.isSafeInteger(g.durationMs) || g.durationMs <= 0)
      throw new Error(`active time ${g.activityKey}: not a duration in ms: ${g.durationMs}`);
    if (g.startMs < coveredMs) continue;
    covered = Math.max(covered, g.startMs + g.durationMs);
    const hour = Math.floor(g.startMs / HOUR_MS);
    const id = `${g.type}\u0000${hour}\u0000${g.model}\u0000${g.provider}\u0000${g.client ?? ""}`;
    const prev = byGroup.get(id);
    if (prev !== undefined) {
      prev.amount += g.durationMs;
      continue;
    }
    byGroup.set(id, {
      key: `${g.streamKey}|${g.type}|${g.startMs}`,
      kind: "active_time",
      detail: g.type,
      amount: g.durationMs,
      tsMs: g.startMs,
      ...common(g),
    });
  }
  return { rows: [...byGroup.values()], coveredMs: covered };
}

/** The observation's commits, pull requests and session starts as rows. */
export function activityRows(o: {
  readonly deliveries?: readonly DeliveryRecord[];
  readonly sessionStarts?: readonly SessionStartRecord[];
}): ActivityRow[] {
  const rows: ActivityRow[] = [];
  for (const d of o.deliveries ?? [])
    rows.push({ key: d.deliveryKey, kind: d.kind, detail: "", amount: 1, tsMs: d.timestampMs, ...common(d) });
  for (const s of o.sessionStarts ?? [])
    rows.push({
      key: s.startKey,
      kind: "session",
      detail: s.startType,
      amount: 1,
      tsMs: s.timestampMs,
      ...common(s),
    });
  return rows;
}

interface Sum {
  /** The series key's values, in ACTIVITY_SERIES_KEY order. */
  readonly key: readonly string[];
  amount: number;
  records: number;
  lastEventMs: number;
}

/** Per-commit sums by series: one upsert per distinct series, not one per record. */
export class ActivitySums {
  private readonly sums = new Map<string, Sum>();

  add(r: ActivityRow): void {
    const key = [r.sessionId, r.agent, r.project, r.model, r.provider, r.client, r.kind, r.detail];
    const id = key.join("\u0000");
    let s = this.sums.get(id);
    if (s === undefined) {
      s = { key, amount: 0, records: 0, lastEventMs: Number.NEGATIVE_INFINITY };
      this.sums.set(id, s);
    }
    s.amount += r.amount;
    s.records++;
    if (r.tsMs > s.lastEventMs) s.lastEventMs = r.tsMs;
  }

  values(): IterableIterator<Sum> {
    return this.sums.values();
  }
}

const KEY = ACTIVITY_SERIES_KEY.join(", ");
const COLS = `session_id AS sessionId, agent, project, model, provider, client, kind, detail, amount, records,
  first_ms AS firstMs, updated_ms AS updatedMs, last_event_ms AS lastEventMs`;

export class Activity {
  private w: ReturnType<typeof prepareWrites> | undefined;
  private r: ReturnType<typeof prepareReads> | undefined;

  /** `present`: false on a read-only view of a ledger from before ACTIVITY_VERSION (no tables). */
  constructor(
    private readonly db: Database.Database,
    readonly present: boolean,
  ) {}

  private writes(): ReturnType<typeof prepareWrites> {
    this.w ??= prepareWrites(this.db);
    return this.w;
  }

  private reads(): ReturnType<typeof prepareReads> | undefined {
    if (!this.present) return undefined;
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /** Stores one record once (its key); true when this INSERT inserted it, and then `sums` gets it. */
  insert(r: ActivityRow, adapter: string, nowMs: number, sums: ActivitySums): boolean {
    // By position, in the INSERT's column order (see prepareWrites): a row per record of a backfill.
    const info = this.writes().insert.run(
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
    sums.add(r);
    return true;
  }

  /**
   * The observation's active time: per timeline, the gaps from where it was counted up to, summed
   * (activeTimeRows), and the timeline's new covered end; returns the rows inserted.
   */
  insertActiveTime(
    gaps: readonly ActiveTimeRecord[],
    adapter: string,
    nowMs: number,
    sums: ActivitySums,
  ): number {
    const byStream = new Map<string, ActiveTimeRecord[]>();
    for (const g of gaps) {
      const list = byStream.get(g.streamKey);
      if (list === undefined) byStream.set(g.streamKey, [g]);
      else list.push(g);
    }
    const w = this.writes();
    let added = 0;
    for (const [stream, list] of byStream) {
      const covered = (w.covered.get(stream) as { coveredMs: number } | undefined)?.coveredMs ?? 0;
      const fresh = activeTimeRows(list, covered);
      if (fresh.rows.length === 0) continue;
      for (const r of fresh.rows) if (this.insert(r, adapter, nowMs, sums)) added++;
      w.cover.run(stream, fresh.coveredMs);
    }
    return added;
  }

  /** Writes a commit's series sums (inside its transaction, after its inserts). */
  flush(sums: ActivitySums, nowMs: number): void {
    const st = this.writes().series;
    // By position: the key's values (ACTIVITY_SERIES_KEY order), then the sums.
    for (const s of sums.values()) st.run(...s.key, s.amount, s.records, nowMs, nowMs, s.lastEventMs);
  }

  /** Every series (tests, audits, report). */
  series(): ActivitySeriesRow[] {
    return (this.reads()?.all.all() ?? []) as ActivitySeriesRow[];
  }

  /** The series the cumulative TTL keeps. */
  *live(f: LiveFilter): IterableIterator<ActivitySeriesRow> {
    const r = this.reads();
    if (r !== undefined)
      yield* r.live.iterate({
        eventSince: clamp(f.eventSinceMs),
        updatedSince: clamp(f.updatedSinceMs),
      }) as IterableIterator<ActivitySeriesRow>;
  }

  /** The records of one id window aggregated per series (delta). */
  delta(w: IdWindow): ActivitySeriesRow[] {
    return (this.reads()?.delta.all(w) ?? []) as ActivitySeriesRow[];
  }

  /** The highest record id (0: none): a delta exporter's next watermark candidate. */
  maxId(): number {
    return (this.reads()?.maxId.get() as { max: number } | undefined)?.max ?? 0;
  }

  /** Records by row (tests, audits). */
  rows(): Record<string, unknown>[] {
    return (this.reads()?.rows.all() ?? []) as Record<string, unknown>[];
  }

  /** Totals per session between two times (report): active ms by type, commits, pull requests. */
  totals(sinceMs: number, untilMs: number): ActivityTotalsRow[] {
    return (this.reads()?.totals.all({ sinceMs: clamp(sinceMs), untilMs: clamp(untilMs) }) ??
      []) as ActivityTotalsRow[];
  }
}

/** Per session and project, what `report` shows of activity. */
export interface ActivityTotalsRow {
  readonly sessionId: string;
  readonly project: string;
  readonly activeUserMs: number;
  readonly activeAgentMs: number;
  readonly commits: number;
  readonly pullRequests: number;
}

const clamp = (ms: number): number =>
  Number.isFinite(ms) ? Math.trunc(ms) : ms > 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER;

function prepareWrites(db: Database.Database) {
  return {
    // The two per-record statements bind by position (a property lookup from native code per named
    // parameter cost more than the row's insert: docs/performance.md, "The cold backfill's per-row cost").
    insert: db.prepare(
      `INSERT INTO activity (activity_key, kind, detail, amount, adapter, session_id, agent, ts_ms, model, provider,
         project, client, source_path, ingested_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (activity_key) DO NOTHING`,
    ),
    covered: db.prepare("SELECT covered_ms AS coveredMs FROM activity_streams WHERE stream_key = ?"),
    cover: db.prepare(
      `INSERT INTO activity_streams (stream_key, covered_ms) VALUES (?, ?)
       ON CONFLICT (stream_key) DO UPDATE SET covered_ms = max(covered_ms, excluded.covered_ms)`,
    ),
    series: db.prepare(
      `INSERT INTO activity_series (${KEY}, amount, records, first_ms, updated_ms, last_event_ms)
       VALUES (${ACTIVITY_SERIES_KEY.map(() => "?").join(", ")}, ?, ?, ?, ?, ?)
       ON CONFLICT (${KEY}) DO UPDATE SET amount = amount + excluded.amount, records = records + excluded.records,
         updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
  };
}

function prepareReads(db: Database.Database) {
  return {
    all: db.prepare(`SELECT ${COLS} FROM activity_series ORDER BY id`),
    live: db.prepare(
      `SELECT ${COLS} FROM activity_series
       WHERE last_event_ms >= @eventSince OR updated_ms >= @updatedSince ORDER BY id`,
    ),
    delta: db.prepare(
      `SELECT session_id AS sessionId, agent, project, model, provider, client, kind, detail,
         SUM(amount) AS amount, COUNT(*) AS records, MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs,
         MAX(ts_ms) AS lastEventMs
       FROM activity WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`,
    ),
    maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS max FROM activity"),
    rows: db.prepare("SELECT * FROM activity ORDER BY id"),
    totals: db.prepare(
      `SELECT session_id AS sessionId, project,
         SUM(CASE WHEN kind = 'active_time' AND detail = 'user' THEN amount ELSE 0 END) AS activeUserMs,
         SUM(CASE WHEN kind = 'active_time' AND detail = 'agent' THEN amount ELSE 0 END) AS activeAgentMs,
         SUM(kind = 'commit') AS commits, SUM(kind = 'pull_request') AS pullRequests
       FROM activity WHERE ts_ms >= @sinceMs AND ts_ms < @untilMs GROUP BY session_id, project`,
    ),
  };
}
