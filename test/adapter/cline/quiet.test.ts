/**
 * The quiet discovery (src/adapter/cline/quiet.ts): a pass over an unchanged tree decodes no index
 * and builds no hint, and every change of a document, a folder or the index is still found in the
 * same pass, read with the hint the full discovery gives it.
 */
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../../src/adapter/cline/adapter.ts";
import { isUsageSource } from "../../../src/adapter/cline/compaction/files.ts";
import { discoverCline } from "../../../src/adapter/cline/discover.ts";
import {
  cachedIndexReader,
  type IndexReadResult,
  readSessionIndex,
} from "../../../src/adapter/cline/index-db.ts";
import { indexFacts, walkShaped } from "../../../src/adapter/cline/index-facts.ts";
import { type ClinePaths, resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import { QUIET_SCOPE, quietEntry, UNBUILT_HINT } from "../../../src/adapter/cline/quiet.ts";
import { QUIET_TREE_SCOPE } from "../../../src/adapter/cline/quiet-tree.ts";
import { CLINE_ADAPTER_ID } from "../../../src/adapter/cline/types.ts";
import { type ListingStore, loadListing } from "../../../src/adapter/listings.ts";
import type { Source, SourceCheckpoint } from "../../../src/adapter/types.ts";
import { runPass } from "../../../src/collector/pass.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { makeTree, messagesDoc, type Tree, writeSession } from "../../helpers/cline-tree.ts";

const M = (i: number, o: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

let dir: string;
let tree: Tree;
let state: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "quiet-"));
  tree = makeTree(join(dir, "home"), [
    { id: "s1", cwd: "/p1", messages: [{ id: "m1", metrics: M(1, 1) }] },
    {
      id: "s2",
      cwd: "/p2",
      messages: [{ id: "m1", metrics: M(2, 2) }],
      subagents: { a1: [{ id: "x", metrics: M(3, 3) }] },
    },
    { id: "u1", cwd: "/unindexed", messages: [{ id: "m1", metrics: M(4, 4) }], indexed: false },
  ]);
  state = join(dir, "state");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const folder = (id: string) => join(tree.sessionsDir, id);
const doc = (id: string, agent = id) => join(folder(id), `${agent}.messages.json`);
const paths = () => resolveClinePaths({}, {}, tree.home);
/** A process 20 s after the files last changed: listings and index marks are confirmed. */
const later = () => Date.now() + 20_000;

/**
 * One `report`-like process: a fresh adapter over the ledger's store, one pass; counts index reads,
 * loads of the checkpoints and the listing scopes loaded whole. `snapshot: false`: the quiet-tree
 * snapshot (quiet-tree.ts) is dropped first, so the pass takes the quiet discovery's path.
 */
async function pass(opts: { readonly snapshot?: boolean; readonly clinePaths?: ClinePaths } = {}) {
  const ledger = Ledger.open(state, ledgerOpts);
  try {
    const store = ledger.listings as ListingStore;
    if (opts.snapshot === false) store.save(QUIET_TREE_SCOPE, new Map(), [tree.sessionsDir]);
    let indexReads = 0;
    const read = (d: string): Promise<IndexReadResult> => {
      indexReads++;
      return readSessionIndex(d);
    };
    let checkpointLoads = 0;
    const known = ledger.knownCheckpoints.bind(ledger);
    ledger.knownCheckpoints = () => {
      const k = known();
      return {
        all: () => {
          checkpointLoads++;
          return k.all();
        },
        token: k.token,
      };
    };
    const scopes: string[] = [];
    const counting: ListingStore = {
      load: (scope) => {
        scopes.push(scope);
        return store.load(scope);
      },
      loadOne: (scope, path) => loadListing(store, scope, path),
      save: (scope, put, drop) => store.save(scope, put, drop),
    };
    const adapter = createClineAdapter(opts.clinePaths ?? paths(), cachedIndexReader(read), counting, later);
    const r = await runPass(adapter, ledger);
    const events = [...ledger.iterateEvents()].map((e) => `${e.source_path}|${e.project}|${e.message_id}`);
    // The snapshot answered: nothing loaded whole, no checkpoint, no listing.
    const snapshot = checkpointLoads === 0 && scopes.length === 0 && r.sources > 0;
    return { r, indexReads, events: events.sort(), checkpointLoads, scopes, snapshot };
  } finally {
    ledger.close();
  }
}

/** Ledger.open's options for every pass of a test (a fixed clock: every commit in one millisecond). */
let ledgerOpts: { readonly now?: () => number } = {};
beforeEach(() => {
  ledgerOpts = {};
});

/** Two passes (the second the quiet discovery, which writes the snapshot), then the snapshot's. */
async function settle(mode: "quiet" | "snapshot") {
  await pass();
  const quiet = await pass();
  expect(quiet.indexReads).toBe(0);
  expect(quiet.snapshot).toBe(false);
  if (mode === "quiet") return quiet;
  const snap = await pass();
  expect(snap.snapshot).toBe(true);
  expect(snap.r).toMatchObject({ sources: quiet.r.sources, read: 0, unchanged: quiet.r.sources, failed: 0 });
  return snap;
}

/** Rewrites the file in place (the folder does not change), its mtime moved on. */
function rewrite(path: string, content: string): void {
  writeFileSync(path, content);
  const t = Date.now() / 1000 + 5;
  utimesSync(path, t, t);
}

describe("the quiet discovery", () => {
  it("an unchanged tree: no index read, the same sources and problems as the full discovery", async () => {
    const first = await pass();
    expect(first.r).toMatchObject({ sources: 4, read: 4, failed: 0 });
    const second = await pass();
    expect(second.r).toMatchObject({ sources: 4, read: 0, unchanged: 4, failed: 0 });
    expect(second.indexReads).toBe(0);
    expect(second.r.problems).toEqual(first.r.problems);
    expect(second.events).toEqual(first.events);
  });

  it("repeats the full discovery's problems verbatim (an index row naming a missing document)", async () => {
    const db = new Database(join(tree.dbDir, "sessions.db"));
    db.prepare("UPDATE sessions SET messages_path = ? WHERE session_id = 's1'").run(
      join(folder("s1"), "gone.messages.json"),
    );
    db.close();
    const first = await pass();
    expect(first.r.problems.map((p) => p.code)).toContain("index-path-unusable");
    const second = await pass();
    expect(second.indexReads).toBe(0);
    expect(second.r.problems).toEqual(first.r.problems);
  });

  // Each change must be found in the very pass that follows it: these fail if the quiet
  // discovery skipped a changed document (read 0) or read it without its hint (project).
  const changes: [string, () => void, number, string[]][] = [
    [
      "a document rewritten in place (grown)",
      () =>
        rewrite(
          doc("s1"),
          JSON.stringify(
            messagesDoc("s1", "lead", [
              { id: "m1", metrics: M(1, 1) },
              { id: "m2", metrics: M(9, 9) },
            ]),
          ),
        ),
      1,
      ["s1.messages.json|/p1|m2"],
    ],
    [
      "a document rewritten in place to the same size",
      () => {
        const before = statSync(doc("s2", "a1")).size;
        const text = JSON.stringify(messagesDoc("s2__a1", "subagent", [{ id: "y", metrics: M(3, 3) }]));
        expect(text.length).toBe(before);
        rewrite(doc("s2", "a1"), text);
      },
      1,
      ["a1.messages.json|/p2|y"],
    ],
    [
      "a new document in an old folder",
      () =>
        writeFileSync(
          doc("s1", "b2"),
          JSON.stringify(messagesDoc("s1__b2", "subagent", [{ id: "q", metrics: M(5, 5) }])),
        ),
      1,
      ["b2.messages.json|/p1|q"],
    ],
    [
      "a new session folder (indexed)",
      () => {
        writeSession(tree, { id: "n1", cwd: "/new", messages: [{ id: "n", metrics: M(6, 6) }] });
        const db = new Database(join(tree.dbDir, "sessions.db"));
        db.prepare(
          `INSERT INTO sessions (session_id, source, pid, started_at, status, interactive, provider, model, cwd,
            workspace_root, enable_tools, enable_spawn, enable_teams, is_subagent, parent_session_id, metadata_json,
            hook_path, messages_path, updated_at)
           VALUES ('n1', 'cli', 1, 'x', 'completed', 0, 'p', 'm', '/new', '/new', 1, 1, 0, 0, NULL, '{}', '', ?, 'x')`,
        ).run(doc("n1"));
        db.close();
      },
      1,
      ["n1.messages.json|/new|n"],
    ],
    [
      "a new session folder (unindexed: only the sessions dir changes)",
      () =>
        writeSession(tree, {
          id: "n2",
          cwd: "/n2",
          messages: [{ id: "k", metrics: M(7, 7) }],
          indexed: false,
        }),
      1,
      ["n2.messages.json|/n2|k"],
    ],
    ["a document renamed onto a new name", () => renameSync(doc("s2", "a1"), doc("s2", "a9")), 1, []],
  ];
  for (const [what, change, read, added] of changes) {
    for (const mode of ["quiet", "snapshot"] as const) {
      it(`finds ${what} in the same pass (after the ${mode} discovery's)`, async () => {
        const idle = await settle(mode);
        change();
        const r = await pass({ snapshot: mode === "snapshot" });
        expect(r.snapshot).toBe(false);
        expect(r.r.read).toBe(read);
        const newEvents = r.events
          .filter((e) => !idle.events.includes(e))
          .map((e) => e.slice(e.lastIndexOf("/", e.indexOf("|")) + 1));
        for (const e of added) expect(newEvents).toContain(e);
        // And quiet again afterwards.
        const after = await pass();
        expect(after.r.read).toBe(0);
        expect(after.indexReads).toBe(0);
        expect((await pass()).snapshot).toBe(true);
      });
    }
  }

  for (const mode of ["quiet", "snapshot"] as const) {
    it(`a deleted document is no source any more, and its index row is reported from then on (${mode})`, async () => {
      await settle(mode);
      rmSync(doc("s2", "a1"));
      const unusable = (r: Awaited<ReturnType<typeof pass>>) =>
        r.r.problems.filter((p) => p.code === "index-path-unusable").map((p) => p.path);
      const r = await pass({ snapshot: mode === "snapshot" });
      expect(r.r.sources).toBe(3);
      expect(unusable(r)).toEqual([doc("s2", "a1")]);
      const again = await pass();
      expect(again.indexReads).toBe(0);
      expect(again.r.sources).toBe(3);
      expect(unusable(again)).toEqual([doc("s2", "a1")]);
      // And from the snapshot the same problems.
      const snap = await pass();
      expect(snap.snapshot).toBe(true);
      expect(snap.r.sources).toBe(3);
      expect(snap.r.problems).toEqual(again.r.problems);
    });

    it(`a session folder removed and another renamed are found (${mode})`, async () => {
      const idle = await settle(mode);
      expect(idle.r.sources).toBe(4);
      rmSync(folder("s1"), { recursive: true });
      renameSync(folder("u1"), folder("u2"));
      const r = await pass({ snapshot: mode === "snapshot" });
      expect(r.snapshot).toBe(false);
      // s1's document is gone; u1's is now under u2, a document without a checkpoint: read (its
      // events are the ones already counted, by their keys).
      expect(r.r.sources).toBe(3);
      expect(r.r.read).toBe(1);
      expect(r.r.eventsAdded).toBe(0);
      await pass();
      const snap = await pass();
      expect(snap.snapshot).toBe(true);
      expect(snap.r.sources).toBe(3);
    });

    it(`an index that changed (a session's cwd) is read again (${mode})`, async () => {
      await settle(mode);
      const db = new Database(join(tree.dbDir, "sessions.db"));
      db.prepare("UPDATE sessions SET cwd = '/moved' WHERE session_id = 's1'").run();
      db.close();
      const r = await pass({ snapshot: mode === "snapshot" });
      expect(r.snapshot).toBe(false);
      expect(r.indexReads).toBe(1);
      expect(r.r.read).toBe(0);
    });
  }

  it("a quiet source read after all gets the full discovery's hint", async () => {
    await pass();
    const ledger = Ledger.open(state);
    try {
      const adapter = createClineAdapter(paths(), undefined, ledger.listings, later);
      const known = ledger.knownCheckpoints();
      const found = await adapter.discover(known);
      const s1 = found.sources.find((s) => s.path === doc("s1")) as Source;
      expect(s1.hint).toBe(UNBUILT_HINT);
      // Discovery's stat answers the gate for the checkpoint it compared against, not another.
      const cp = known.all().get(s1.path) as SourceCheckpoint;
      expect(adapter.unchangedNow?.(s1, cp)).toBe(true);
      expect(adapter.unchangedNow?.(s1, { ...cp })).toBe(true);
      expect(adapter.unchangedNow?.(s1, { ...cp, size: cp.size + 1 })).toBe(false);
      rewrite(doc("s1"), JSON.stringify(messagesDoc("s1", "lead", [{ id: "m7", metrics: M(1, 2) }])));
      const obs = await adapter.collectIncremental(s1, cp);
      expect(obs.status).toBe("read");
      if (obs.status !== "read") return;
      expect(obs.events.map((e) => [e.messageId, e.project])).toEqual([["m7", "/p1"]]);
    } finally {
      ledger.close();
    }
  });
});

describe("quietEntry: kept only when the index's rows are all the walk's documents", () => {
  const marks = { mark: "m", takenMs: 100_000, changedMs: 0 };
  const walked = [{ path: "/s/a/a.messages.json", plain: true }];
  const ok: IndexReadResult = { status: "ok", dbPath: "/db", rows: [], strategy: "in-memory" };
  const row = (messagesPath: string | null) => ({
    sessionId: "a",
    messagesPath,
    cwd: null,
    isSubagent: false,
    parentSessionId: null,
    agentId: null,
    provider: null,
    model: null,
    startedAt: null,
    source: null,
  });

  it("is kept for walk-shaped rows and stable problems", () => {
    const index = { ...ok, rows: [row("/s/a/a.messages.json"), row(null), row("")] };
    const problems = [{ path: "/db", code: "unknown-session-source", detail: "d" }];
    expect(quietEntry(marks, indexFacts(index, "/s"), walked, problems)?.entries).toBe(
      JSON.stringify(problems),
    );
  });
  it("is not kept for a row naming a document elsewhere, relative, or not a document", () => {
    for (const p of [
      "/elsewhere/a.messages.json",
      "a/a.messages.json",
      "/s/a/b/a.messages.json",
      "/s/a/a.json",
    ]) {
      expect(quietEntry(marks, indexFacts({ ...ok, rows: [row(p)] }, "/s"), walked, []), p).toBeUndefined();
    }
  });
  it("is not kept for a symlinked document, a passing problem, a failed read, or unconfirmed marks", () => {
    expect(
      quietEntry(marks, indexFacts(ok, "/s"), [{ path: "/s/a/a.messages.json", plain: false }], []),
    ).toBeUndefined();
    const sidecar = [{ path: "/s/a/a.json", code: "unreadable-sidecar", detail: "EACCES" }];
    expect(quietEntry(marks, indexFacts(ok, "/s"), walked, sidecar)).toBeUndefined();
    expect(quietEntry(marks, indexFacts({ ...ok, status: "locked" }, "/s"), walked, [])).toBeUndefined();
    expect(quietEntry(marks, indexFacts({ ...ok, cacheProblem: "x" }, "/s"), walked, [])).toBeUndefined();
    expect(quietEntry({ ...marks, changedMs: 99_000 }, indexFacts(ok, "/s"), walked, [])).toBeUndefined();
    expect(quietEntry(marks, indexFacts(ok, "/s"), walked, [])).toBeDefined();
  });
  it("walkShaped: exactly <sessions>/<folder>/<name>.messages.json", () => {
    expect(walkShaped("/s/a/x.messages.json", "/s/")).toBe(true);
    expect(walkShaped("/s/../x.messages.json", "/s/")).toBe(false);
    expect(walkShaped("/s//x.messages.json", "/s/")).toBe(false);
    expect(walkShaped("/s/a/x.compaction.json", "/s/")).toBe(false);
    expect(walkShaped("/t/a/x.messages.json", "/s/")).toBe(false);
    expect(walkShaped("/s/a/.messages.json", "/s/")).toBe(false);
    expect(walkShaped("/s/x.messages.json/", "/s/")).toBe(false);
    // The same as the plain definition, for any path made of the pieces that matter.
    const piece = fc.constantFrom(
      "a",
      ".",
      "..",
      "...",
      "",
      "x.messages.json",
      "x.compaction.json",
      ".messages.json",
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 4 }), (parts) => {
        const path = `/s/${parts.join("/")}`;
        const rest = path.slice(3).split("/");
        const plain =
          rest.length === 2 &&
          rest[0] !== "" &&
          rest[0] !== "." &&
          rest[0] !== ".." &&
          // basename() drops a trailing slash: "/s/x.messages.json/" names a folder, not a document.
          rest[1] !== "" &&
          isUsageSource(path) &&
          !path.slice(3).includes("//");
        expect(walkShaped(path, "/s/"), path).toBe(plain);
      }),
    );
  });
});

describe("a stored entry the index no longer matches", () => {
  it("a row added outside the walk is found: the full discovery runs when the index's marks moved", async () => {
    await pass();
    await pass();
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    const outside = join(elsewhere, "o1.messages.json");
    writeFileSync(outside, JSON.stringify(messagesDoc("o1", "lead", [{ id: "o", metrics: M(1, 1) }])));
    const db = new Database(join(tree.dbDir, "sessions.db"));
    db.prepare("UPDATE sessions SET messages_path = ? WHERE session_id = 's1'").run(outside);
    db.close();
    const r = await pass();
    expect(r.r.read).toBe(1);
    expect(r.events.some((e) => e.startsWith(outside))).toBe(true);
    // No entry is kept for such an index: every later pass is a full one.
    const ledger = Ledger.open(state);
    expect((ledger.listings as ListingStore).load(QUIET_SCOPE).size).toBe(0);
    ledger.close();
    expect((await pass()).indexReads).toBe(1);
  });

  it("the discovery of the same tree without checkpoints is the full one (the daemon's)", async () => {
    await pass();
    const ledger = Ledger.open(state);
    try {
      const adapter = createClineAdapter(paths(), undefined, ledger.listings, later);
      const found = await adapter.discover();
      expect(found.sources.every((s) => s.hint !== UNBUILT_HINT)).toBe(true);
      const full = await discoverCline(paths());
      expect(found.sources.map((s) => s.path).sort()).toEqual(full.sources.map((s) => s.path).sort());
    } finally {
      ledger.close();
    }
  });
});

describe("the quiet-tree snapshot (quiet-tree.ts) and the checkpoints it vouches for", () => {
  /** A pass as the daemon's loop runs it: discovery without the checkpoints, so no snapshot is used or dropped. */
  async function daemonPass() {
    const ledger = Ledger.open(state, ledgerOpts);
    try {
      const a = createClineAdapter(paths(), undefined, ledger.listings, later);
      return await runPass({ ...a, discover: () => a.discover() }, ledger);
    } finally {
      ledger.close();
    }
  }

  it("a checkpoint deleted after the snapshot (another process): the document is read again", async () => {
    await settle("snapshot");
    const ledger = Ledger.open(state);
    try {
      const live = new Set([...ledger.allCheckpoints().keys()].filter((p) => p !== doc("s1")));
      expect(ledger.pruneCheckpoints(CLINE_ADAPTER_ID, live, [])).toBe(1);
    } finally {
      ledger.close();
    }
    const r = await pass();
    expect(r.snapshot).toBe(false);
    expect(r.r.read).toBe(1);
    expect(r.r.eventsAdded).toBe(0);
    expect((await pass()).snapshot).toBe(false);
    expect((await pass()).snapshot).toBe(true);
  });

  it("a checkpoint re-put in the same millisecond with another fingerprint, the file then restored: read again", async () => {
    // Every commit in one millisecond: `updated_ms` cannot tell the re-put; its fingerprint must.
    ledgerOpts = { now: () => 1_796_000_000_000 };
    const original = readFileSync(doc("s1"));
    const t0 = 1_790_000_000;
    utimesSync(doc("s1"), t0, t0);
    await settle("snapshot");
    // Another process (the daemon) reads a rewrite of the same size, in place...
    const text = original.toString().replace('"id": "m1"', '"id": "m5"');
    expect(text).not.toBe(original.toString());
    expect(text.length).toBe(original.length);
    rewrite(doc("s1"), text);
    expect((await daemonPass()).read).toBe(1);
    // ...and the file is put back as it was (same inode, size and mtime; a backup restored).
    writeFileSync(doc("s1"), original);
    utimesSync(doc("s1"), t0, t0);
    const r = await pass();
    expect(r.snapshot).toBe(false);
    // The checkpoint is the rewrite's: the restored file differs from it, and is read again.
    expect(r.r.read).toBe(1);
  });

  it("the token: a delete, a put of another fingerprint or in another millisecond change it; the same put does not", () => {
    const ledger = Ledger.open(state);
    try {
      const cp = (size: number, mtimeNs = "1796000000000000000", ino = 7) => ({
        path: "/x/a.messages.json",
        size,
        mtimeNs,
        ino,
        dev: 1,
      });
      const put = (c: SourceCheckpoint, at: number, adapter = CLINE_ADAPTER_ID) =>
        (ledger as unknown as { transaction<T>(f: () => T): T }).transaction(() =>
          (
            ledger as unknown as { checkpoints: { put(c: SourceCheckpoint, a: string, n: number): void } }
          ).checkpoints.put(c, adapter, at),
        );
      const token = () => ledger.knownCheckpoints().token(CLINE_ADAPTER_ID);
      const empty = token();
      put(cp(10), 5);
      const one = token();
      expect(one).not.toBe(empty);
      put(cp(10), 5);
      expect(token()).toBe(one);
      for (const c of [cp(11), cp(10, "1796000000000000001"), cp(10, undefined, 8)]) {
        put(c, 5);
        expect(token(), JSON.stringify(c)).not.toBe(one);
        put(cp(10), 5);
        expect(token()).toBe(one);
      }
      put(cp(10), 6);
      expect(token()).not.toBe(one);
      put(cp(10), 5);
      put({ ...cp(10), path: "/y/b.messages.json" }, 5, "other-adapter");
      expect(token()).toBe(one);
      ledger.pruneCheckpoints(CLINE_ADAPTER_ID, new Set(), []);
      expect(token()).toBe(empty);
    } finally {
      ledger.close();
    }
  });

  it("a HOME without sessions over a full ledger loads no checkpoint and no folder listing", async () => {
    await settle("snapshot");
    const empty = resolveClinePaths({}, {}, join(dir, "empty-home"));
    for (let i = 0; i < 2; i++) {
      const r = await pass({ clinePaths: empty });
      expect(r.r.sources).toBe(0);
      expect(r.checkpointLoads).toBe(0);
      expect(r.scopes.filter((s) => s !== QUIET_SCOPE)).toEqual([]);
    }
    // The tree's own snapshot is still there.
    expect((await pass()).snapshot).toBe(true);
  });

  it("a damaged snapshot is none: the quiet discovery answers and writes it again", async () => {
    await settle("snapshot");
    const damage = [
      (e: string) => e.slice(0, -3),
      (e: string) => `${e}/x`,
      (e: string) => e.replace(/^1\n/, "9\n"),
      (e: string) => e.split("\n").slice(0, 4).join("\n"),
      (e: string) => {
        const lines = e.split("\n");
        lines[4] = (lines[4] as string).slice(8);
        return lines.join("\n");
      },
    ];
    for (const d of damage) {
      const ledger = Ledger.open(state);
      try {
        const store = ledger.listings as ListingStore;
        const entry = loadListing(store, QUIET_TREE_SCOPE, tree.sessionsDir);
        expect(entry).toBeDefined();
        if (entry === undefined) return;
        store.save(
          QUIET_TREE_SCOPE,
          new Map([[tree.sessionsDir, { ...entry, entries: d(entry.entries) }]]),
          [],
        );
      } finally {
        ledger.close();
      }
      const r = await pass();
      expect(r.snapshot).toBe(false);
      expect(r.r).toMatchObject({ sources: 4, read: 0, unchanged: 4, failed: 0 });
      expect((await pass()).snapshot).toBe(true);
    }
  });

  it("no snapshot for a tree with a symlink in the sessions dir", async () => {
    symlinkSync(join(dir, "nowhere"), join(tree.sessionsDir, "dangling"));
    await pass();
    await pass();
    const third = await pass();
    expect(third.r.read).toBe(0);
    expect(third.snapshot).toBe(false);
  });
});
