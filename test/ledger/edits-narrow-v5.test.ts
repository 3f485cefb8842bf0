/**
 * Schema v5 (src/ledger/tables/edits-narrow-v5.ts): an edit row without its call key (derived from
 * its edit key) and that key's index, and without its usage key. A v4 ledger holding rows of every
 * kind upgrades in place: every row, id and signal seq kept, the two columns and the index gone; the
 * signal batch (tool records' per-call edit sums, an edit's call key and its call's tool_use_id)
 * reads the same from the v4 ledger's stored call keys and from the v5 ledger's edit keys, including
 * a call whose key is another's followed by `|` (this build's batch, over the upgraded ledger and over the
 * ledger the v4 copy was made from). An edit whose key is not `<call key>|<n>` is refused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Source } from "../../src/adapter/types.ts";
import { invalidEdit, isCallEditKey } from "../../src/ledger/delivered/edits.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { callKeyOf, callKeyOfSql, editCallKeySql } from "../../src/ledger/tables/edits-narrow-v5.ts";
import { commitCaptures, requestCapture } from "../export/helpers/ledger.ts";
import { timelines } from "../helpers/active-time.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { wholeBatch } from "../helpers/signal-batch.ts";
import { columnsOf, ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edits-v5-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_796_000_000_000;
const src = (path: string): Source => ({ adapterId: "cline", path, origin: "walk", hint: {} });

/** Calls with edits (one call's key is another's + `|7`), a call without, activity and a capture. */
function write(stateDir: string): void {
  const w = Ledger.open(stateDir);
  for (let d = 0; d < 3; d++) {
    const paid = event(`m${d}`, { toolCallCount: 3, timestampMs: T0 + d * 1000, client: "cli" });
    const a = call(`c${d}`, paid.dedupKey, 3, { timestampMs: T0 + d * 1000, toolUseId: `toolu_a${d}` });
    const b = call(`c${d}|7`, paid.dedupKey, 3, { timestampMs: T0 + d * 1000 + 1, toolUseId: `toolu_b${d}` });
    const none = call(`n${d}`, paid.dedupKey, 3, {
      timestampMs: T0 + d * 1000 + 2,
      toolUseId: `toolu_n${d}`,
    });
    const o = finalObservation([paid], [a, b, none], 100 + d, src(`/s/d${d}.messages.json`));
    w.commit({
      ...withEdits(o, [
        edit(a, { linesAdded: 5 + d, linesRemoved: 1 }, 0),
        edit(a, { linesAdded: 2, linesRemoved: 9, decision: "rejected" }, 1),
        edit(a, { linesAdded: 1, linesRemoved: 0, exact: false, decision: "failed" }, 12),
        edit(b, { linesAdded: 40 + d, linesRemoved: 3 }, 0),
      ]),
      activeTime: timelines([
        {
          streamKey: `cline|s1|lead|d${d}`,
          type: "user",
          startMs: T0 + d * 1000,
          durationMs: 700,
          sessionId: "s1",
          agent: "lead",
          model: "m1",
          provider: "p1",
          project: "/work/ws",
          sourcePath: `/s/d${d}.messages.json`,
        },
      ]),
      deliveries: [
        {
          deliveryKey: `cline|s1|lead|c${d}|commit|0`,
          callKey: `cline|s1|lead|c${d}`,
          kind: "commit",
          toolName: "run_commands",
          timestampMs: T0 + d * 1000 + 5,
          sessionId: "s1",
          agent: "lead",
          model: "m1",
          provider: "p1",
          project: "/work/ws",
          sourcePath: `/s/d${d}.messages.json`,
        },
      ],
    });
  }
  commitCaptures(w, "/caps/a", [requestCapture("a")]);
  w.close();
}

const batch = wholeBatch;

describe("schema v5: the edit row without its call and usage keys", () => {
  it("a v4 ledger holding rows of every kind upgrades in place; the signal batch reads the same", () => {
    const v4 = ledgerAtVersion(dir, write, 4);
    const path = join(v4, LEDGER_FILE);
    const old = new Database(path);
    expect(old.pragma("user_version", { simple: true })).toBe(4);
    expect(columnsOf(old, "edits")).toContain("call_key");
    // The v4 rows' stored call keys are what v5 derives from the edit keys.
    expect(
      old.prepare(`SELECT COUNT(*) AS n FROM edits e WHERE e.call_key != ${editCallKeySql("e")}`).get(),
    ).toEqual({ n: 0 });
    const tables = tablesOf(old);
    const counts = new Map(
      tables.map((t) => [t, (old.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]),
    );
    for (const t of ["events", "tool_calls", "edits", "activity", "edit_series", "captures"])
      expect(counts.get(t), t).toBeGreaterThan(0);
    // Every edit is in the signal order (its cline.code_edit record): the batch below reads them.
    expect(old.prepare("SELECT COUNT(*) AS n FROM edits WHERE signal_seq IS NULL").get()).toEqual({ n: 0 });
    const edits = old.prepare("SELECT id, edit_key, signal_seq, lines_added FROM edits ORDER BY id").all();
    // What this build's batch reads from the ledger `write` filled (the rows the v4 copy was made of):
    // the batch reads the current schema only (v6's packs, tables/edit-packs-v6.ts).
    const source = new Database(join(dir, "source", LEDGER_FILE), { readonly: true });
    const before = batch(source);
    source.close();
    // The per-call sums as v4 read them: by the stored call key.
    const byCall = new Map(
      (
        old
          .prepare(
            `SELECT call_key AS k, SUM(lines_added) AS a, SUM(lines_removed) AS r, MIN(exact) AS x,
               SUM(decision = 'accepted') AS acc, SUM(decision = 'rejected') AS rej, SUM(decision = 'failed') AS f
             FROM edits GROUP BY call_key`,
          )
          .all() as { k: string; a: number; r: number; x: number; acc: number; rej: number; f: number }[]
      ).map((r) => [r.k, r]),
    );
    old.close();

    Ledger.open(v4).close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
      expect(columnsOf(db, "edits")).not.toContain("call_key");
      expect(columnsOf(db, "edits")).not.toContain("usage_key");
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'edits_call'").get()).toBeUndefined();
      for (const [t, n] of counts)
        expect((db.prepare(`SELECT COUNT(*) AS c FROM ${t}`).get() as { c: number }).c, t).toBe(n);
      expect(db.prepare("SELECT id, edit_key, signal_seq, lines_added FROM edits ORDER BY id").all()).toEqual(
        edits,
      );
      const after = batch(db);
      expect(after).toEqual(before);
      const tools = after.filter((r) => r.kind === "tool");
      expect(tools.length).toBe(9);
      for (const r of tools) {
        const s = byCall.get(r.refKey);
        expect(r, r.refKey).toMatchObject({
          linesAdded: s?.a ?? 0,
          linesRemoved: s?.r ?? 0,
          exact: s?.x ?? 1,
          editsAccepted: s?.acc ?? 0,
          editsRejected: s?.rej ?? 0,
          editsFailed: s?.f ?? 0,
        });
      }
      // A call whose key is another's + `|7` keeps its own edits apart.
      expect(tools.find((r) => r.refKey === "cline|s1|lead|c0")).toMatchObject({
        linesAdded: 8,
        editsAccepted: 1,
      });
      expect(tools.find((r) => r.refKey === "cline|s1|lead|c0|7")).toMatchObject({ linesAdded: 40 });
      const edit0 = after.find((r) => r.kind === "edit" && r.refKey === "cline|s1|lead|c2|7|0");
      expect(edit0).toMatchObject({ callKey: "cline|s1|lead|c2|7", toolUseId: "toolu_b2" });
    } finally {
      db.close();
    }
  });

  it("an edit whose key is not its call key, |, and a number is refused, not stored", () => {
    const c = call("c1", "", 1);
    for (const key of [
      "cline|s1|lead|c1",
      "cline|s1|lead|c1|",
      "cline|s1|lead|c1|x",
      "cline|s1|lead|c2|0",
      "cline|s1|lead|c1|0|1",
    ])
      expect(invalidEdit(edit(c, { editKey: key })), key).toMatch(/not its call key/);
    for (const key of ["cline|s1|lead|c1|0", "cline|s1|lead|c1|12"]) {
      expect(isCallEditKey(key, c.callKey)).toBe(true);
      // The JavaScript and SQL spellings of the call key derive the same.
      expect(callKeyOf(key)).toBe(c.callKey);
      expect(
        new Database(":memory:")
          .prepare(`WITH t(key) AS (SELECT ?) SELECT ${callKeyOfSql("t.key")} AS k FROM t`)
          .get(key),
      ).toEqual({
        k: c.callKey,
      });
      expect(invalidEdit(edit(c, { editKey: key }))).toBeUndefined();
    }
    const l = Ledger.open(join(dir, "l"));
    try {
      const r = l.commit({
        ...withEdits(finalObservation([], [c]), [edit(c, { editKey: `${c.callKey}-0` })]),
      });
      expect(r.editsAdded).toBe(0);
      expect(r.editsInvalid?.[0]?.reason).toMatch(/not its call key/);
      expect(l.edits.rows()).toEqual([]);
    } finally {
      l.close();
    }
  });
});
