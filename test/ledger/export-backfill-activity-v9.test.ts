/**
 * Schema v9 (src/ledger/tables/export-backfill-activity-v9.ts): export_backfill takes the `activity`
 * phase and a pass's activity watermark. A v8 ledger with a pass in progress upgrades with the pass
 * as it was (its position and watermarks, an activity watermark of 0), every other table untouched;
 * the new phase and watermark then round-trip; a fresh ledger has the upgraded one's schema.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import {
  schemaShape,
  tableRows,
  upgradedAndFresh,
  writeRowsOfEveryKind,
} from "../helpers/upgrade-snapshots.ts";
import { columnsOf, ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "backfill-v9-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const V9 = MIGRATIONS.length;

function v8Ledger(): string {
  return ledgerAtVersion(dir, (s) => writeRowsOfEveryKind(s, { backfill: true }), V9 - 1);
}

function rowsOf(path: string): { tables: string[]; rows: Record<string, unknown[]> } {
  const db = new Database(path, { readonly: true });
  try {
    const tables = tablesOf(db);
    const columns = new Map(tables.map((t) => [t, columnsOf(db, t)] as const));
    return { tables, rows: tableRows(db, tables, columns) };
  } finally {
    db.close();
  }
}

describe("schema v9: the activity phase of a cumulative pass in pages", () => {
  it("is this build's last step", () => {
    expect(SCHEMA_VERSION).toBe(9);
  });

  it("a v8 ledger's pass in progress is kept as it was, with an activity watermark of 0; nothing else changes", () => {
    const v8 = v8Ledger();
    const path = join(v8, LEDGER_FILE);
    const before = rowsOf(path);
    expect(before.rows.export_backfill).toHaveLength(1);
    const l = Ledger.open(v8);
    l.close();
    const after = rowsOf(path);
    expect([...after.tables].sort()).toEqual([...before.tables].sort());
    for (const t of before.tables) {
      if (t === "export_backfill") continue;
      expect(after.rows[t], t).toEqual(before.rows[t]);
    }
    expect(after.rows.export_backfill).toEqual(
      before.rows.export_backfill?.map((r) => ({ ...(r as object), activity_watermark: 0 })),
    );
    const reopened = Ledger.open(v8);
    try {
      expect(reopened.backfills?.get("otlp")).toMatchObject({
        phase: "outcome",
        afterId: 0,
        afterKey: ["a", 1],
        delivered: 2,
        total: 9,
        state: { eventWatermark: 2, callWatermark: 2, finalCallWatermark: 3, activityWatermark: 0 },
      });
    } finally {
      reopened.close();
    }
  });

  it("then a pass may stand in the activity phase, and its activity watermark round-trips", () => {
    const v8 = v8Ledger();
    const l = Ledger.open(v8);
    try {
      const saved = l.backfills?.get("otlp");
      if (saved === undefined)
        throw new Error("the v8 ledger's pass in progress did not survive the upgrade");
      l.backfills?.put({
        ...saved,
        phase: "activity",
        afterId: 7,
        state: { ...saved.state, activityWatermark: 42 },
      });
      expect(l.backfills?.get("otlp")).toMatchObject({
        phase: "activity",
        afterId: 7,
        state: { activityWatermark: 42, editWatermark: saved.state.editWatermark ?? 0 },
      });
    } finally {
      l.close();
    }
  });

  it("a fresh ledger has exactly the schema of an upgraded one, and no table of the step is left", () => {
    const { upgraded, fresh, sql } = upgradedAndFresh(dir, v8Ledger());
    expect(fresh).toEqual(upgraded);
    expect(sql).not.toMatch(/export_backfill_v8/);
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v8 ledger as it was", () => {
    const v8 = v8Ledger();
    const path = join(v8, LEDGER_FILE);
    const before = { shape: schemaShape(path), rows: rowsOf(path).rows };
    const db = new Database(path);
    try {
      const broken = [...MIGRATIONS.slice(0, V9 - 1), `${MIGRATIONS[V9 - 1]}\nSELECT no_such_function();`];
      expect(() =>
        db.transaction(() => {
          for (const sql of broken.slice(V9 - 1)) db.exec(sql);
        })(),
      ).toThrow(/no_such_function/);
    } finally {
      db.close();
    }
    expect(schemaShape(path)).toEqual(before.shape);
    expect(rowsOf(path).rows).toEqual(before.rows);
  });
});
