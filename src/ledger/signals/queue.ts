/**
 * The writes of signal_queue (src/ledger/signals/signals.ts): the final records of one transaction that
 * are queue rows (turns and compactions) are buffered in the order they became final and written
 * at its end, up to QUEUE_ROWS per INSERT. seq is the rowid, given here from the one delivery
 * sequence that requests and calls share (their records are their events and tool_calls rows:
 * signal_seq, taken with `take`), so every exporter's watermark stays one seq over the three
 * tables.
 *
 * Why buffered and positional: in better-sqlite3 each run is a native call and each named
 * parameter a property lookup from native code, which cost about as much as SQLite's insert of a
 * small row (docs/performance.md "Signals ingest"); it mattered when every request and call was a
 * queue row (112,000 on the 10,000-session backfill).
 */
import type Database from "better-sqlite3";
import type { ToolOutcome } from "../../adapter/timing.ts";

/** One queue row, in COLUMNS order. */
export interface QueueRow {
  readonly kind: "chat" | "tool" | "turn" | "compaction";
  readonly refKey: string;
  readonly tsMs: number;
  readonly endMs: number;
  readonly outcome: ToolOutcome | null;
  readonly cancelled: boolean;
  readonly startMs: number;
  readonly turnKey: string;
  readonly messageId: string;
  readonly toolUseId: string;
}

const COLUMNS = [
  "seq",
  "kind",
  "ref_key",
  "ts_ms",
  "end_ms",
  "outcome",
  "cancelled",
  "start_ms",
  "turn_key",
  "message_id",
  "tool_use_id",
] as const;

/** Rows per INSERT statement (11 values each: far below SQLite's 32,766 bound parameters). */
export const QUEUE_ROWS = 32;

export class QueueWriter {
  /** The values of the rows not written yet, flat, in COLUMNS order. */
  private values: (string | number | null)[] = [];
  private readonly statements = new Map<number, Database.Statement>();

  /** The next seq of the delivery order (set at each transaction's start: `reset`). */
  private next = 1;

  constructor(private readonly db: Database.Database) {}

  /** Starts a transaction at `next` (past every seq in signal_queue and events): see Signals.begin. */
  reset(next: number): void {
    this.values = [];
    this.next = next;
  }

  /** The seq the next record gets (a request: Ingest puts it on its events row, then `take`s it). */
  peek(): number {
    return this.next;
  }

  /** Takes the seq `peek` returned (its events row was inserted). */
  take(): number {
    return this.next++;
  }

  add(r: QueueRow): void {
    this.values.push(
      this.next++,
      r.kind,
      r.refKey,
      r.tsMs,
      r.endMs,
      r.outcome,
      r.cancelled ? 1 : 0,
      r.startMs,
      r.turnKey,
      r.messageId,
      r.toolUseId,
    );
    if (this.values.length >= QUEUE_ROWS * COLUMNS.length) this.write();
  }

  /** Writes the buffered rows: call inside the transaction that made them final, before it reads the queue. */
  write(): void {
    const v = this.values;
    if (v.length === 0) return;
    this.values = [];
    const per = COLUMNS.length;
    for (let i = 0; i < v.length; i += QUEUE_ROWS * per) {
      const chunk = v.slice(i, i + QUEUE_ROWS * per);
      this.insert(chunk.length / per).run(chunk);
    }
  }

  private insert(rows: number): Database.Statement {
    let st = this.statements.get(rows);
    if (st === undefined) {
      const row = `(${COLUMNS.map(() => "?").join(", ")})`;
      st = this.db.prepare(
        `INSERT INTO signal_queue (${COLUMNS.join(", ")}) VALUES ${Array.from({ length: rows }, () => row).join(", ")}`,
      );
      this.statements.set(rows, st);
    }
    return st;
  }
}
