/**
 * Schema v3 (src/ledger/tables/edits-v3.ts): the file edits. A v2 ledger holding rows of every
 * kind (events, calls, signal records, series of every family, captures, compactions, an export
 * state and a backfill in progress) upgrades in place with every row as it was; edits then
 * commit exactly once by their key, with their series, in the document's transaction; a fresh
 * ledger has exactly the upgraded one's schema; a failure in the step leaves the v2 ledger as it
 * was; a read-only view of a v2 ledger (an older daemon still writing it) reads no edits.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { EDITS_V3 } from "../../src/ledger/tables/edits-v3.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import {
  schemaShape,
  tableRows,
  upgradedAndFresh,
  writeRowsOfEveryKind,
} from "../helpers/upgrade-snapshots.ts";
import { columnsOf, ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edits-v3-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const v2Ledger = (): string => ledgerAtVersion(dir, (d) => writeRowsOfEveryKind(d, { backfill: true }), 2);

/** An observation with two edits of one call, one accepted (inexact) and one rejected. */
function editObservation(size = 100) {
  const paid = event("m9", { toolCallCount: 1, client: "cli", timestampMs: 1_796_000_100_000 });
  const c = call("c9", paid.dedupKey, 1, {
    client: "cli",
    toolName: "editor",
    timestampMs: 1_796_000_100_000,
  });
  return withEdits(finalObservation([paid], [c], size), [
    edit(c, { linesAdded: 12, linesRemoved: 0, operation: "create", exact: false }),
    edit(c, { decision: "rejected", source: "user", linesAdded: 2, linesRemoved: 5 }, 1),
  ]);
}

describe("ledger schema v3: file edits", () => {
  it("a v2 ledger with rows of every kind upgrades in place: rows, ids, watermarks and a backfill kept", () => {
    const v2 = v2Ledger();
    const path = join(v2, LEDGER_FILE);
    const before = new Database(path, { readonly: true });
    expect(before.pragma("user_version", { simple: true })).toBe(2);
    const tables = tablesOf(before);
    const columns = new Map(tables.map((t) => [t, columnsOf(before, t)]));
    const rows = tableRows(before, tables, columns);
    before.close();
    for (const t of [
      "events",
      "tool_calls",
      "usage_series",
      "tool_series",
      "tool_outcome_series",
      "genai_rows",
      "captures",
      "capture_series",
      "capture_buckets",
      "compactions",
      "export_state",
      "export_backfill",
      "signal_documents",
      "checkpoints",
      "meta",
    ])
      expect(rows[t]?.length, t).toBeGreaterThan(0);

    Ledger.open(v2).close();
    const after = new Database(path, { readonly: true });
    expect(after.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    // v3's other parts add tables of their own (report_rollup): their tests cover them.
    // (v6 turns `edits` into a view of its packs: tables/edit-packs-v6.ts; v8 keeps an edit once by
    // its call's row, dropping v6's edit_keys: tables/edit-call-sums-v8.ts.)
    expect(tablesOf(after)).toEqual(expect.arrayContaining([...tables, "edit_packs", "edit_series"]));
    expect(tablesOf(after)).not.toContain("edit_keys");
    // Every row kept, but the checkpoints: dropped, so the history is read again for its edits.
    expect(tableRows(after, tables, columns)).toEqual({ ...rows, checkpoints: [] });
    expect(columnsOf(after, "export_state")).toEqual([
      ...(columns.get("export_state") as string[]),
      "edit_watermark",
      // tables/activity-v3.ts, combined into the same v3
      "activity_watermark",
    ]);
    expect(columnsOf(after, "export_backfill")).toEqual([
      ...(columns.get("export_backfill") as string[]),
      "edit_watermark",
      // tables/export-backfill-activity-v9.ts: a pass's activity watermark
      "activity_watermark",
    ]);
    expect(after.prepare("SELECT edit_watermark AS w FROM export_state").all()).toEqual([{ w: 0 }]);
    expect(after.prepare("SELECT phase, after_key, edit_watermark AS w FROM export_backfill").all()).toEqual([
      { phase: "outcome", after_key: '["a",1]', w: 0 },
    ]);
    expect(after.prepare("SELECT COUNT(*) AS n FROM edits").get()).toEqual({ n: 0 });
    after.close();
  });

  it("after the upgrade a known document is read again: its edits counted, nothing else twice", () => {
    const v2 = v2Ledger();
    const l = Ledger.open(v2);
    expect(l.allCheckpoints().size).toBe(0);
    const before = { counts: l.counts(), usage: l.usageSeries(), tool: l.toolSeries() };
    const queued = l.signals?.queued();
    // writeRows' document again (same events and calls), now with the edits an adapter reads from it.
    const paid = event("m1", { toolCallCount: 2, client: "vscode", startMs: 1_795_999_999_000 });
    const calls = [
      call("c1", paid.dedupKey, 2, { client: "vscode", toolName: "editor" }),
      call("c2", paid.dedupKey, 2, { client: "vscode", toolName: "read_files" }),
    ];
    const c1 = calls[0] as (typeof calls)[number];
    const r = l.commit(
      withEdits(finalObservation([paid, event("m2", { client: "vscode" })], calls), [
        edit(c1, { linesAdded: 5, linesRemoved: 1 }),
      ]),
    );
    expect(r).toMatchObject({ eventsAdded: 0, callsAdded: 0, editsAdded: 1 });
    expect(l.counts()).toEqual({ ...before.counts, sources: before.counts.sources + 1 });
    expect(l.usageSeries()).toEqual(before.usage);
    expect(l.toolSeries()).toEqual(before.tool);
    expect(l.signals?.queued()).toEqual({ ...queued, edit: 1 });
    expect(l.edits.series().map((s) => [s.decision, s.edits, s.linesAdded])).toEqual([["accepted", 1, 5]]);
    l.close();
  });

  it("after the upgrade, edits commit once by their key, with their series, next to the v2 rows", () => {
    const v2 = v2Ledger();
    const l = Ledger.open(v2);
    const usageBefore = l.usageSeries();
    const first = l.commit(editObservation());
    expect(first.editsAdded).toBe(2);
    // The same document read again (a rewrite, a restart): nothing new.
    expect(l.commit(editObservation(200)).editsAdded).toBe(0);
    expect(l.edits.rows()).toHaveLength(2);
    const series = l.edits.series();
    expect(series).toHaveLength(2);
    expect(
      series.map((s) => [s.decision, s.edits, s.linesAdded, s.linesRemoved, s.inexactLinesAdded]),
    ).toEqual([
      ["accepted", 1, 12, 0, 12],
      ["rejected", 1, 2, 5, 0],
    ]);
    // The v2 series are kept as they were; the new request went to its own client-keyed series.
    expect(l.usageSeries().slice(0, usageBefore.length)).toEqual(usageBefore);
    // The edit watermark round-trips; the old exporter's other watermarks are as they were.
    const s = l.getExportState("otlp");
    expect(s).toMatchObject({ eventWatermark: 2, callWatermark: 2, finalCallWatermark: 3, editWatermark: 0 });
    l.putExportState({ ...s, editWatermark: 2 });
    expect(l.getExportState("otlp").editWatermark).toBe(2);
    // A backfill may now stand in the edit phase.
    l.backfills?.put({
      exporter: "otlp",
      options: "{}",
      state: { ...s, editWatermark: 2 },
      phase: "edit",
      afterId: 1,
      delivered: 0,
      total: 1,
    });
    expect(l.backfills?.get("otlp")).toMatchObject({ phase: "edit", state: { editWatermark: 2 } });
    l.close();
  });

  it("a fresh ledger has exactly the schema of an upgraded one", () => {
    const { upgraded, fresh, sql } = upgradedAndFresh(dir, v2Ledger());
    expect(fresh).toEqual(upgraded);
    expect(sql).not.toMatch(/_v2\b/);
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v2 ledger as it was", () => {
    const v2 = v2Ledger();
    const path = join(v2, LEDGER_FILE);
    const before = schemaShape(path);
    const db = new Database(path);
    const broken = [...MIGRATIONS.slice(0, 2), `${EDITS_V3}\nSELECT no_such_function();`];
    expect(() =>
      migrate(
        db,
        path,
        () => 3,
        () => "unused",
        broken,
      ),
    ).toThrow(/no_such_function/);
    expect(db.pragma("user_version", { simple: true })).toBe(2);
    db.close();
    expect(schemaShape(path)).toEqual(before);
  });

  it("a read-only view of a v2 ledger reads no edits, an edit watermark 0 and the report without them", () => {
    const v2 = v2Ledger();
    const l = Ledger.open(v2, { readOnly: true });
    expect(l.edits.present).toBe(false);
    expect(l.edits.series()).toEqual([]);
    expect(l.maxEditId()).toBe(0);
    expect(l.editDelta(0, 10)).toEqual([]);
    expect(l.getExportState("otlp").editWatermark).toBe(0);
    l.close();
    const db = new Database(join(v2, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(2);
    db.close();
  });
});
