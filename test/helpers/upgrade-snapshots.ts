/**
 * What the schema upgrade tests (test/ledger/*-v2.test.ts, *-v3.test.ts) compare: a ledger's rows
 * before and after a step, its schema as SQLite describes it, and the rows of every kind an older
 * ledger is filled with. One copy here, so every step's test compares the same way.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import {
  commitCaptures,
  commitCompaction,
  requestCapture,
  sampleCompaction,
} from "../export/helpers/ledger.ts";
import { call, event, finalObservation } from "./events.ts";

/** Every table's rows, `columns` of each only (an older schema's), in a stable order. */
export function tableRows(
  db: Database.Database,
  tables: readonly string[],
  columns: ReadonlyMap<string, readonly string[]>,
): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const cols = (columns.get(t) as readonly string[]).join(", ");
    out[t] = db.prepare(`SELECT ${cols} FROM ${t} ORDER BY ${cols}`).all();
  }
  return out;
}

/** The schema as sqlite_master and the pragmas describe it: tables, columns, indexes and their columns, their SQL. */
export function schemaShape(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    const master = db
      .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
      .all() as { type: string; name: string }[];
    const tables = master.filter((m) => m.type === "table").map((m) => m.name);
    return {
      master,
      columns: tables.map((t) => [t, db.pragma(`table_info(${t})`)]),
      indexes: tables.map((t) => [
        t,
        (db.pragma(`index_list(${t})`) as { name: string }[]).map((i) => [
          i,
          db.pragma(`index_info(${i.name})`),
        ]),
      ]),
    };
  } finally {
    db.close();
  }
}

/**
 * What a step's "a fresh ledger has exactly the schema of an upgraded one" compares: the ledger in the
 * state dir `old` upgraded by this build (opened once), a new ledger in `<dir>/fresh`, the schemas of
 * both, and the upgraded one's SQL (no table a step renamed away may be left or referred to).
 */
export function upgradedAndFresh(
  dir: string,
  old: string,
): { readonly upgraded: unknown; readonly fresh: unknown; readonly sql: string } {
  Ledger.open(old).close();
  const fresh = join(dir, "fresh");
  Ledger.open(fresh).close();
  const db = new Database(join(old, LEDGER_FILE), { readonly: true });
  try {
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").all() as { sql: string }[])
      .map((r) => r.sql)
      .join("\n");
    return {
      upgraded: schemaShape(join(old, LEDGER_FILE)),
      fresh: schemaShape(join(fresh, LEDGER_FILE)),
      sql,
    };
  } finally {
    db.close();
  }
}

/**
 * Rows of every kind a v1 or v2 ledger holds, written by this build's own code (a ledger of the
 * current schema, copied into the older one by helpers/v1-ledger.ts): a paid request with two
 * calls and a request without, a capture, a compaction, an OTLP export state and, with
 * `backfill`, an export backfill in progress.
 */
export function writeRowsOfEveryKind(stateDir: string, opts: { readonly backfill?: boolean } = {}): void {
  const l = Ledger.open(stateDir);
  const paid = event("m1", { toolCallCount: 2, client: "vscode", startMs: 1_795_999_999_000 });
  const calls = [
    call("c1", paid.dedupKey, 2, { client: "vscode" }),
    call("c2", paid.dedupKey, 2, { client: "vscode", toolName: "read_files" }),
  ];
  l.commit(finalObservation([paid, event("m2", { client: "vscode" })], calls));
  commitCaptures(l, "/caps/a", [requestCapture("a")]);
  commitCompaction(l, sampleCompaction());
  l.close();
  const db = new Database(join(stateDir, LEDGER_FILE));
  try {
    db.prepare(
      `INSERT INTO export_state (exporter, event_watermark, call_watermark, window_start_ns, last_success_ms,
         capture_watermark, compaction_watermark, final_call_watermark)
       VALUES ('otlp', 2, 2, '123', 456, 1, 1, 3)`,
    ).run();
    if (opts.backfill === true)
      db.prepare(
        `INSERT INTO export_backfill (exporter, options, started_ms, event_watermark, call_watermark, capture_watermark,
           compaction_watermark, final_call_watermark, window_start_ns, phase, after_id, delivered, total, after_key)
         VALUES ('otlp', '{}', 456, 2, 2, 1, 1, 3, '123', 'outcome', 0, 2, 9, '["a",1]')`,
      ).run();
  } finally {
    db.close();
  }
}
