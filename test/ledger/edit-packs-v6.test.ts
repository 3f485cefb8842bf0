/**
 * Schema v6 (src/ledger/tables/edit-packs-v6.ts): the edits a commit adds for one document are one
 * `edit_packs` row, each edit's key in `edit_keys` (exactly once, and its call's edits by prefix; since v8
 * its place in its call's row: tables/edit-call-sums-v8.ts), and
 * `edits` the view of them. A v5 ledger holding rows of every kind upgrades in place: each edit a pack
 * of one with the row's id, so ids, seqs, watermarks and the signal batch are what they were; a new
 * document's edits after the upgrade are one pack whose id follows; a re-read adds only new edits; the
 * report's edges and the delta window read the packs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EditRecord } from "../../src/adapter/types.ts";
import { invalidEdit } from "../../src/ledger/delivered/edits.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS } from "../../src/ledger/schema.ts";
import { ROLLUP_BUCKET_MS } from "../../src/ledger/tables/report-rollup-v3.ts";
import { editDoc, src, T0 } from "../helpers/edit-docs.ts";
import { call, edit, event, finalObservation, withEdits } from "../helpers/events.ts";
import { wholeBatch } from "../helpers/signal-batch.ts";
import { ledgerAtVersion, tablesOf } from "../helpers/v1-ledger.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edits-v6-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const doc = editDoc;

function write(stateDir: string): void {
  const w = Ledger.open(stateDir);
  for (let d = 0; d < 3; d++) w.commit(doc(d));
  w.close();
}

const batch = wholeBatch;

const EDIT_COLUMNS =
  "edit_key, adapter, session_id, agent, tool_name, operation, decision, source, language, lines_added, " +
  "lines_removed, exact, ts_ms, model, provider, project, client, source_path, signal_seq";

describe("schema v6: a document's new edits as one pack", () => {
  it("a v5 ledger holding rows of every kind upgrades in place: each edit a pack of one with its id", () => {
    const v5 = ledgerAtVersion(dir, write, 5);
    const path = join(v5, LEDGER_FILE);
    const old = new Database(path);
    expect(old.pragma("user_version", { simple: true })).toBe(5);
    expect(old.prepare("SELECT type FROM sqlite_master WHERE name = 'edits'").get()).toEqual({
      type: "table",
    });
    const rows = old.prepare(`SELECT id, ${EDIT_COLUMNS}, ingested_ms FROM edits ORDER BY id`).all();
    expect(rows.length).toBe(12);
    const series = old.prepare("SELECT * FROM edit_series ORDER BY id").all();
    // A delta exporter half-way through the history: its watermark is an edit id.
    old.prepare("UPDATE export_state SET edit_watermark = 6").run();
    const state = old.prepare("SELECT * FROM export_state").all();
    const others = tablesOf(old).filter((t) => t !== "edits");
    const counts = new Map(
      others.map((t) => [t, (old.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]),
    );
    old.close();

    const l = Ledger.open(v5);
    try {
      const db = new Database(path, { readonly: true });
      try {
        expect(db.pragma("user_version", { simple: true })).toBe(MIGRATIONS.length);
        expect(db.prepare("SELECT type FROM sqlite_master WHERE name = 'edits'").get()).toEqual({
          type: "view",
        });
        // Every edit, with its id, key, seq and values, through the view.
        expect(db.prepare(`SELECT id, ${EDIT_COLUMNS}, ingested_ms FROM edits ORDER BY id`).all()).toEqual(
          rows,
        );
        expect(db.prepare("SELECT COUNT(*) AS n, MIN(n) AS lo, MAX(n) AS hi FROM edit_packs").get()).toEqual({
          n: 12,
          lo: 1,
          hi: 1,
        });
        // v6's edit_keys rows, since v8 the places in their calls' rows (tables/edit-call-sums-v8.ts).
        expect(
          db.prepare("SELECT SUM(json_array_length(edit_sums, '$[6]')) AS n FROM tool_calls").get(),
        ).toEqual({ n: 12 });
        expect(db.prepare("SELECT * FROM edit_series ORDER BY id").all()).toEqual(series);
        expect(db.prepare("SELECT * FROM export_state").all()).toEqual(state);
        for (const [t, n] of counts)
          expect((db.prepare(`SELECT COUNT(*) AS c FROM ${t}`).get() as { c: number }).c, t).toBe(n);
        // The signal batch reads what this build reads from the ledger the v5 copy was made of.
        const source = new Database(join(dir, "source", LEDGER_FILE), { readonly: true });
        const before = batch(source);
        source.close();
        const after = batch(db);
        expect(after).toEqual(before);
        expect(after.filter((r) => r.kind === "edit").length).toBe(12);
        expect(after.find((r) => r.kind === "tool" && r.refKey === "cline|s1|lead|c1")).toMatchObject({
          linesAdded: 6 + 2 + 1,
          linesRemoved: 10,
          exact: 0,
          editsAccepted: 1,
          editsRejected: 1,
          editsFailed: 1,
        });
        expect(after.find((r) => r.kind === "tool" && r.refKey === "cline|s1|lead|c1|7")).toMatchObject({
          linesAdded: 41,
          editsAccepted: 1,
        });
        expect(after.find((r) => r.kind === "edit" && r.refKey === "cline|s1|lead|c2|12")).toMatchObject({
          callKey: "cline|s1|lead|c2",
          toolUseId: "toolu_a2",
          decision: "failed",
          language: "python",
          exact: 0,
        });
      } finally {
        db.close();
      }
      // The delta window past the watermark (edit ids 7..12) is what the rows said.
      expect(l.maxEditId()).toBe(12);
      const delta = l.editDelta(6, 12);
      expect(delta.reduce((n, r) => n + r.edits, 0)).toBe(6);
      expect(delta.reduce((n, r) => n + r.linesAdded, 0)).toBe(
        (rows as { id: number; lines_added: number }[])
          .filter((r) => r.id > 6)
          .reduce((n, r) => n + r.lines_added, 0),
      );
      // A new document after the upgrade: its four edits are one pack, numbered after the old rows.
      const r = l.commit(doc(3));
      expect(r.editsAdded).toBe(4);
      expect(l.maxEditId()).toBe(13);
      expect(l.editDelta(12, 13).reduce((n, s) => n + s.edits, 0)).toBe(4);
      expect(l.signals?.queued().edit).toBe(16);
    } finally {
      l.close();
    }
  });

  it("a read-only report over a v5 ledger (its daemon not yet upgraded) reads its edits table as this build's over v6", () => {
    const v5 = ledgerAtVersion(dir, write, 5);
    const ro = Ledger.open(v5, { readOnly: true });
    const current = Ledger.open(join(dir, "source"), { readOnly: true });
    try {
      const window = { fromMs: T0 + 500, toMs: Number.MAX_SAFE_INTEGER, bucketMs: 1 };
      for (const dims of [[], ["session"], ["tool"], ["model"]] as const) {
        expect(ro.report.grouped("edits", dims, window), dims.join()).toEqual(
          current.report.grouped("edits", dims, window),
        );
        expect(ro.report.summed("edits", dims, window), dims.join()).toEqual(
          current.report.summed("edits", dims, window),
        );
      }
      expect(ro.maxEditId()).toBe(12);
      // The same series (their order follows ids, which v6 shares within a pack).
      const sorted = (rows: readonly object[]) => rows.map((r) => JSON.stringify(r)).sort();
      expect(sorted(ro.editDelta(0, 12))).toEqual(sorted(current.editDelta(0, current.maxEditId())));
    } finally {
      ro.close();
      current.close();
    }
  });

  it("a document's edits are one pack; a re-read stores only the new ones, as the next pack", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      expect(l.commit(doc(0)).editsAdded).toBe(4);
      // The same document again (nothing new), then grown by two edits.
      expect(l.commit(doc(0)).editsAdded).toBe(0);
      expect(l.commit(doc(0, 2)).editsAdded).toBe(2);
      const db = new Database(join(dir, "l", LEDGER_FILE), { readonly: true });
      try {
        const packs = db
          .prepare(
            "SELECT id, n, seq_first AS f, seq_last AS z, ts_min AS lo, ts_max AS hi FROM edit_packs ORDER BY id",
          )
          .all() as { id: number; n: number; f: number; z: number; lo: number; hi: number }[];
        expect(packs.map((p) => [p.id, p.n])).toEqual([
          [1, 4],
          [2, 2],
        ]);
        // Consecutive seqs, the second pack's after the first's.
        for (const p of packs) expect(p.z - p.f + 1).toBe(p.n);
        expect((packs[1] as { f: number }).f).toBeGreaterThan((packs[0] as { z: number }).z);
        expect([packs[0]?.lo, packs[0]?.hi]).toEqual([T0, T0 + 1]);
        // Each call's row keeps its edits' sums and places (schema v8): the second call's grown by the re-read.
        const calls = db
          .prepare(
            "SELECT call_key AS k, edit_sums AS s FROM tool_calls WHERE edit_sums IS NOT NULL ORDER BY id",
          )
          .all() as { k: string; s: string }[];
        expect(calls.map((c) => [c.k, JSON.parse(c.s)])).toEqual([
          ["cline|s1|lead|c0", [8, 10, 0, 1, 1, 1, ["0", "1", "12"]]],
          ["cline|s1|lead|c0|7", [241, 3, 1, 3, 0, 0, ["0", "20", "21"]]],
        ]);
        // The view: each edit with its own seq and values, in order.
        expect(db.prepare("SELECT id, signal_seq AS s, lines_added AS a, model FROM edits").all()).toEqual([
          { id: 1, s: packs[0]?.f, a: 5, model: "m1" },
          { id: 1, s: (packs[0]?.f ?? 0) + 1, a: 2, model: "m1" },
          { id: 1, s: (packs[0]?.f ?? 0) + 2, a: 1, model: "m1" },
          { id: 1, s: (packs[0]?.f ?? 0) + 3, a: 40, model: "m2" },
          { id: 2, s: packs[1]?.f, a: 100, model: "m1" },
          { id: 2, s: (packs[1]?.f ?? 0) + 1, a: 101, model: "m1" },
        ]);
      } finally {
        db.close();
      }
      expect(l.signals?.queued().edit).toBe(6);
    } finally {
      l.close();
    }
  });

  it("an observation's edits of another session, agent, tool, project, client or document are a pack of their own", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      const paid = event("m0", { toolCallCount: 1 });
      const c = call("c0", paid.dedupKey, 1);
      const o = withEdits(finalObservation([paid], [c]), [
        edit(c, {}, 0),
        edit(c, { agent: "sub1" }, 1),
        edit(c, { agent: "sub1" }, 2),
        edit(c, { project: "/other" }, 3),
        edit(c, { client: "vscode" }, 4),
        edit(c, { sessionId: "s2" }, 5),
        edit(c, { sourcePath: "/s/other.json" }, 6),
        edit(c, { toolName: "write_to_file" }, 7),
        // Back to the first pack's columns: into the first pack, not a new one.
        edit(c, {}, 8),
        edit(c, { toolName: "write_to_file" }, 9),
      ]);
      expect(l.commit(o).editsAdded).toBe(10);
      const db = new Database(join(dir, "l", LEDGER_FILE), { readonly: true });
      try {
        expect(db.prepare("SELECT n FROM edit_packs ORDER BY id").pluck().all()).toEqual([
          2, 2, 1, 1, 1, 1, 2,
        ]);
        // The view: pack by pack, each edit with its pack's columns; the seqs run on in that order.
        const order = [0, 8, 1, 2, 3, 4, 5, 6, 7, 9];
        expect(
          db
            .prepare(
              "SELECT edit_key AS k, agent, tool_name AS t, project, client, session_id AS s, source_path AS p FROM edits",
            )
            .all(),
        ).toEqual(
          order.map((i) => {
            const e = o.edits?.[i] as EditRecord;
            return {
              k: e.editKey,
              agent: e.agent,
              t: e.toolName,
              project: e.project,
              client: e.client ?? "",
              s: e.sessionId,
              p: e.sourcePath,
            };
          }),
        );
        const seqs = db.prepare("SELECT signal_seq FROM edits").pluck().all() as number[];
        expect(seqs.map((q) => q - (seqs[0] ?? 0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        // Whatever its pack, each edit's place is in its call's row, once.
        expect(
          JSON.parse(
            db
              .prepare("SELECT edit_sums FROM tool_calls WHERE call_key = ?")
              .pluck()
              .get(c.callKey) as string,
          )[6],
        ).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
      } finally {
        db.close();
      }
    } finally {
      l.close();
    }
  });

  it("the report reads the packs: the edges those that meet them, a view by session the packs' own sums", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      // Edits spread over three buckets, one document each, and one before 1970 (the rollup keeps none),
      // of two sessions, each document with an accepted, a rejected and a failed edit.
      const base = Math.floor(T0 / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
      const times = [base + 10, base + ROLLUP_BUCKET_MS + 20, base + 2 * ROLLUP_BUCKET_MS + 30, -5_000];
      times.forEach((t, d) => {
        const sessionId = `s${d % 2}`;
        const paid = event(`m${d}`, { toolCallCount: 1, timestampMs: t, sessionId });
        const c = call(`c${d}`, paid.dedupKey, 1, { timestampMs: t, sessionId });
        l.commit(
          withEdits(finalObservation([paid], [c], 100, src(`/s/e${d}.json`)), [
            edit(c, { linesAdded: 1 + d, linesRemoved: d, timestampMs: t }, 0),
            edit(
              c,
              { linesAdded: 10 * (1 + d), timestampMs: t + 1, decision: "rejected", toolName: "write" },
              1,
            ),
            edit(c, { linesAdded: 0, linesRemoved: 0, timestampMs: t + 2, decision: "failed" }, 2),
          ]),
        );
      });
      const windows = [
        { fromMs: base + 11, toMs: base + 2 * ROLLUP_BUCKET_MS + 31 },
        { fromMs: base, toMs: base + ROLLUP_BUCKET_MS + 21 },
        { fromMs: -10_000, toMs: base + 11 },
        { fromMs: base + 10, toMs: base + 13 },
        { fromMs: Number.MIN_SAFE_INTEGER, toMs: Number.MAX_SAFE_INTEGER },
      ];
      const rows = l.edits.rows() as {
        ts_ms: number;
        session_id: string;
        tool_name: string;
        decision: string;
      }[];
      expect(rows.length).toBe(12);
      /** What the report's columns are, from the rows, grouped by `key`. */
      const want = (w: { fromMs: number; toMs: number }, key: (r: (typeof rows)[number]) => string) => {
        const out = new Map<string, number[]>();
        for (const r of rows.filter((r) => r.ts_ms >= w.fromMs && r.ts_ms < w.toMs)) {
          const v = out.get(key(r)) ?? [0, 0, 0, 0, 0];
          const e = r as unknown as { lines_added: number; lines_removed: number };
          const ok = r.decision === "accepted";
          out.set(key(r), [
            (v[0] as number) + (ok ? e.lines_added : 0),
            (v[1] as number) + (ok ? e.lines_removed : 0),
            (v[2] as number) + (ok ? 1 : 0),
            (v[3] as number) + (r.decision === "rejected" ? 1 : 0),
            (v[4] as number) + (r.decision === "failed" ? 1 : 0),
          ]);
        }
        return [...out].sort(([a], [b]) => a.localeCompare(b));
      };
      const got = (rs: Record<string, unknown>[], dim: string) =>
        rs
          .filter(
            (r) => (r.editsAccepted as number) + (r.editsRejected as number) + (r.editsFailed as number) > 0,
          )
          .map((r) => [
            String(r[dim] ?? ""),
            [r.linesAdded, r.linesRemoved, r.editsAccepted, r.editsRejected, r.editsFailed],
          ]);
      for (const w of windows) {
        const window = { ...w, bucketMs: 1 };
        const label = JSON.stringify(w);
        expect(got(l.report.summed("edits", [], window), "none"), label).toEqual(want(w, () => ""));
        expect(got(l.report.grouped("edits", [], window), "none"), label).toEqual(want(w, () => ""));
        expect(got(l.report.grouped("edits", ["session"], window), "session"), label).toEqual(
          want(w, (r) => r.session_id),
        );
        expect(got(l.report.grouped("edits", ["tool"], window), "tool"), label).toEqual(
          want(w, (r) => r.tool_name),
        );
      }
    } finally {
      l.close();
    }
  });

  it("a delta window is whole packs of at most its edits, at least one pack", () => {
    const l = Ledger.open(join(dir, "l"));
    try {
      // Packs of 3, 3, 3, 10 and 1 edits (ids 1..5).
      [3, 3, 3, 10, 1].forEach((n, d) => {
        const paid = event(`m${d}`, { toolCallCount: 1 });
        const c = call(`c${d}`, paid.dedupKey, 1);
        const edits = Array.from({ length: n }, (_, i) => edit(c, {}, i));
        expect(
          l.commit(withEdits(finalObservation([paid], [c], 100, src(`/s/w${d}.json`)), edits)).editsAdded,
        ).toBe(n);
      });
      expect(l.maxEditId()).toBe(5);
      const ends = (after: number, max: number) => l.editWindowEnd(after, max);
      expect([ends(0, 5), ends(0, 6), ends(1, 5), ends(2, 5), ends(3, 5), ends(4, 5), ends(5, 5)]).toEqual([
        1, 2, 2, 3, 4, 5, 5,
      ]);
      expect(ends(0, 100)).toBe(5);
      expect(ends(0, 19)).toBe(4);
      // Each window's edits are what the delta reads.
      expect(l.editDelta(3, ends(3, 5)).reduce((n, r) => n + r.edits, 0)).toBe(10);
    } finally {
      l.close();
    }
  });

  it("an edit whose time is not an integer is refused and reported, not stored", () => {
    const c = call("c1", "", 1);
    expect(invalidEdit(edit(c, { timestampMs: 1.5 }))).toMatch(/timestampMs is not an integer/);
    expect(invalidEdit(edit(c, { timestampMs: Number.NaN }))).toMatch(/timestampMs is not an integer/);
    const l = Ledger.open(join(dir, "l"));
    try {
      const r = l.commit(
        withEdits(finalObservation([], [c]), [edit(c, { timestampMs: 2.5 }, 0), edit(c, {}, 1)]),
      );
      expect(r.editsAdded).toBe(1);
      expect(r.editsInvalid?.[0]?.reason).toMatch(/not an integer/);
    } finally {
      l.close();
    }
  });
});
