/**
 * Each signal exporter's watermark over the one numbered order of final records: its cursor, the
 * next batch after it (the queue's rows, the requests' events rows and the calls' tool_calls rows
 * merged by seq), and the compare-and-set that moves it when a delivery succeeded.
 */
import type Database from "better-sqlite3";
import { EDIT_FIELDS, type EditField, editFieldSql } from "../tables/edit-packs-v6.ts";
import { callKeyOf, callKeyOfSql } from "../tables/edits-narrow-v5.ts";
import type { SignalKind, SignalRow } from "./records.ts";

export interface SignalCursor {
  readonly exporter: string;
  /** Highest queue seq delivered. */
  readonly watermark: number;
  /** Records whose event time is older than this are skipped, not sent (start from now). */
  readonly fromMs: number;
}

export interface SignalBatch {
  readonly base: SignalCursor;
  readonly rows: readonly SignalRow[];
  /** The watermark to commit once `rows` are delivered (past skipped rows too). */
  readonly next: number;
  /** Rows of the window left out: other kinds, or older than `fromMs`. */
  readonly skipped: number;
}

export class SignalWatermarks {
  private st: ReturnType<typeof prepareStatements> | undefined;

  constructor(private readonly db: Database.Database) {}

  private statements(): ReturnType<typeof prepareStatements> {
    this.st ??= prepareStatements(this.db);
    return this.st;
  }

  /** The exporter's position; created on first use, skipping history older than `fromMs`. */
  cursor(exporter: string, fromMs: number): SignalCursor {
    const st = this.statements();
    st.createCursor.run({ exporter, fromMs });
    const r = st.cursor.get({ exporter }) as { watermark: number; fromMs: number };
    return { exporter, watermark: r.watermark, fromMs: r.fromMs };
  }

  /** Up to `limit` records after the cursor, the wanted kinds only (the others are skipped). */
  batch(cursor: SignalCursor, kinds: ReadonlySet<SignalKind>, limit: number): SignalBatch {
    const raw = this.statements().batch.all({ after: cursor.watermark, limit }) as RawRow[];
    const rows: SignalRow[] = [];
    let skipped = 0;
    let next = cursor.watermark;
    for (const r of raw) {
      next = r.seq;
      if (!kinds.has(r.kind) || r.tsMs < cursor.fromMs) {
        skipped++;
        continue;
      }
      rows.push(toRow(r));
    }
    return { base: cursor, rows, next, skipped };
  }

  /** Whether any record follows `watermark`. */
  pending(watermark: number): boolean {
    return this.statements().after.get({ after: watermark }) !== undefined;
  }

  /**
   * Records a delivered batch: compare-and-set on the watermark it was read from, so a late
   * success of an abandoned export can never move it (nor skip rows).
   */
  commit(batch: SignalBatch, nowMs: number): "committed" | "stale" {
    const info = this.statements().advance.run({
      exporter: batch.base.exporter,
      base: batch.base.watermark,
      next: batch.next,
      nowMs,
    });
    return info.changes === 1 ? "committed" : "stale";
  }

  /** Records by kind, queued or on events and calls (tests, diagnostics). */
  queued(): Record<SignalKind, number> {
    const out: Record<SignalKind, number> = { chat: 0, tool: 0, turn: 0, compaction: 0, edit: 0 };
    for (const r of this.statements().counts.all() as { kind: SignalKind; n: number }[]) out[r.kind] += r.n;
    return out;
  }
}

interface RawRow extends Omit<SignalRow, "cancelled" | "usageKnown"> {
  cancelled: number;
  usageKnown: number;
  /** An edit record's element of its pack (JSON, EDIT_FIELDS' order); null for the other kinds. */
  edit: string | null;
  /** A tool record's sums over its call's edits (tool_calls.edit_sums: added, removed, exact, by decision, places); null without. */
  callEdits: string | null;
}

function toRow(r: RawRow): SignalRow {
  // A spread, then assignments: a rest destructuring of the row's 45 columns cost ~3 µs a row.
  const row = { ...r, cancelled: r.cancelled === 1, usageKnown: r.usageKnown === 1 };
  if (r.edit !== null) {
    Object.assign(row, editValues(r.edit));
    row.edit = null;
  } else if (r.callEdits !== null) {
    const [linesAdded, linesRemoved, exact, editsAccepted, editsRejected, editsFailed] = JSON.parse(
      r.callEdits,
    ) as number[];
    Object.assign(row, { linesAdded, linesRemoved, exact, editsAccepted, editsRejected, editsFailed });
    row.callEdits = null;
  }
  return row;
}

const at = (f: EditField): number => EDIT_FIELDS.indexOf(f);
const KEY = at("edit_key");
const TS = at("ts_ms");
const OPERATION = at("operation");
const DECISION = at("decision");
const SOURCE = at("source");
const LANGUAGE = at("language");
const ADDED = at("lines_added");
const REMOVED = at("lines_removed");
const EXACT = at("exact");
const MODEL = at("model");
const PROVIDER = at("provider");

/**
 * An edit record's values from its element: parsed once here rather than a dozen `->>` in the batch
 * (each parses the element again).
 */
function editValues(json: string) {
  const el = JSON.parse(json) as unknown[];
  const key = String(el[KEY]);
  const ts = Number(el[TS]);
  return {
    refKey: key,
    tsMs: ts,
    endMs: ts,
    startMs: ts,
    callKey: callKeyOf(key),
    operation: String(el[OPERATION]),
    decision: String(el[DECISION]),
    editSource: String(el[SOURCE]),
    language: String(el[LANGUAGE]),
    linesAdded: Number(el[ADDED]),
    linesRemoved: Number(el[REMOVED]),
    exact: Number(el[EXACT]),
    model: String(el[MODEL]),
    provider: String(el[PROVIDER]),
  };
}

function prepareStatements(db: Database.Database) {
  return {
    createCursor: db.prepare(
      `INSERT INTO signal_delivery (exporter, watermark, from_ms) VALUES (@exporter, 0, @fromMs)
       ON CONFLICT (exporter) DO NOTHING`,
    ),
    advance: db.prepare(
      `UPDATE signal_delivery SET watermark = @next, last_success_ms = @nowMs
       WHERE exporter = @exporter AND watermark = @base`,
    ),
    cursor: db.prepare("SELECT watermark, from_ms AS fromMs FROM signal_delivery WHERE exporter = @exporter"),
    after: db.prepare(
      `SELECT 1 FROM signal_queue WHERE seq > @after
       UNION ALL SELECT 1 FROM events WHERE signal_seq > @after
       UNION ALL SELECT 1 FROM tool_calls WHERE signal_seq > @after
       UNION ALL SELECT 1 FROM edit_packs WHERE seq_last > @after LIMIT 1`,
    ),
    counts: db.prepare(
      `SELECT kind, COUNT(*) AS n FROM signal_queue GROUP BY kind
       UNION ALL SELECT 'chat', COUNT(*) FROM events WHERE signal_seq IS NOT NULL
       UNION ALL SELECT 'tool', COUNT(*) FROM tool_calls WHERE signal_seq IS NOT NULL
       UNION ALL SELECT 'edit', IFNULL(SUM(n), 0) FROM edit_packs WHERE seq_last IS NOT NULL`,
    ),
    // One row per record, the fields of its kind joined in (COALESCE over the five). The records
    // are the queue's rows, the requests' events rows, the calls' tool_calls rows and the edits of
    // edit_packs, merged by seq: each side read in seq order up to the limit (its index), so the
    // merge sorts at most four times the limit. A call's edits' sums, for its execute_tool span, are
    // its row's (tool_calls.edit_sums).
    batch: db.prepare(
      `SELECT q.seq, q.kind, q.ref_key AS refKey, q.ts_ms AS tsMs, q.end_ms AS endMs, q.start_ms AS startMs,
         q.outcome, q.cancelled,
         IFNULL(d.root_session_id,
           COALESCE(e.session_id, c.session_id, tu.session_id, k.root_session_id, ed.session_id)) AS rootSessionId,
         COALESCE(e.session_id, c.session_id, tu.session_id, k.session_id, ed.session_id) AS sessionId,
         COALESCE(e.agent, c.agent, tu.agent, k.agent, ed.agent) AS agent,
         COALESCE(e.project, c.project, tu.project, k.project, ed.project) AS project,
         q.turn_key AS turnKey,
         COALESCE(e.model, c.model, k.model, '') AS model,
         COALESCE(e.provider, c.provider, k.provider, '') AS provider,
         COALESCE(e.client, c.client, ed.client, '') AS client,
         IFNULL(e.end_known, 1) AS endKnown,
         CASE q.kind WHEN 'chat' THEN IFNULL(e.message_id, '') ELSE q.message_id END AS messageId,
         COALESCE(e.input, c.share_input, 0) AS input,
         COALESCE(e.output, c.share_output, 0) AS output,
         COALESCE(e.cache_read, c.share_cache_read, 0) AS cacheRead,
         COALESCE(e.cache_write, c.share_cache_write, 0) AS cacheWrite,
         COALESCE(e.tool_calls, c.divisor, 0) AS toolCalls,
         COALESCE(c.tool_name, ed.tool_name, '') AS toolName,
         CASE q.kind WHEN 'edit' THEN IFNULL(ec.tool_use_id, '') ELSE q.tool_use_id END AS toolUseId,
         CASE q.kind WHEN 'tool' THEN c.usage_key != '' ELSE 1 END AS usageKnown,
         IFNULL(tu.turn_id, '') AS turnId,
         IFNULL(k.strategy, '') AS strategy,
         IFNULL(k.reason, '') AS reason,
         IFNULL(k.source_message_count, 0) AS sourceMessageCount,
         k.messages_removed AS messagesRemoved,
         k.tokens_before AS tokensBefore,
         '' AS callKey, '' AS operation, '' AS decision, '' AS editSource, '' AS language,
         -- An edit's own values: its pack's element, read whole (toRow names them).
         CASE q.kind WHEN 'edit' THEN ed.edits -> q.i END AS edit,
         0 AS linesAdded, 0 AS linesRemoved, 1 AS exact, 0 AS editsAccepted, 0 AS editsRejected, 0 AS editsFailed,
         -- A tool record's sums over its call's edits, kept on its row (schema v8; NULL: it has none).
         CASE q.kind WHEN 'tool' THEN c.edit_sums END AS callEdits
       FROM (SELECT * FROM (SELECT seq, kind, ref_key, ts_ms, end_ms, start_ms, outcome, cancelled, turn_key,
                 message_id, tool_use_id, NULL AS pack, NULL AS i
               FROM signal_queue WHERE seq > @after ORDER BY seq LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT signal_seq, 'chat', dedup_key, ts_ms, ts_ms, start_ms, NULL, 0, turn_key, '', '',
                 NULL, NULL
               FROM events WHERE signal_seq > @after ORDER BY signal_seq LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT c.signal_seq, 'tool', c.call_key, c.ts_ms, c.end_ms, c.ts_ms, c.outcome,
                 c.cancelled, COALESCE(c.turn_key, p.turn_key, ''), COALESCE(c.message_id, p.message_id, ''),
                 c.tool_use_id, NULL, NULL
               FROM tool_calls c
                 -- NULL turn and message id: its paying request's (callRecord), by its UNIQUE key.
                 LEFT JOIN events p ON c.turn_key IS NULL AND p.dedup_key = c.usage_key
               WHERE c.signal_seq > @after ORDER BY c.signal_seq LIMIT @limit)
             UNION ALL
             -- An edit's seq is its pack's first + its place; at most @limit packs hold the next @limit. Its
             -- pack and place only: its values are read for the records the merge keeps (ed, below).
             SELECT * FROM (SELECT ep.seq_first + j.key, 'edit', NULL, NULL, NULL, NULL, NULL, 0, '', '', '', ep.id, j.key
               FROM (SELECT id, seq_first, edits FROM edit_packs WHERE seq_last > @after ORDER BY seq_last LIMIT @limit) ep,
                 json_each(ep.edits) j
               WHERE ep.seq_first + j.key > @after ORDER BY 1 LIMIT @limit)
             ORDER BY 1 LIMIT @limit) q
         LEFT JOIN events e ON q.kind = 'chat' AND e.dedup_key = q.ref_key
         LEFT JOIN tool_calls c ON q.kind = 'tool' AND c.call_key = q.ref_key
         LEFT JOIN signal_turns tu ON q.kind = 'turn' AND tu.turn_key = q.ref_key
         LEFT JOIN compactions k ON q.kind = 'compaction' AND k.compaction_key = q.ref_key
         LEFT JOIN edit_packs ed ON q.kind = 'edit' AND ed.id = q.pack
         LEFT JOIN tool_calls ec ON q.kind = 'edit' AND ec.call_key = ${callKeyOfSql(editFieldSql("(ed.edits -> q.i)", "edit_key"))}
         LEFT JOIN signal_documents d
           ON d.source_path = COALESCE(e.source_path, c.source_path, tu.source_path, ed.source_path)
       ORDER BY q.seq`,
    ),
  };
}
