import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { createClineSurfaces } from "../../src/adapter/cline/captures/collect.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import type { Adapter, Observation, Source } from "../../src/adapter/types.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { writeCapture } from "../adapter/cline/captures/helpers.ts";
import { type MsgSpec, makeTree, messagesDoc, type Tree } from "../helpers/cline-tree.ts";

const M = (i: number, o: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

let dir: string;
let tree: Tree;
let ledger: Ledger;
const adapter = () => createClineAdapter(resolveClinePaths({}, {}, tree.home));
const docPath = (id: string) => join(tree.sessionsDir, id, `${id}.messages.json`);
const rewrite = (id: string, msgs: MsgSpec[]) =>
  writeFileSync(docPath(id), `${JSON.stringify(messagesDoc(id, "lead", msgs), null, 2)}\n`);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pass-"));
  tree = makeTree(join(dir, "home"), [
    {
      id: "s1",
      cwd: "/p1",
      messages: [
        { id: "m1", metrics: M(10, 1) },
        { id: "m2", metrics: M(20, 2) },
      ],
    },
    { id: "s2", cwd: "/p2", messages: [{ id: "m1", metrics: M(30, 3) }] },
  ]);
  ledger = Ledger.open(join(dir, "state"));
});
afterEach(() => {
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A source read with nothing in it, at a checkpoint of its own (the fake adapters below). */
const readEmpty = (source: Source): Observation => ({
  status: "read",
  source,
  checkpoint: { path: source.path, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
  events: [],
  toolCalls: [],
  problems: [],
});

describe("runPass", () => {
  it("a source that relies on one which failed in the same pass is deferred with it, then read", async () => {
    let docFails = true;
    const doc: Source = { adapterId: "cline", path: "/x/d/d.messages.json", origin: "walk", hint: {} };
    const dep: Source = { ...doc, path: "/x/d/d.compaction.json", after: doc.path };
    const other: Source = { ...doc, path: "/x/e/e.compaction.json", after: "/x/e/e.messages.json" };
    const fake: Adapter = {
      id: "cline",
      discover: async () => ({ sources: [doc, dep, other], problems: [] }),
      collectIncremental: async (source) =>
        source === doc && docFails
          ? { status: "failed", source, problem: { path: source.path, code: "torn-write", detail: "" } }
          : readEmpty(source),
    };
    const a = await runPass(fake, ledger);
    expect(a).toMatchObject({ read: 1, failed: 2, failedPaths: [doc.path, dep.path] });
    expect(a.problems.map((p) => [p.path, p.code])).toEqual([
      [doc.path, "torn-write"],
      [dep.path, "deferred"],
    ]);
    // Not committed: no checkpoint, so the next pass reads it again. One whose source did not fail is.
    expect(ledger.allCheckpoints().has(dep.path)).toBe(false);
    expect(ledger.allCheckpoints().has(other.path)).toBe(true);
    docFails = false;
    const b = await runPass(fake, ledger);
    expect(b).toMatchObject({ read: 3, failed: 0 });
    expect(ledger.allCheckpoints().has(dep.path)).toBe(true);
  });

  it("collects every document once, then reads nothing while nothing changed", async () => {
    const a = await runPass(adapter(), ledger);
    expect(a).toMatchObject({ sources: 2, read: 2, unchanged: 0, failed: 0, eventsAdded: 3 });
    const b = await runPass(adapter(), ledger);
    expect(b).toMatchObject({ sources: 2, read: 0, unchanged: 2, eventsAdded: 0 });
  });

  it("counts capture files apart from message documents; a pass without any has no capture counts", async () => {
    expect((await runPass(adapter(), ledger)).captures).toBeUndefined();
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeCapture(caps, "cap_a", 1);
    writeCapture(caps, "cap_a", 1, { stage: "wire_request" });
    const surfaces = () =>
      createClineSurfaces(resolveClinePaths({}, {}, tree.home), [
        { path: caps, origin: "flag", via: "--capture-dir" },
      ]);
    rewrite("s2", [
      { id: "m1", metrics: M(30, 3) },
      { id: "m2", metrics: M(1, 1) },
    ]);
    const a = await runPass(surfaces(), ledger);
    expect(a).toMatchObject({ sources: 4, read: 3, unchanged: 1, eventsAdded: 1 });
    expect(a.captures).toEqual({ files: 2, read: 2, added: 2 });
    const b = await runPass(surfaces(), ledger);
    expect(b).toMatchObject({ sources: 4, read: 0, captures: { files: 2, read: 0, added: 0 } });
  });

  it("restart: stop, write more, restart, expect only the new", async () => {
    await runPass(adapter(), ledger);
    ledger.close();
    rewrite("s1", [
      { id: "m1", metrics: M(10, 1) },
      { id: "m2", metrics: M(20, 2) },
      { id: "m3", metrics: M(40, 4) },
    ]);
    ledger = Ledger.open(join(dir, "state"));
    const r = await runPass(adapter(), ledger);
    expect(r).toMatchObject({ read: 1, unchanged: 1, eventsAdded: 1 });
    expect(ledger.report.groupedEvents([])[0]).toMatchObject({ input: 100, events: 4 });
  });

  it("an unchanged size and mtime means the file is not opened", async () => {
    const p = docPath("s1");
    // Whole seconds, so the mtime can be restored exactly after the overwrite below.
    utimesSync(p, 1_700_000_000, 1_700_000_000);
    await runPass(adapter(), ledger);
    const st = statSync(p);
    const garbage = Buffer.alloc(st.size, 0x7b); // "{{{{": unparseable if it were read
    writeFileSync(p, garbage);
    utimesSync(p, 1_700_000_000, 1_700_000_000);
    const r = await runPass(adapter(), ledger);
    expect(r).toMatchObject({ read: 0, unchanged: 2, failed: 0 });
  });

  it("a torn (half-written) document keeps its checkpoint, is counted, and is retried next pass", async () => {
    await runPass(adapter(), ledger);
    const before = ledger.getCheckpoint(docPath("s1"));
    const full = JSON.stringify(
      messagesDoc("s1", "lead", [
        { id: "m1", metrics: M(10, 1) },
        { id: "m2", metrics: M(20, 2) },
        { id: "m9", metrics: M(90, 9) },
      ]),
    );
    writeFileSync(docPath("s1"), full.slice(0, Math.floor(full.length * 0.6)));
    const torn = await runPass(adapter(), ledger);
    expect(torn).toMatchObject({ failed: 1, eventsAdded: 0 });
    expect(torn.problems.map((p) => p.code)).toContain("partial-document");
    expect(ledger.getCheckpoint(docPath("s1"))).toEqual(before);
    writeFileSync(docPath("s1"), full);
    const healed = await runPass(adapter(), ledger);
    expect(healed).toMatchObject({ failed: 0, eventsAdded: 1 });
  });

  it("an empty document (the instant after truncate) is retried, not counted", async () => {
    writeFileSync(docPath("s2"), "");
    const r = await runPass(adapter(), ledger);
    expect(r).toMatchObject({ failed: 1, eventsAdded: 2 });
  });

  it("a missing index costs metadata, never events", async () => {
    rmSync(tree.dbDir, { recursive: true });
    const r = await runPass(adapter(), ledger);
    expect(r.eventsAdded).toBe(3);
    // project still known from the sidecar
    expect(ledger.report.groupedEvents(["project"]).map((x) => x.project)).toEqual(["/p1", "/p2"]);
  });

  it("an index row pointing at a deleted file is reported; the walk still finds the rest", async () => {
    unlinkSync(docPath("s2"));
    const r = await runPass(adapter(), ledger);
    expect(r.eventsAdded).toBe(2);
    expect(r.problems.map((p) => p.code)).toContain("index-path-unusable");
  });

  it("a corrupt index is reported and the walk collects everything", async () => {
    writeFileSync(join(tree.dbDir, "sessions.db"), Buffer.alloc(4096, 7));
    const r = await runPass(adapter(), ledger);
    expect(r.eventsAdded).toBe(3);
    expect(r.problems.some((p) => p.code.startsWith("index-"))).toBe(true);
  });

  it("symlink loops in the sessions tree are harmless", async () => {
    symlinkSync(tree.sessionsDir, join(tree.sessionsDir, "loop"));
    symlinkSync(join(tree.sessionsDir, "s1"), join(tree.sessionsDir, "s1", "again"));
    const r = await runPass(adapter(), ledger);
    expect(r.eventsAdded).toBe(3);
  });

  it("a session folder replaced by a file, and stray files, are ignored", async () => {
    writeFileSync(join(tree.sessionsDir, "not-a-session"), "x");
    mkdirSync(join(tree.sessionsDir, "empty"));
    writeFileSync(join(tree.sessionsDir, "empty", "x.messages.json.tmp"), "{");
    const r = await runPass(adapter(), ledger);
    expect(r).toMatchObject({ sources: 2, eventsAdded: 3, failed: 0 });
  });

  it("one bad source never stops the others", async () => {
    writeFileSync(docPath("s1"), "{ not json");
    const r = await runPass(adapter(), ledger);
    expect(r).toMatchObject({ failed: 1, eventsAdded: 1 });
    expect(r.failedPaths).toEqual([docPath("s1")]);
  });

  it("reports progress per document", async () => {
    const seen: [number, number][] = [];
    await runPass(adapter(), ledger, { onProgress: (d, t) => seen.push([d, t]) });
    expect(seen).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it("never reads the sidecar's or the index's running totals", async () => {
    // The fixture's sidecar and index carry usage.inputTokens of 999999 and 123456789.
    await runPass(adapter(), ledger);
    const total = ledger.report.groupedEvents([])[0];
    expect(total).toMatchObject({ input: 60, output: 6, events: 3 });
    expect(readFileSync(ledger.path).includes(Buffer.from("999999"))).toBe(false);
  });
});

describe("a pass whose reads never wait (in-thread reading)", () => {
  /** `n` sources, each collected by `busyMs` of synchronous work and a settled promise: no I/O wait. */
  const busyAdapter = (n: number, busyMs: number) => {
    const state = { collected: 0 };
    const sources: Source[] = Array.from({ length: n }, (_, i) => ({
      adapterId: "cline",
      path: `/x/s${i}/s${i}.messages.json`,
      origin: "walk",
      hint: {},
    }));
    const fake: Adapter = {
      id: "cline",
      discover: async () => ({ sources, problems: [] }),
      collectIncremental: (source) => {
        const until = performance.now() + busyMs;
        while (performance.now() < until) {
          // the scan of a document, in this thread
        }
        state.collected++;
        return Promise.resolve(readEmpty(source));
      },
    };
    return { fake, state };
  };

  it("gives the event loop a turn while it works: a timer runs before the pass ends", async () => {
    const { fake, state } = busyAdapter(120, 2);
    let seenAt: number | undefined;
    setTimeout(() => {
      seenAt = state.collected;
    }, 0);
    // One source at a time (launched, then awaited): as a pass whose read-ahead window is full.
    const r = await runPass(fake, ledger, { readAhead: 1 });
    expect(r.read).toBe(120);
    // Without a turn the timer runs only once the whole pass has resolved (seenAt undefined here).
    expect(seenAt).toBeDefined();
    expect(seenAt).toBeLessThan(60);
  });

  it("a stop asked by a timer or a signal handler ends the pass at the next source, not at its end", async () => {
    const { fake, state } = busyAdapter(200, 2);
    let stop = false;
    setTimeout(() => {
      stop = true;
    }, 30);
    const r = await runPass(fake, ledger, { readAhead: 1, shouldStop: () => stop });
    expect(stop).toBe(true);
    expect(state.collected).toBeLessThan(120);
    expect(r.read).toBeLessThan(120);
  });
});

describe("index caching", () => {
  it("re-reads sessions.db only when it or its WAL changed", async () => {
    const { cachedIndexReader } = await import("../../src/adapter/cline/discover.ts");
    const { readSessionIndex } = await import("../../src/adapter/cline/index-db.ts");
    const d = mkdtempSync(join(tmpdir(), "idx-"));
    try {
      const t = makeTree(join(d, "home"), [{ id: "a", cwd: "/a", messages: [] }]);
      let reads = 0;
      const read = cachedIndexReader((dir) => {
        reads++;
        return readSessionIndex(dir);
      });
      expect((await read(t.dbDir)).rows).toHaveLength(1);
      expect((await read(t.dbDir)).rows).toHaveLength(1);
      expect(reads).toBe(1);
      const db = new Database(join(t.dbDir, "sessions.db"));
      db.prepare("UPDATE sessions SET cwd = '/a2'").run();
      db.close();
      expect((await read(t.dbDir)).rows[0]?.cwd).toBe("/a2");
      expect(reads).toBe(2);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("index paths from another machine", () => {
  it("rebases messages_path onto the sessions dir when the stored path is gone, keeping the row's metadata", async () => {
    const d = mkdtempSync(join(tmpdir(), "rebase-"));
    try {
      const t = makeTree(join(d, "home"), [
        { id: "r1", cwd: "/proj", messages: [{ id: "m", metrics: M(5, 1) }], sidecar: false },
      ]);
      const db = new Database(join(t.dbDir, "sessions.db"));
      db.prepare("UPDATE sessions SET messages_path = '/elsewhere/sessions/r1/r1.messages.json'").run();
      db.close();
      const l = Ledger.open(join(d, "state"));
      const r = await runPass(createClineAdapter(resolveClinePaths({}, {}, t.home)), l);
      expect(r.problems).toEqual([]);
      expect(r.eventsAdded).toBe(1);
      expect(l.report.groupedEvents(["project"])[0]?.project).toBe("/proj");
      l.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("sidecar caching", () => {
  it("reads an unindexed session's sidecar once, and again only after it changed", async () => {
    const { discoverCline } = await import("../../src/adapter/cline/discover.ts");
    const d = mkdtempSync(join(tmpdir(), "sidecar-"));
    try {
      const t = makeTree(join(d, "home"), [{ id: "u1", cwd: "/first", messages: [], indexed: false }]);
      const paths = resolveClinePaths({}, {}, t.home);
      const cache = new Map();
      const projectOf = async () => (await discoverCline(paths, undefined, cache)).sources[0]?.hint.project;
      expect(await projectOf()).toBe("/first");
      expect(cache.size).toBe(1);
      const sidecar = join(t.sessionsDir, "u1", "u1.json");
      writeFileSync(sidecar, JSON.stringify({ session_id: "u1", cwd: "/second/longer" }));
      expect(await projectOf()).toBe("/second/longer");
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("the pass prunes what a complete listing no longer has", () => {
  /** A generic adapter with two surfaces: "a" lists completely (but not under /a/locked), "b" does not. */
  function twoSurfaces(listed: { a: string[]; b: string[] }): Adapter {
    return {
      id: "fake",
      async discover() {
        const src = (adapterId: string, path: string): Source => ({
          adapterId,
          path,
          origin: "walk",
          hint: {},
        });
        return {
          sources: [...listed.a.map((p) => src("a", p)), ...listed.b.map((p) => src("b", p))],
          problems: [],
          listings: [{ adapterId: "a", unlisted: ["/a/locked"] }],
        };
      },
      async collectIncremental(source, checkpoint): Promise<Observation> {
        if (checkpoint !== undefined) return { status: "unchanged", source, checkpoint };
        return readEmpty(source);
      },
    };
  }

  it("drops the checkpoints of gone files of the listed surface only, never under an unlisted dir", async () => {
    const all = { a: ["/a/1", "/a/2", "/a/locked/3"], b: ["/b/1", "/b/2"] };
    expect((await runPass(twoSurfaces(all), ledger)).read).toBe(5);
    // Everything vanished from the listings.
    const r = await runPass(twoSurfaces({ a: [], b: [] }), ledger);
    expect(r.checkpointsPruned).toBe(2);
    expect(["/a/1", "/a/2"].map((p) => ledger.getCheckpoint(p))).toEqual([undefined, undefined]);
    // Under the dir that could not be listed, and the other surface's: kept.
    expect(ledger.getCheckpoint("/a/locked/3")).toBeDefined();
    expect(ledger.getCheckpoint("/b/1")).toBeDefined();
    // A file that comes back is read again (its checkpoint is gone), nothing else.
    const back = await runPass(twoSurfaces({ a: ["/a/1"], b: [] }), ledger);
    expect(back).toMatchObject({ read: 1 });
    expect(back.checkpointsPruned).toBeUndefined();
  });
});

describe("an adapter that answers 'unchanged' synchronously (Adapter.unchangedNow)", () => {
  /** Sources /s/0../s/{n-1}; unchangedNow says yes for `sure` only; counts the async collects. */
  function adapter(n: number, sure: (path: string) => boolean, asked: string[]): Adapter {
    return {
      id: "sync-gate",
      async discover() {
        const sources = Array.from(
          { length: n },
          (_, i): Source => ({
            adapterId: "sync-gate",
            path: `/s/${i}`,
            origin: "walk",
            hint: {},
          }),
        );
        return { sources, problems: [] };
      },
      async collectIncremental(source, checkpoint): Promise<Observation> {
        asked.push(source.path);
        if (checkpoint !== undefined) return { status: "unchanged", source, checkpoint };
        return readEmpty(source);
      },
      unchangedNow: (source) => sure(source.path),
    };
  }

  it("skips what it is sure of without collecting it, and still collects what it is not sure of", async () => {
    const first: string[] = [];
    // No checkpoint yet: never asked synchronously, every source collected.
    expect(
      await runPass(
        adapter(10, () => true, first),
        ledger,
      ),
    ).toMatchObject({ read: 10, unchanged: 0 });
    expect(first).toHaveLength(10);
    const again: string[] = [];
    const odd = (p: string) => Number(p.slice(3)) % 2 === 1;
    const r = await runPass(adapter(10, odd, again), ledger);
    expect(r).toMatchObject({ sources: 10, read: 0, unchanged: 10, failed: 0 });
    expect(again).toEqual(["/s/0", "/s/2", "/s/4", "/s/6", "/s/8"]);
  });
});
