/**
 * The remembered index (src/adapter/cline/index-cache.ts): a new process whose sessions.db and
 * -wal marks are unchanged gets the stored rows without reading the database; any commit of
 * Cline's, a WAL that appears or goes, and a read too close to a change are read again.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { discoverCline } from "../../../src/adapter/cline/discover.ts";
import {
  decodeIndex,
  encodeIndex,
  INDEX_SCOPE,
  persistedIndexRead,
} from "../../../src/adapter/cline/index-cache.ts";
import { type IndexReadResult, readSessionIndex } from "../../../src/adapter/cline/index-db.ts";
import { resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import type { ListingStore, StoredListing } from "../../../src/adapter/listings.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { treeFingerprint } from "../../helpers/tree-hash.ts";
import { insertRows, openWriter, removeDir, sessionRow, tempDir } from "./helpers/cline-db.ts";

class MemoryStore implements ListingStore {
  readonly scopes = new Map<string, Map<string, StoredListing>>();
  saves = 0;
  failWith: string | undefined;
  load(scope: string): Map<string, StoredListing> {
    return new Map(this.scopes.get(scope) ?? []);
  }
  save(scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]): void {
    if (this.failWith !== undefined) throw new Error(this.failWith);
    const m = this.scopes.get(scope) ?? new Map<string, StoredListing>();
    for (const p of drop) m.delete(p);
    for (const [p, l] of put) m.set(p, l);
    this.scopes.set(scope, m);
    this.saves++;
  }
}

let dir: string;
let store: MemoryStore;
/** A clock well past the files' last change (reads are confirmed), unless a test sets it. */
let clockMs: number;
let reads: number;
const counting = (dbDir: string): Promise<IndexReadResult> => {
  reads++;
  return readSessionIndex(dbDir);
};
/** A new process: a fresh reader over the same store. */
const processRead = () => persistedIndexRead(store, counting, () => clockMs)(dir);

beforeEach(() => {
  dir = tempDir("index-cache-");
  store = new MemoryStore();
  clockMs = Date.now() + 10_000;
  reads = 0;
});
afterEach(() => removeDir(dir));

describe("the remembered session index", () => {
  it("a new process with unchanged files gets the same rows without reading the database", async () => {
    const w = openWriter(dir);
    insertRows(w, [
      sessionRow("s1"),
      sessionRow("s2", { cwd: "/p/two", is_subagent: 1, parent_session_id: "s1" }),
    ]);
    const first = await processRead();
    expect(first.status).toBe("ok");
    expect(first.rows.map((r) => r.sessionId)).toEqual(["s1", "s2"]);
    expect(reads).toBe(1);
    const before = treeFingerprint(dir);
    const second = await processRead();
    expect(reads).toBe(1);
    // The same read, remembered: from the ledger, not from Cline's file.
    expect(second).toEqual({ ...first, strategy: "remembered" });
    // Read-only: nothing created or changed in Cline's db dir by either read.
    expect(treeFingerprint(dir)).toEqual(before);

    // A commit (into the -wal: the writer never checkpoints) is read again.
    insertRows(w, [sessionRow("s3")]);
    const third = await processRead();
    expect(reads).toBe(2);
    expect(third.rows.map((r) => r.sessionId)).toEqual(["s1", "s2", "s3"]);
    // A checkpoint and the WAL's removal (Cline's last connection closing) too.
    w.close();
    const fourth = await processRead();
    expect(reads).toBe(3);
    expect(fourth.rows.map((r) => r.sessionId)).toEqual(["s1", "s2", "s3"]);
    await processRead();
    expect(reads).toBe(3);
  });

  it("a read within the confirmation window of the last change is not remembered", async () => {
    const w = openWriter(dir);
    insertRows(w, [sessionRow("s1")]);
    clockMs = Date.now(); // the files changed just now: the same tick could hide another commit
    await processRead();
    await processRead();
    expect(reads).toBe(2);
    expect(store.saves).toBe(0);
    clockMs = Date.now() + 10_000;
    await processRead();
    await processRead();
    expect(reads).toBe(3);
    w.close();
  });

  it("a same-size rewrite of the database in place is read again (its mtime and ctime move)", async () => {
    const w = openWriter(dir);
    insertRows(w, [sessionRow("s1")]);
    w.close();
    await processRead();
    const db = join(dir, "sessions.db");
    const stored = store.scopes.get(INDEX_SCOPE)?.get(db);
    expect(stored).toBeDefined();
    // Tampered marks stand for any change of either file: the entry no longer holds.
    store.scopes.get(INDEX_SCOPE)?.set(db, { ...(stored as StoredListing), mark: `${stored?.mark}x` });
    await processRead();
    expect(reads).toBe(2);
  });

  it("failed reads are not remembered, and a damaged entry is read again", async () => {
    writeFileSync(join(dir, "sessions.db"), "not a database");
    const bad = await processRead();
    expect(bad.status).toBe("corrupt");
    await processRead();
    expect(reads).toBe(2);
    expect(store.saves).toBe(0);

    removeDir(dir);
    dir = tempDir("index-cache-");
    const w = openWriter(dir);
    insertRows(w, [sessionRow("s1")]);
    w.close();
    await processRead();
    const db = join(dir, "sessions.db");
    for (const entries of [
      "{",
      '[1,null,[["s1"]]]',
      '[3,null,["s1"],[0,-1,-1,0,-1,-1,-1,-1,-1]]',
      '[3,null,["s1"],[-1,-1,-1,0,-1,-1,-1,-1,-1,-1]]',
      '[3,null,["s1"],[0,1,-1,0,-1,-1,-1,-1,-1,-1]]',
      '[3,null,["s1"],[0,-1,-1,2,-1,-1,-1,-1,-1,-1]]',
      "[3,null,[1],[0,-1,-1,0,-1,-1,-1,-1,-1,-1]]",
      // A whole entry of the format before `source` was read: its rows lack it, so read again.
      '[2,null,["s1"],[0,-1,-1,0,-1,-1,-1,-1,-1]]',
    ]) {
      const stored = store.scopes.get(INDEX_SCOPE)?.get(db) as StoredListing;
      store.scopes.get(INDEX_SCOPE)?.set(db, { ...stored, entries });
      const r = await processRead();
      expect(r.rows.map((x) => x.sessionId)).toEqual(["s1"]);
    }
    // Two corrupt reads, the first whole one, and one per damaged or older entry.
    expect(reads).toBe(11);
  });

  it("a failed save is reported and costs only a read", async () => {
    const w = openWriter(dir);
    insertRows(w, [sessionRow("s1")]);
    w.close();
    store.failWith = "disk full";
    const r = await processRead();
    expect(r.status).toBe("ok");
    expect(r.rows).toHaveLength(1);
    expect(r.cacheProblem).toMatch(/disk full/);
    store.failWith = undefined;
    const again = await processRead();
    expect(again.cacheProblem).toBeUndefined();
    await processRead();
    expect(reads).toBe(2);
  });

  it("encodes every column, nulls and the skipped-rows problem", () => {
    const result: IndexReadResult = {
      status: "ok",
      dbPath: "/x/sessions.db",
      strategy: "remembered",
      problem: "skipped 1 sessions rows without a session_id",
      rows: [
        {
          sessionId: "a",
          messagesPath: "/s/a/a.messages.json",
          cwd: "/p",
          isSubagent: true,
          parentSessionId: "p",
          agentId: "g",
          provider: "anthropic",
          model: "m",
          startedAt: "2026-12-01T00:00:00Z",
          source: "vscode",
        },
        {
          sessionId: "b",
          messagesPath: null,
          cwd: null,
          isSubagent: false,
          parentSessionId: null,
          agentId: null,
          provider: null,
          model: null,
          startedAt: null,
          source: null,
        },
      ],
    };
    expect(decodeIndex(result.dbPath, encodeIndex(result))).toEqual(result);
    const { problem: _, ...clean } = result;
    expect(decodeIndex(result.dbPath, encodeIndex(clean))).toEqual(clean);
  });

  it("persists in the ledger's listings, across ledger opens", async () => {
    const w = openWriter(dir);
    insertRows(w, [sessionRow("s1")]);
    w.close();
    const state = tempDir("index-cache-ledger-");
    try {
      for (let i = 0; i < 2; i++) {
        const ledger = Ledger.open(state);
        try {
          const r = await persistedIndexRead(ledger.listings as ListingStore, counting, () => clockMs)(dir);
          expect(r.rows.map((x) => x.sessionId)).toEqual(["s1"]);
        } finally {
          ledger.close();
        }
      }
      expect(reads).toBe(1);
    } finally {
      removeDir(state);
    }
  });

  it("discovery reports a read that skipped rows and a read that was not remembered", async () => {
    const paths = resolveClinePaths({ clineDir: dir }, {});
    const index: IndexReadResult = {
      status: "ok",
      dbPath: join(dir, "sessions.db"),
      rows: [],
      strategy: "in-memory",
      problem: "skipped 2 sessions rows without a session_id",
      cacheProblem: "the index read was not remembered: disk full",
    };
    const found = await discoverCline(paths, () => index);
    expect(found.problems.map((p) => [p.code, p.detail])).toEqual([
      ["index-rows-skipped", index.problem],
      ["index-not-remembered", index.cacheProblem],
    ]);
  });
});
