/**
 * Schema v3 step (src/ledger/tables/rejected-v3.ts): the outcome `rejected` in every outcome
 * column. A v2 ledger holding rows of every kind upgrades in place with every row, id and total as
 * it was; a rejected call then commits, is final and counted by outcome (tool_outcome_series,
 * cline.tool.duration's genai row, its record in the queue), which the v2 schema refuses; a fresh
 * ledger has exactly the upgraded one's schema; a failed upgrade leaves the v2 ledger as it was.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { migrate } from "../../src/ledger/migrate.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { REJECTED_OUTCOME_TABLES, REJECTED_OUTCOME_V3 } from "../../src/ledger/tables/rejected-v3.ts";
import {
  commitCaptures,
  commitCompaction,
  requestCapture,
  sampleCompaction,
} from "../export/helpers/ledger.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";
import { ledgerAt } from "../helpers/ledger-at.ts";
import { columnsOf, tablesOf } from "../helpers/v1-ledger.ts";

// v3 is one step made of several parts (src/ledger/schema.ts): this part's step.
const V3 = MIGRATIONS.findIndex((step) => step.includes(REJECTED_OUTCOME_V3)) + 1;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rejected-v3-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Rows of every kind, outcomes success / failure / unknown (all a v2 ledger can hold) included. */
function writeRows(stateDir: string): void {
  const l = Ledger.open(stateDir, { now: () => 1_796_000_100_000 });
  const paid = event("m1", { toolCallCount: 3, client: "cli", startMs: 1_795_999_999_000 });
  const calls = [
    call("c1", paid.dedupKey, 3, { client: "cli" }),
    call("c2", paid.dedupKey, 3, { client: "cli", toolName: "editor" }),
    call("c3", paid.dedupKey, 3, { client: "cli", toolName: "read_files" }),
  ];
  const [c1, c2] = calls as [ReturnType<typeof call>, ReturnType<typeof call>];
  l.commit(
    observation(
      [paid, event("m2", { client: "cli" })],
      calls,
      100,
      undefined,
      docSignals([result(c1), result(c2, true)]),
    ),
  );
  // c3 never gets a result: final as unknown once its document is quiet.
  l.signals?.finalizeQuiet(1_796_001_000_000, 60_000);
  commitCaptures(l, "/caps/a", [requestCapture("a")]);
  commitCompaction(l, sampleCompaction());
  l.close();
}

function snapshot(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  const out: Record<string, unknown[]> = {};
  for (const t of tablesOf(db)) {
    const cols = columnsOf(db, t).join(", ");
    out[t] = db.prepare(`SELECT ${cols} FROM ${t} ORDER BY ${cols}`).all();
  }
  db.close();
  return out;
}

function shape(path: string): unknown {
  const db = new Database(path, { readonly: true });
  const master = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").all();
  db.close();
  return master;
}

/** A rejected call of a new document, with its result in the same read (final at once). */
function commitRejected(l: Ledger): void {
  const paid = event("r1", {
    dedupKey: "cline|s9|lead|r1",
    sessionId: "s9",
    toolCallCount: 1,
    client: "cli",
    sourcePath: "/s/s9/s9.messages.json",
  });
  const c = call("r1c", paid.dedupKey, 1, {
    callKey: "cline|s9|lead|r1c",
    sessionId: "s9",
    toolName: "editor",
    client: "cli",
    sourcePath: paid.sourcePath,
  });
  const source = { adapterId: "cline", path: paid.sourcePath, origin: "walk" as const, hint: {} };
  l.commit(observation([paid], [c], 100, source, docSignals([{ ...result(c, true), outcome: "rejected" }])));
}

describe("ledger schema v3 step: the outcome 'rejected'", () => {
  it("is the step after v2", () => {
    expect(V3).toBe(3);
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(V3);
  });

  it("a v2 ledger with rows of every kind upgrades in place: every row, id and total kept", () => {
    const v2 = ledgerAt(dir, 2, writeRows);
    const path = join(v2, LEDGER_FILE);
    const before = snapshot(path);
    for (const t of [...REJECTED_OUTCOME_TABLES, "events", "captures", "capture_series", "compactions"])
      expect(before[t]?.length, t).toBeGreaterThan(0);
    const outcomes = (before.tool_calls as { outcome: string | null }[]).map((r) => r.outcome).sort();
    expect(outcomes).toEqual(["failure", "success", "unknown"]);
    Ledger.open(v2).close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").all() as { sql: string }[])
      .map((r) => r.sql)
      .join("\n");
    db.close();
    expect(sql).not.toMatch(/_v2\b/);
    // Every table the v2 ledger had, as it was (the same step adds tables of its own: report_rollup).
    // The checkpoints are the one exception: v3's edits part drops them, so the history is read
    // again for its edits (test/ledger/edits-v3.test.ts); and v8 gives each call its edits' sums,
    // none for a v2 ledger's calls (tables/edit-call-sums-v8.ts).
    const after = snapshot(path);
    expect(Object.fromEntries(Object.keys(before).map((t) => [t, after[t]]))).toEqual({
      ...before,
      checkpoints: [],
      tool_calls: (before.tool_calls as object[]).map((r) => ({ ...r, edit_sums: null })),
    });
  });

  it("a v2 ledger refuses a rejected call; the upgraded one stores, finalizes and counts it", () => {
    const v2 = ledgerAt(dir, 2, writeRows);
    const raw = new Database(join(v2, LEDGER_FILE));
    expect(() => raw.prepare("UPDATE tool_calls SET outcome = 'rejected'").run()).toThrow(/CHECK/);
    raw.close();
    const l = Ledger.open(v2, { now: () => 1_796_000_200_000 });
    commitRejected(l);
    const series = l.signals?.toolOutcomes.series() ?? [];
    expect(
      series.filter((r) => r.outcome === "rejected").map((r) => [r.sessionId, r.toolName, r.calls]),
    ).toEqual([["s9", "editor", 1]]);
    l.close();
    const db = new Database(join(v2, LEDGER_FILE), { readonly: true });
    expect(db.prepare("SELECT outcome FROM tool_calls WHERE call_key = 'cline|s9|lead|r1c'").get()).toEqual({
      outcome: "rejected",
    });
    expect(db.prepare("SELECT COUNT(*) AS n FROM genai_rows WHERE outcome = 'rejected'").get()).toEqual({
      n: 1,
    });
    db.close();
  });

  it("every index of a rebuilt table is there again, and a fresh ledger has the upgraded one's schema", () => {
    const v2 = ledgerAt(dir, 2, writeRows);
    const beforeIdx = (shape(join(v2, LEDGER_FILE)) as { type: string; name: string }[])
      .filter((m) => m.type === "index")
      .map((m) => m.name);
    Ledger.open(v2).close();
    const after = shape(join(v2, LEDGER_FILE)) as { type: string; name: string }[];
    // Every index of v2 again (v3's other parts add indexes of their own tables).
    expect(after.filter((m) => m.type === "index").map((m) => m.name)).toEqual(
      expect.arrayContaining(beforeIdx),
    );
    const fresh = join(dir, "fresh");
    Ledger.open(fresh).close();
    expect(shape(join(fresh, LEDGER_FILE))).toEqual(after);
  });

  it("runs in the upgrade's one transaction: a failure in it leaves the v2 ledger as it was", () => {
    const v2 = ledgerAt(dir, 2, writeRows);
    const path = join(v2, LEDGER_FILE);
    const before = shape(path);
    const rows = snapshot(path);
    const db = new Database(path);
    const broken = [...MIGRATIONS.slice(0, 2), `${REJECTED_OUTCOME_V3}\nSELECT no_such_function();`];
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
    expect(shape(path)).toEqual(before);
    expect(snapshot(path)).toEqual(rows);
  });
});
