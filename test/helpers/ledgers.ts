/**
 * Ledgers a test file opens in temp state dirs, closed and removed after each test (afterEach is
 * registered by the call, so call it at the top level of the file).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { Signals } from "../../src/ledger/signals.ts";

export interface ScopedLedgers {
  /** A fresh temp state dir, removed after the test. */
  stateDir(): string;
  /** Opens (or reopens) the ledger in `dir`; closed after the test unless closed before. */
  open(dir: string): { l: Ledger; s: Signals };
  /** Closes a ledger before the test ends (to reopen, rewind or damage it). */
  close(l: Ledger): void;
}

export function scopedLedgers(prefix: string): ScopedLedgers {
  const dirs: string[] = [];
  const ledgers: Ledger[] = [];
  afterEach(() => {
    for (const l of ledgers.splice(0)) l.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return {
    stateDir() {
      const d = mkdtempSync(join(tmpdir(), `${prefix}-`));
      dirs.push(d);
      return d;
    },
    open(dir) {
      const l = Ledger.open(dir);
      ledgers.push(l);
      return { l, s: l.signals as Signals };
    },
    close(l) {
      ledgers.splice(ledgers.indexOf(l), 1);
      l.close();
    },
  };
}

/**
 * Puts the final calls' records back in signal_queue, as builds before the migration that moved
 * them onto tool_calls kept them (tests that wind a ledger back to before a migration reading
 * the queue's tool rows: that migration runs again, then the move). The tool_calls columns are
 * emptied, so the move's re-run takes the queue's values.
 */
export function toolRecordsToQueue(db: Database.Database): void {
  db.exec(`
    INSERT INTO signal_queue (seq, kind, ref_key, ts_ms, end_ms, outcome, cancelled, start_ms, turn_key,
        message_id, tool_use_id)
      SELECT signal_seq, 'tool', call_key, ts_ms, end_ms, outcome, cancelled, ts_ms,
        IFNULL(turn_key, IFNULL((SELECT turn_key FROM events WHERE dedup_key = c.usage_key), '')),
        IFNULL(message_id, IFNULL((SELECT message_id FROM events WHERE dedup_key = c.usage_key), '')), tool_use_id
      FROM tool_calls c WHERE signal_seq IS NOT NULL;
    UPDATE tool_calls SET signal_seq = NULL, end_ms = NULL, outcome = NULL, cancelled = NULL, turn_key = NULL,
      message_id = NULL, tool_use_id = NULL;`);
}
