/**
 * Schema v2 (src/ledger/tables/client-v2.ts): `client` in every series key. A ledger built with
 * the v1 DDL (MIGRATIONS[0] only) and holding rows of every kind upgrades in place with every
 * row, total, id and watermark as it was and client '' on the old series; new events then go
 * to client-keyed rows; a fresh ledger has exactly the upgraded one's schema; a failed upgrade
 * leaves the v1 ledger as it was.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ATTR } from "../../src/export/attributes.ts";
import { NO_PRICES, translate } from "../../src/export/translate.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { CLIENT_SERIES_V2 } from "../../src/ledger/tables/client-v2.ts";
import {
  commitCaptures,
  commitCompaction,
  requestCapture,
  sampleCompaction,
} from "../export/helpers/ledger.ts";
import { call, event, finalObservation } from "../helpers/events.ts";
import { columnsOf, tablesOf, v1Ledger as v1Ledger1 } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "client-v2-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The series tables whose key gained `client`, and the columns v2 added to each. */
const ADDED: Readonly<Record<string, readonly string[]>> = {
  usage_series: ["client"],
  tool_series: ["client"],
  tool_outcome_series: ["client"],
  genai_rows: ["client", "project"],
  capture_series: ["client"],
  captures: ["client"],
  compactions: ["client"],
};

/** Rows of every kind, written by this build's own code (a ledger of the current schema). */
function writeRows(stateDir: string): void {
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
  db.prepare(
    `INSERT INTO export_state (exporter, event_watermark, call_watermark, window_start_ns, last_success_ms,
       capture_watermark, compaction_watermark, final_call_watermark)
     VALUES ('otlp', 2, 2, '123', 456, 1, 1, 3)`,
  ).run();
  db.close();
}

/** A v1 ledger (the baseline DDL only) holding the rows of writeRows. */
const v1Ledger = (): string => v1Ledger1(dir, writeRows);

/** Every table's rows, v1 columns only, in a stable order. */
function snapshot(db: Database.Database, tables: readonly string[], v1Columns: Map<string, string[]>) {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const cols = (v1Columns.get(t) as string[]).join(", ");
    out[t] = db.prepare(`SELECT ${cols} FROM ${t} ORDER BY ${cols}`).all();
  }
  return out;
}

/** The schema as sqlite_master and the pragmas describe it: tables, columns, indexes, their SQL. */
function shape(path: string): unknown {
  const db = new Database(path, { readonly: true });
  const master = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
    .all() as { type: string; name: string }[];
  const tables = master.filter((m) => m.type === "table").map((m) => m.name);
  const out = {
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
  db.close();
  return out;
}

describe("ledger schema v2: cline.client in every series key", () => {
  it("a v1 ledger with rows of every kind upgrades in place: rows, totals, ids and watermarks kept", () => {
    const v1 = v1Ledger();
    const path = join(v1, LEDGER_FILE);
    const before = new Database(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(1);
    const tables = tablesOf(before);
    const v1Columns = new Map(tables.map((t) => [t, columnsOf(before, t)]));
    for (const t of Object.keys(ADDED)) expect(v1Columns.get(t)).not.toContain("client");
    const rows = snapshot(before, tables, v1Columns);
    before.close();
    // Something of every kind to keep.
    for (const t of [
      ...Object.keys(ADDED),
      "events",
      "tool_calls",
      "capture_buckets",
      "export_state",
      "meta",
    ])
      expect(rows[t]?.length, t).toBeGreaterThan(0);

    // The v2 step alone (later steps add tables of their own: their tests cover them).
    const up = new Database(path);
    migrate(
      up,
      path,
      () => 2,
      () => "unused",
      MIGRATIONS.slice(0, 2),
    );
    up.close();
    const after = new Database(path, { readonly: true });
    expect(after.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(tablesOf(after).sort()).toEqual([...tables].sort());
    expect(snapshot(after, tables, v1Columns)).toEqual(rows);
    for (const [t, added] of Object.entries(ADDED)) {
      expect(columnsOf(after, t)).toEqual([...(v1Columns.get(t) as string[]), ...added]);
      for (const c of added)
        expect(after.prepare(`SELECT DISTINCT ${c} AS v FROM ${t}`).all(), `${t}.${c}`).toEqual([{ v: "" }]);
    }
    after.close();
  });

  it("after the upgrade, new events go to client-keyed series; the old series export without cline.client", () => {
    const v1 = v1Ledger();
    const l = Ledger.open(v1);
    const old = l.usageSeries();
    expect(old).toHaveLength(1);
    const oldRow = old[0];
    l.commit(finalObservation([event("m3", { client: "vscode" })], [], 200));
    const rows = l.usageSeries();
    expect(rows).toHaveLength(2);
    // The old series is untouched (same id order, same totals); the new one carries the client.
    expect(rows[0]).toEqual(oldRow);
    expect(rows[1]).toMatchObject({ client: "vscode", events: 1, input: 100, sessionId: "s1" });
    const points = translate(rows, [], { project: "path", includeSessionId: true, priceOf: NO_PRICES });
    const requests = points.get("requests") ?? [];
    expect(requests.map((p) => p.attributes[ATTR.client])).toEqual([undefined, "vscode"]);
    expect(requests.map((p) => p.value)).toEqual([2, 1]);
    l.close();
  });

  it("a read-only view of a v1 ledger (an older daemon still writing it) reads its series with client ''", () => {
    const v1 = v1Ledger();
    const l = Ledger.open(v1, { readOnly: true });
    const rows = [...l.usageSeries(), ...l.toolSeries(), ...l.captureSeries(), ...l.compactionSeries()];
    expect(rows.length).toBeGreaterThan(3);
    for (const r of rows) expect(r.client).toBe("");
    expect(l.captureDelta(0, 10)).toHaveLength(1);
    expect(l.compactionDelta(0, 10)).toHaveLength(1);
    l.close();
    const db = new Database(join(v1, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    db.close();
  });

  it("a fresh ledger has exactly the schema of an upgraded one", () => {
    const v1 = v1Ledger();
    Ledger.open(v1).close();
    const fresh = join(dir, "fresh");
    Ledger.open(fresh).close();
    expect(shape(join(fresh, LEDGER_FILE))).toEqual(shape(join(v1, LEDGER_FILE)));
    // Nothing refers to a table renamed away (capture_buckets' key points at the new capture_series).
    const db = new Database(join(v1, LEDGER_FILE), { readonly: true });
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").all() as { sql: string }[])
      .map((r) => r.sql)
      .join("\n");
    expect(sql).not.toMatch(/_v1\b/);
    expect(sql).toMatch(/REFERENCES capture_series \(id\)/);
    expect(db.pragma("foreign_key_check")).toEqual([]);
    db.close();
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v1 ledger as it was", () => {
    const v1 = v1Ledger();
    const path = join(v1, LEDGER_FILE);
    const before = shape(path);
    const db = new Database(path);
    const broken = [MIGRATIONS[0] as string, `${CLIENT_SERIES_V2}\nSELECT no_such_function();`];
    expect(() =>
      migrate(
        db,
        path,
        () => 2,
        () => "unused",
        broken,
      ),
    ).toThrow(/no_such_function/);
    expect(db.pragma("user_version", { simple: true })).toBe(1);
    db.close();
    expect(shape(path)).toEqual(before);
  });
});
