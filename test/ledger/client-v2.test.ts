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
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { CLIENT_SERIES_V2 } from "../../src/ledger/tables/client-v2.ts";
import { event, finalObservation } from "../helpers/events.ts";
import {
  schemaShape,
  tableRows,
  upgradedAndFresh,
  writeRowsOfEveryKind,
} from "../helpers/upgrade-snapshots.ts";
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

/** A v1 ledger (the baseline DDL only) holding rows of every kind. */
const v1Ledger = (): string => v1Ledger1(dir, writeRowsOfEveryKind);

describe("ledger schema v2: cline.client in every series key", () => {
  it("a v1 ledger with rows of every kind upgrades in place: rows, totals, ids and watermarks kept", () => {
    const v1 = v1Ledger();
    const path = join(v1, LEDGER_FILE);
    const before = new Database(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(1);
    const tables = tablesOf(before);
    const v1Columns = new Map(tables.map((t) => [t, columnsOf(before, t)]));
    for (const t of Object.keys(ADDED)) expect(v1Columns.get(t)).not.toContain("client");
    const rows = tableRows(before, tables, v1Columns);
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
    expect(after.pragma("user_version", { simple: true })).toBe(2);
    // Every v1 table kept.
    expect(tablesOf(after)).toEqual(expect.arrayContaining(tables));
    expect(tableRows(after, tables, v1Columns)).toEqual(rows);
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
    const { upgraded, fresh, sql } = upgradedAndFresh(dir, v1);
    expect(fresh).toEqual(upgraded);
    // Nothing refers to a table renamed away (capture_buckets' key points at the new capture_series).
    expect(sql).not.toMatch(/_v1\b/);
    expect(sql).toMatch(/REFERENCES capture_series \(id\)/);
    const db = new Database(join(v1, LEDGER_FILE), { readonly: true });
    expect(db.pragma("foreign_key_check")).toEqual([]);
    db.close();
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v1 ledger as it was", () => {
    const v1 = v1Ledger();
    const path = join(v1, LEDGER_FILE);
    const before = schemaShape(path);
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
    expect(schemaShape(path)).toEqual(before);
  });
});
