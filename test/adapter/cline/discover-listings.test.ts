/**
 * Persisted discovery (src/adapter/listings.ts, walkSessions): an unchanged session folder costs a
 * stat instead of a readdir, and every change of the tree is still found. "Re-listed" is observed
 * through what the memo writes back: a listing is written exactly when its folder was read again.
 */
import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../../src/adapter/cline/adapter.ts";
import {
  type DiscoveryMemos,
  discoverCline,
  discoveryMemos,
  flushDiscoveryMemos,
  SESSION_DIRS_SCOPE,
  SIDECAR_CWDS_SCOPE,
  walkSessions,
} from "../../../src/adapter/cline/discover.ts";
import { resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import {
  dirMark,
  LISTING_CONFIRM_MS,
  type ListingStore,
  listingHolds,
  type StoredListing,
  sameMark,
} from "../../../src/adapter/listings.ts";
import type { Problem } from "../../../src/adapter/types.ts";
import { runPass } from "../../../src/collector/pass.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { makeTree, messagesDoc, type Tree, writeSession } from "../../helpers/cline-tree.ts";

/** An in-memory store that records every save (which paths were listed again). */
function recordingStore(): ListingStore & {
  rows: Map<string, Map<string, StoredListing>>;
  saved: string[][];
} {
  const rows = new Map<string, Map<string, StoredListing>>();
  const saved: string[][] = [];
  return {
    rows,
    saved,
    load: (scope) => new Map(rows.get(scope) ?? []),
    save(scope, put, drop) {
      const m = rows.get(scope) ?? new Map<string, StoredListing>();
      for (const p of drop) m.delete(p);
      for (const [p, l] of put) m.set(p, l);
      rows.set(scope, m);
      saved.push([...put.keys(), ...drop.map((p) => `-${p}`)]);
    },
  };
}

let dir: string;
let tree: Tree;
let store: ReturnType<typeof recordingStore>;
/** The clock of the next process: by default well past the confirmation window. */
let clockMs: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "discover-listings-"));
  tree = makeTree(join(dir, "home"), [
    { id: "s1", cwd: "/p1", messages: [{ id: "m1" }] },
    { id: "s2", cwd: "/p2", messages: [{ id: "m1" }], subagents: { a1: [{ id: "x" }] } },
    { id: "u1", cwd: "/unindexed", messages: [{ id: "m1" }], indexed: false },
  ]);
  store = recordingStore();
  clockMs = Date.now() + 10 * LISTING_CONFIRM_MS;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const folder = (id: string) => join(tree.sessionsDir, id);

/** One discovery as a new process would run it (fresh memos over the same store). */
async function discoverOnce(memos: DiscoveryMemos = discoveryMemos(store, () => clockMs)) {
  const compactions = new Set<string>();
  const found = await discoverCline(
    resolveClinePaths({}, {}, tree.home),
    undefined,
    memos.sidecars,
    compactions,
    memos.dirs,
  );
  const problems: Problem[] = [...found.problems];
  const before = store.saved.length;
  flushDiscoveryMemos(memos, problems, tree.sessionsDir);
  return {
    paths: found.sources.map((s) => s.path).sort(),
    projects: Object.fromEntries(found.sources.map((s) => [s.path, s.hint.project])),
    compactions: [...compactions].sort(),
    problems,
    saved: store.saved.slice(before).flat().sort(),
  };
}

describe("persisted session-folder listings", () => {
  it("lists every folder once, then an unchanged tree costs no readdir and finds the same", async () => {
    const first = await discoverOnce();
    expect(first.paths).toHaveLength(4);
    expect(first.saved).toEqual(
      [tree.sessionsDir, folder("s1"), folder("s2"), folder("u1"), join(folder("u1"), "u1.json")].sort(),
    );
    const second = await discoverOnce();
    expect(second.paths).toEqual(first.paths);
    expect(second.projects).toEqual(first.projects);
    expect(second.saved).toEqual([]);
    expect(second.problems).toEqual([]);
  });

  it("finds a new session folder, re-listing only the sessions dir and the new folder", async () => {
    await discoverOnce();
    writeSession(tree, { id: "n1", cwd: "/new", messages: [{ id: "m1" }] });
    const r = await discoverOnce();
    expect(r.paths).toContain(join(folder("n1"), "n1.messages.json"));
    expect(r.saved).toEqual([tree.sessionsDir, folder("n1"), join(folder("n1"), "n1.json")].sort());
  });

  it("finds a new document (and a compaction file) in an old folder", async () => {
    await discoverOnce();
    writeFileSync(
      join(folder("s1"), "b7.messages.json"),
      JSON.stringify(messagesDoc("s1__b7", "subagent", [])),
    );
    writeFileSync(join(folder("s1"), "s1.compaction.json"), "{}");
    const r = await discoverOnce();
    expect(r.paths).toContain(join(folder("s1"), "b7.messages.json"));
    expect(r.compactions).toEqual([join(folder("s1"), "s1.compaction.json")]);
    expect(r.saved).toEqual([folder("s1")]);
  });

  it("forgets a removed folder (and its sidecar's cwd), and a document removed from a folder", async () => {
    await discoverOnce();
    rmSync(folder("u1"), { recursive: true });
    rmSync(join(folder("s2"), "a1.messages.json"));
    const r = await discoverOnce();
    expect(r.paths).toEqual([join(folder("s1"), "s1.messages.json"), join(folder("s2"), "s2.messages.json")]);
    expect([...(store.rows.get(SESSION_DIRS_SCOPE)?.keys() ?? [])].sort()).toEqual(
      [tree.sessionsDir, folder("s1"), folder("s2")].sort(),
    );
    expect(store.rows.get(SIDECAR_CWDS_SCOPE)?.size).toBe(0);
  });

  it("re-lists a folder whose mtime was set BACK to the listed one after a change (ctime moved)", async () => {
    const t = Math.floor(Date.now() / 1000) - 3600; // whole seconds: utimes keeps them exactly
    utimesSync(folder("s1"), t, t);
    await discoverOnce();
    const before = statSync(folder("s1"));
    writeFileSync(
      join(folder("s1"), "late.messages.json"),
      JSON.stringify(messagesDoc("s1__late", "subagent", [])),
    );
    utimesSync(folder("s1"), t, t);
    expect(statSync(folder("s1")).mtimeMs).toBe(before.mtimeMs);
    const r = await discoverOnce();
    expect(r.paths).toContain(join(folder("s1"), "late.messages.json"));
  });

  it("re-lists a folder whose mtime went backwards (restored from a backup)", async () => {
    await discoverOnce();
    utimesSync(folder("s2"), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
    rmSync(join(folder("s2"), "a1.messages.json"));
    utimesSync(folder("s2"), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
    const r = await discoverOnce();
    expect(r.paths).not.toContain(join(folder("s2"), "a1.messages.json"));
    expect(r.saved).toContain(folder("s2"));
  });

  it("does not trust a listing taken within the confirmation window of the folder's change", async () => {
    // Listed "now", right after the folder was written: a change in the same clock tick would
    // leave the mark equal, so the next discovery lists it again although nothing changed...
    clockMs = Date.now();
    await discoverOnce();
    clockMs = Date.now() + 10 * LISTING_CONFIRM_MS;
    const r = await discoverOnce();
    expect(r.saved).toEqual(
      expect.arrayContaining([tree.sessionsDir, folder("s1"), folder("s2"), folder("u1")]),
    );
    // ...and once a listing is confirmed, it is trusted.
    expect((await discoverOnce()).saved).toEqual([]);
  });

  it("finds a folder replaced by another of the same name (a new inode)", async () => {
    await discoverOnce();
    const other = join(dir, "other");
    mkdirSync(other);
    writeFileSync(join(other, "s1.messages.json"), JSON.stringify(messagesDoc("s1", "lead", [])));
    writeFileSync(join(other, "z9.messages.json"), JSON.stringify(messagesDoc("s1__z9", "subagent", [])));
    rmSync(folder("s1"), { recursive: true });
    renameSync(other, folder("s1"));
    const r = await discoverOnce();
    expect(r.paths).toContain(join(folder("s1"), "z9.messages.json"));
  });

  it("keeps following symlinked folders and documents", async () => {
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(join(elsewhere, "l1"), { recursive: true });
    writeFileSync(join(elsewhere, "l1", "l1.messages.json"), JSON.stringify(messagesDoc("l1", "lead", [])));
    symlinkSync(join(elsewhere, "l1"), folder("l1"));
    writeFileSync(join(elsewhere, "doc.json"), JSON.stringify(messagesDoc("s1__k", "subagent", [])));
    symlinkSync(join(elsewhere, "doc.json"), join(folder("s1"), "k.messages.json"));
    symlinkSync(join(dir, "nowhere"), folder("dangling"));
    const first = await discoverOnce();
    const second = await discoverOnce();
    for (const r of [first, second]) {
      expect(r.paths).toContain(join(folder("l1"), "l1.messages.json"));
      expect(r.paths).toContain(join(folder("s1"), "k.messages.json"));
      expect(r.problems).toEqual([]);
    }
    expect(second.saved).toEqual([]);
    // The symlinked document is stat-ed each time: once it dangles it is no document.
    rmSync(join(elsewhere, "doc.json"));
    expect((await discoverOnce()).paths).not.toContain(join(folder("s1"), "k.messages.json"));
  });

  it("keeps an unindexed session's sidecar cwd, read again only when the sidecar changed", async () => {
    const u1 = join(folder("u1"), "u1.messages.json");
    expect((await discoverOnce()).projects[u1]).toBe("/unindexed");
    // The stored cwd answers (no scan): prove it by changing the stored value behind its key.
    const rows = store.rows.get(SIDECAR_CWDS_SCOPE) as Map<string, StoredListing>;
    const key = join(folder("u1"), "u1.json");
    rows.set(key, { ...(rows.get(key) as StoredListing), entries: '["/from-the-store",null]' });
    expect((await discoverOnce()).projects[u1]).toBe("/from-the-store");
    // An entry of the form before `source` was kept is scanned again (and rewritten).
    rows.set(key, { ...(rows.get(key) as StoredListing), entries: "=/old-form" });
    expect((await discoverOnce()).projects[u1]).toBe("/unindexed");
    expect(rows.get(key)?.entries).toBe('["/unindexed","cli"]');
    writeFileSync(key, JSON.stringify({ session_id: "u1", cwd: "/changed/longer" }));
    expect((await discoverOnce()).projects[u1]).toBe("/changed/longer");
  });

  it("reports a failed save as a problem and still finds everything; the next flush retries", async () => {
    let fail = true;
    const flaky: ListingStore = {
      load: () => new Map(),
      save: (scope, put, drop) => {
        if (fail) throw new Error("database is locked");
        store.save(scope, put, drop);
      },
    };
    const memos = discoveryMemos(flaky, () => clockMs);
    const r = await discoverOnce(memos);
    expect(r.paths).toHaveLength(4);
    expect(r.problems).toEqual([
      { path: tree.sessionsDir, code: "listings-not-saved", detail: "database is locked" },
    ]);
    fail = false;
    expect(memos.dirs.flush()).toBe(4);
    expect(store.rows.get(SESSION_DIRS_SCOPE)?.size).toBe(4);
  });
});

describe("listingHolds", () => {
  const stat = (over: Partial<Record<"dev" | "ino" | "mtimeMs" | "ctimeMs", number>>) =>
    ({
      dev: 1,
      ino: 2,
      mtimeMs: 1_000_000,
      ctimeMs: 1_000_000,
      ...over,
    }) as unknown as import("node:fs").Stats;
  const listed = (takenMs: number) => ({ mark: dirMark(stat({})), takenMs, entries: "" });

  it("holds for the same mark once confirmed", () => {
    expect(listingHolds(listed(1_000_000 + LISTING_CONFIRM_MS), stat({}))).toBe(true);
  });
  it("does not hold within the confirmation window (equal within the filesystem's granularity)", () => {
    expect(listingHolds(listed(1_000_000 + LISTING_CONFIRM_MS - 1), stat({}))).toBe(false);
    expect(listingHolds(listed(1_000_000 - 5000), stat({}))).toBe(false); // clock behind the filesystem's
  });
  it("does not hold when the mtime moved either way, the ctime moved, or the inode or device differ", () => {
    const l = listed(9_000_000);
    expect(listingHolds(l, stat({ mtimeMs: 999_999 }))).toBe(false);
    expect(listingHolds(l, stat({ mtimeMs: 1_000_001 }))).toBe(false);
    expect(listingHolds(l, stat({ ctimeMs: 1_000_001 }))).toBe(false);
    expect(listingHolds(l, stat({ ino: 3 }))).toBe(false);
    expect(listingHolds(l, stat({ dev: 4 }))).toBe(false);
    expect(listingHolds(undefined, stat({}))).toBe(false);
  });
  it("sameMark(mark, s) is exactly mark === dirMark(s), without formatting the stat", () => {
    const num = fc.oneof(
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.double({ min: 0, max: 4e12, noNaN: true }),
      fc.constantFrom(0, 1_796_133_895_517.5256, 1_796_133_895_517.5254),
    );
    const st = fc.record({ dev: num, ino: num, mtimeMs: num, ctimeMs: num });
    fc.assert(
      fc.property(st, st, (a, b) => {
        const sa = stat(a);
        const sb = stat(b);
        expect(sameMark(dirMark(sa), sa)).toBe(true);
        expect(sameMark(dirMark(sa), sb)).toBe(dirMark(sa) === dirMark(sb));
      }),
    );
    for (const bad of [
      "",
      ":::",
      "1:2:3",
      "1:2:3:4:5",
      ":2:1000000:1000000",
      "1:2:1000000:",
      "1::1000000:1000000",
    ]) {
      expect(sameMark(bad, stat({ dev: 0, ino: 0, mtimeMs: 0, ctimeMs: 0 })), bad).toBe(false);
    }
    expect(sameMark("1:2:1000000:1000000", stat({}))).toBe(true);
  });
});

describe("the ledger's listings across restarts (runPass)", () => {
  const M = (i: number, o: number) => ({
    inputTokens: i,
    outputTokens: o,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
  /** The ledger's store, seen by a process that runs 20 s after the listings were taken. */
  const later = (l: Ledger): ListingStore & { saves: number } => {
    const s = {
      saves: 0,
      load: (scope: string) =>
        new Map(
          [...(l.listings as ListingStore).load(scope)].map(([p, v]) => [
            p,
            { ...v, takenMs: v.takenMs + 20_000 },
          ]),
        ),
      save: (scope: string, put: ReadonlyMap<string, StoredListing>, drop: readonly string[]) => {
        s.saves += put.size + drop.length;
        (l.listings as ListingStore).save(scope, put, drop);
      },
    };
    return s;
  };
  const paths = () => resolveClinePaths({}, {}, tree.home);
  const doc = (id: string, agent = id) => join(folder(id), `${agent}.messages.json`);

  it("stop, write more, restart: a document rewritten in place and one added to an old folder are read", async () => {
    const state = join(dir, "state");
    let ledger = Ledger.open(state);
    const first = await runPass(createClineAdapter(paths(), undefined, later(ledger)), ledger);
    expect(first).toMatchObject({ sources: 4, read: 4, failed: 0 });
    ledger.close();

    // Restart with nothing new: every folder answered from the ledger, nothing read.
    ledger = Ledger.open(state);
    let store = later(ledger);
    const idle = await runPass(createClineAdapter(paths(), undefined, store), ledger);
    expect(idle).toMatchObject({ sources: 4, read: 0, unchanged: 4 });
    expect(store.saves).toBe(0);
    ledger.close();

    // In place (the folder's mtime does not move) and a new sub-agent document in s1.
    const t = Math.floor(Date.now() / 1000) - 60;
    utimesSync(folder("s2"), t, t);
    ledger = Ledger.open(state);
    await runPass(createClineAdapter(paths(), undefined, later(ledger)), ledger); // s2 re-listed once
    ledger.close();
    const folderMtime = statSync(folder("s2")).mtimeMs;
    writeFileSync(
      doc("s2"),
      `${JSON.stringify(messagesDoc("s2", "lead", [{ id: "m1" }, { id: "m2", metrics: M(7, 1) }]), null, 2)}\n`,
    );
    expect(statSync(folder("s2")).mtimeMs).toBe(folderMtime);
    writeFileSync(
      doc("s1", "b2"),
      JSON.stringify(messagesDoc("s1__b2", "subagent", [{ id: "q", metrics: M(5, 5) }])),
    );
    ledger = Ledger.open(state);
    store = later(ledger);
    const r = await runPass(createClineAdapter(paths(), undefined, store), ledger);
    expect(r).toMatchObject({ sources: 5, read: 2, unchanged: 3, eventsAdded: 2, failed: 0 });
    expect(store.saves).toBe(1); // s1 only: s2's listing held, its document's own stat saw the rewrite
    ledger.close();
  });

  it("the migration creates the table; a read-only ledger has no store", () => {
    const state = join(dir, "state2");
    const w = Ledger.open(state);
    const s = w.listings as ListingStore;
    s.save("x", new Map([["/a", { mark: "m", takenMs: 5, entries: "fa.messages.json" }]]), []);
    s.save("x", new Map([["/b", { mark: "n", takenMs: 6, entries: "" }]]), ["/a"]);
    expect([...s.load("x")].map(([p, l]) => [p, l.mark, l.takenMs, l.entries])).toEqual([["/b", "n", 6, ""]]);
    expect(s.load("y").size).toBe(0);
    w.close();
    const ro = Ledger.open(state, { readOnly: true });
    expect(ro.listings).toBeUndefined();
    ro.close();
  });
});

describe("walk order", () => {
  it("yields documents in path order, from fresh and from stored listings alike", async () => {
    for (const id of ["a", "a-b", "a.b", "ab", "A"]) writeSession(tree, { id, cwd: "/x", messages: [] });
    for (const name of ["a.messages.json.messages.json", "-.messages.json", "Z.messages.json"]) {
      writeFileSync(join(folder("a"), name), JSON.stringify(messagesDoc(`a__${name}`, "subagent", [])));
    }
    const memos = discoveryMemos(store, () => clockMs);
    const walked = () =>
      walkSessions(tree.sessionsDir, [], undefined, discoveryMemos(store, () => clockMs).dirs);
    const fresh = walkSessions(tree.sessionsDir, [], undefined, memos.dirs);
    memos.dirs.flush();
    const stored = walked();
    const paths = fresh.map((d) => d.path);
    expect(paths).toEqual([...paths].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    expect(paths.length).toBe(12);
    expect(stored).toEqual(fresh);
  });
});

describe("compactionSources (a lookup per document)", () => {
  it("matches a listed compaction file also for a document path written another way", async () => {
    const { compactionSources } = await import("../../../src/adapter/cline/compaction/collect.ts");
    const src = (path: string) => ({ adapterId: "cline", path, origin: "index" as const, hint: {} });
    const out = compactionSources(
      [src("/s/./a/a.messages.json"), src("/s/a/b.messages.json"), src("/s/c//c.messages.json")],
      new Set(["/s/a/a.compaction.json", "/s/c/c.compaction.json"]),
      "/s",
      () => {
        throw new Error("no stat for a document in the sessions dir");
      },
    );
    expect(out.map((s) => s.path)).toEqual(["/s/a/a.compaction.json", "/s/c/c.compaction.json"]);
  });
});
