/**
 * Schema v3, the activity step (src/ledger/tables/activity-v3.ts): active time, commits and pull
 * requests, session starts. A v2 ledger holding rows of every kind upgrades in place with every
 * row as it was; the step applies to a v2 ledger on its own (self-contained: the lead combines
 * the v3 steps of several branches); records commit exactly once by their key through a rewrite
 * and a restart (first view wins); a read-only view of a v2 ledger reads none.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DeliveryRecord, SessionStartRecord } from "../../src/adapter/types.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { ACTIVITY_V3 } from "../../src/ledger/tables/activity-v3.ts";
import { type Gap, timelines } from "../helpers/active-time.ts";
import { finalObservation } from "../helpers/events.ts";
import { tableRows, writeRowsOfEveryKind } from "../helpers/upgrade-snapshots.ts";
import { columnsOf, ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "activity-v3-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const v2Ledger = (): string => ledgerAtVersion(dir, writeRowsOfEveryKind, 2);

const S = "1796000000000_abcde";
const base = {
  sessionId: S,
  agent: "lead",
  model: "m",
  provider: "anthropic",
  project: "/p",
  sourcePath: `/s/${S}/${S}.messages.json`,
  client: "cli",
};
const gap = (startMs: number, durationMs: number, type: "user" | "agent"): Gap => ({
  ...base,
  streamKey: `cline|${S}|lead|active`,
  type,
  startMs,
  durationMs,
});
const delivery = (callKey: string, kind: "commit" | "pull_request", n = 0): DeliveryRecord => ({
  ...base,
  deliveryKey: `${callKey}|${kind}|${n}`,
  callKey,
  kind,
  toolName: "run_commands",
  timestampMs: 1_796_000_000_500,
});
const start: SessionStartRecord = {
  ...base,
  startKey: `cline|${S}|lead|session|new`,
  startType: "new",
  timestampMs: 1_796_000_000_000,
};

/** A document read: its events (none needed here) and the activity records an adapter emits. */
function activityObservation(
  activeTime: Gap[],
  deliveries: DeliveryRecord[] = [],
  sessionStarts: SessionStartRecord[] = [start],
  size = 100,
) {
  return { ...finalObservation([], [], size), activeTime: timelines(activeTime), deliveries, sessionStarts };
}

const sums = (l: Ledger) => l.activity.series().map((s) => [s.kind, s.detail, s.amount, s.records] as const);

describe("ledger schema v3: activity", () => {
  it("a v2 ledger with rows of every kind upgrades in place: every row kept, the activity tables added", () => {
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
      "captures",
      "compactions",
      "export_state",
      "checkpoints",
    ])
      expect(rows[t]?.length, t).toBeGreaterThan(0);

    Ledger.open(v2).close();
    const after = new Database(path, { readonly: true });
    expect(after.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
    expect(tablesOf(after)).toEqual(expect.arrayContaining([...tables, "activity", "activity_series"]));
    // Every row kept, but the checkpoints: dropped, so the history is read again for its activity.
    const kept = tableRows(after, tables, columns);
    expect(kept).toEqual({ ...rows, checkpoints: [] });
    expect(columnsOf(after, "export_state")).toContain("activity_watermark");
    expect(after.prepare("SELECT activity_watermark AS w FROM export_state").all()).toEqual([{ w: 0 }]);
    expect(after.prepare("SELECT COUNT(*) AS n FROM activity").get()).toEqual({ n: 0 });
    after.close();
  });

  it("is self-contained: the step alone upgrades a v2 ledger (the lead combines v3 steps)", () => {
    const v2 = v2Ledger();
    const path = join(v2, LEDGER_FILE);
    const db = new Database(path);
    migrate(
      db,
      path,
      () => 3,
      () => "unused",
      [...MIGRATIONS.slice(0, 2), ACTIVITY_V3],
    );
    expect(db.pragma("user_version", { simple: true })).toBe(3);
    expect(tablesOf(db)).toEqual(expect.arrayContaining(["activity", "activity_series"]));
    expect(db.prepare("SELECT COUNT(*) AS n FROM checkpoints").get()).toEqual({ n: 0 });
    db.close();
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v2 ledger as it was", () => {
    const v2 = v2Ledger();
    const path = join(v2, LEDGER_FILE);
    const db = new Database(path);
    const tablesBefore = tablesOf(db);
    const broken = [...MIGRATIONS.slice(0, 2), `${ACTIVITY_V3}\nSELECT no_such_function();`];
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
    expect(tablesOf(db)).toEqual(tablesBefore);
    expect((db.prepare("SELECT COUNT(*) AS n FROM checkpoints").get() as { n: number }).n).toBeGreaterThan(0);
    db.close();
  });

  it("exactly once through a rewrite (first view of a gap wins) and a restart", () => {
    const stateDir = v2Ledger();
    let l = Ledger.open(stateDir);
    const first = l.commit(
      activityObservation([gap(1_000, 500, "agent"), gap(1_500, 2_000, "user")], [delivery("c1", "commit")]),
    );
    expect(first.activityAdded).toBe(4);
    // The document rewritten: the gap at 1 500 now seen longer (a cancelled entry deleted), one more gap,
    // a pull request; the commit and the start again.
    const second = l.commit(
      activityObservation(
        [gap(1_000, 500, "agent"), gap(1_500, 9_000, "user"), gap(10_500, 250, "agent")],
        [delivery("c1", "commit"), delivery("c2", "pull_request")],
        [start],
        200,
      ),
    );
    expect(second.activityAdded).toBe(2);
    l.close();
    // A restart: the same document read again adds nothing.
    l = Ledger.open(stateDir);
    const third = l.commit(
      activityObservation(
        [gap(1_000, 500, "agent"), gap(1_500, 9_000, "user"), gap(10_500, 250, "agent")],
        [delivery("c1", "commit"), delivery("c2", "pull_request")],
        [start],
        300,
      ),
    );
    expect(third.activityAdded).toBe(0);
    expect(sums(l)).toEqual([
      ["active_time", "agent", 750, 2],
      ["active_time", "user", 2_000, 1],
      ["commit", "", 1, 1],
      ["session", "new", 1, 1],
      ["pull_request", "", 1, 1],
    ]);
    // The delta window over the rows gives the same totals as the series.
    const delta = l.activityDelta(0, l.maxActivityId());
    expect(delta.map((s) => [s.kind, s.detail, s.amount, s.records])).toEqual(sums(l));
    // The activity watermark round-trips.
    const s = l.getExportState("otlp");
    expect(s.activityWatermark).toBe(0);
    l.putExportState({ ...s, activityWatermark: 3 });
    expect(l.getExportState("otlp").activityWatermark).toBe(3);
    l.close();
  });

  it("a read-only view of a v2 ledger reads no activity and an activity watermark 0", () => {
    const v2 = v2Ledger();
    const l = Ledger.open(v2, { readOnly: true });
    expect(l.activity.present).toBe(false);
    expect(l.activity.series()).toEqual([]);
    expect(l.maxActivityId()).toBe(0);
    expect(l.activityDelta(0, 10)).toEqual([]);
    expect(l.getExportState("otlp").activityWatermark).toBe(0);
    l.close();
  });

  it("refuses a record that is not a duration (an adapter's bug), loudly", () => {
    const l = Ledger.open(join(dir, "fresh"));
    expect(() => l.commit(activityObservation([gap(1, 0.5, "agent")]))).toThrow(/not a duration/);
    l.close();
  });
});
