/**
 * DirWatcher with several plans (one per adapter root): one watch per directory serves every plan
 * that wants it, a root not created yet is watched through its nearest existing ancestor for the
 * one name on the way to it, and a whole-file rewrite (temp file + rename) names the document.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { WatchPlan } from "../../src/adapter/types.ts";
import { DEFAULT_MAX_DIRS, DirWatcher, newestDirs, type WatchEvent } from "../../src/collector/watch.ts";
import { silentLogger } from "../../src/util/log.ts";

const work = mkdtempSync(join(tmpdir(), "dir-watch-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const open: DirWatcher[] = [];
afterEach(() => {
  for (const w of open.splice(0)) w.close();
});

/** A generic plan: `<root>/items/<id>/doc.json`, index `<root>/idx/index.json`. */
function plan(root: string): WatchPlan {
  return {
    sourcesRoot: join(root, "items"),
    indexDir: join(root, "idx"),
    isIndexFile: (n) => n === "index.json",
    isSourceFile: (n) => n === "doc.json",
  };
}

function watcherOf(plans: readonly WatchPlan[]) {
  const events: WatchEvent[] = [];
  const w = new DirWatcher({ plans, logger: silentLogger, onChange: (e) => events.push(e) });
  open.push(w);
  return { w, events };
}

async function eventually(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const settle = () => new Promise((r) => setTimeout(r, 150));

describe("DirWatcher with several plans", () => {
  it("watches every plan's roots; a rename onto a source's name is an event naming it", async () => {
    const a = join(work, "a");
    const b = join(work, "b");
    for (const r of [a, b]) {
      mkdirSync(join(r, "items", "1"), { recursive: true });
      mkdirSync(join(r, "idx"), { recursive: true });
    }
    const { w, events } = watcherOf([plan(a), plan(b)]);
    w.refresh([]);
    for (const d of [join(a, "items"), join(a, "items", "1"), join(b, "items"), join(b, "idx")])
      expect(w.covers(d)).toBe(true);
    const dir = join(b, "items", "1");
    writeFileSync(join(dir, "doc.json.tmp.1.x.json"), "{}");
    renameSync(join(dir, "doc.json.tmp.1.x.json"), join(dir, "doc.json"));
    await eventually("the rename", () => events.some((e) => e.path === join(dir, "doc.json")));
    await settle();
    expect(events.some((e) => e.path?.includes(".tmp."))).toBe(false);
    // A rename onto a source: named, marked renamed, no discovery asked for (the loop decides).
    const renamed = events.filter((e) => e.path === join(dir, "doc.json"));
    expect(renamed.every((e) => e.renamed === true && !e.rediscover)).toBe(true);
    // Rewritten in place: a plain change.
    events.length = 0;
    writeFileSync(join(dir, "doc.json"), "[]");
    await eventually("the in-place write", () => events.some((e) => e.path === join(dir, "doc.json")));
    expect(events.some((e) => e.renamed === true || e.rediscover)).toBe(false);
    // A new source folder of the second plan is watched at once, with a discovery asked for.
    mkdirSync(join(b, "items", "2"));
    await eventually("the new folder", () => events.some((e) => e.path === join(b, "items", "2")));
    expect(events.find((e) => e.path === join(b, "items", "2"))?.rediscover).toBe(true);
    expect(w.covers(join(b, "items", "2"))).toBe(true);
    writeFileSync(join(b, "idx", "index.json"), "{}");
    await eventually("the index", () => events.some((e) => e.path === join(b, "idx", "index.json")));
  });

  it("roots not created yet: one watch on their shared ancestor, only for the names on the way", async () => {
    const home = join(work, "home");
    mkdirSync(home);
    const one = join(home, ".one", "data");
    const two = join(home, ".two", "data");
    const { w, events } = watcherOf([plan(one), plan(two)]);
    w.refresh([]);
    expect(w.watched()).toEqual([home]);
    // Unrelated churn in the ancestor (a home directory) asks for nothing.
    writeFileSync(join(home, ".bash_history"), "x");
    mkdirSync(join(home, ".other"));
    await settle();
    expect(events).toEqual([]);
    mkdirSync(join(two, "items"), { recursive: true });
    await eventually("the root appearing", () => events.some((e) => e.rediscover));
    // After the discovery the event asked for, the next refresh watches the root itself.
    w.refresh([]);
    expect(w.covers(join(two, "items"))).toBe(true);
    expect(w.covers(home)).toBe(true);
    expect(w.covers(join(two))).toBe(true);
  });
});

describe("the default watch budget", () => {
  it("watches the newest DEFAULT_MAX_DIRS source folders, whatever the history, and leaves the rest to the sweep", () => {
    const root = mkdtempSync(join(work, "budget-"));
    const p = plan(root);
    mkdirSync(p.indexDir, { recursive: true });
    const n = DEFAULT_MAX_DIRS + 40;
    const dirs: string[] = [];
    for (let i = 0; i < n; i++) {
      const d = join(p.sourcesRoot, `f${i}`);
      mkdirSync(d, { recursive: true });
      // The first 40 are the oldest.
      utimesSync(d, 1_000_000 + i, 1_000_000 + i);
      dirs.push(d);
    }
    const { w } = watcherOf([p]);
    w.refresh(dirs);
    const watchedFolders = w.watched().filter((d) => d.startsWith(`${p.sourcesRoot}/`));
    expect(watchedFolders.length).toBe(DEFAULT_MAX_DIRS);
    expect(w.complete).toBe(true);
    for (const d of dirs.slice(0, 40)) {
      expect(w.covers(d)).toBe(false);
      expect(w.sweptOnly(d)).toBe(true);
    }
    expect(w.covers(dirs[n - 1] as string)).toBe(true);
    expect(w.covers(p.sourcesRoot)).toBe(true);
    // Bounded by memory, not by the kernel's per-user budget alone (~2.7 KB a watch).
    expect(DEFAULT_MAX_DIRS).toBeLessThanOrEqual(4096);
  });
});

describe("DirWatcher.promote: a resumed folder left to the sweep", () => {
  it("is watched at once, at most a quarter of the budget beyond it, until a refresh ranks again", () => {
    const root = mkdtempSync(join(work, "promote-"));
    const p = plan(root);
    mkdirSync(p.indexDir, { recursive: true });
    const dirs: string[] = [];
    for (let i = 0; i < 10; i++) {
      const d = join(p.sourcesRoot, `f${i}`);
      mkdirSync(d, { recursive: true });
      utimesSync(d, 1_000_000 + i, 1_000_000 + i);
      dirs.push(d);
    }
    const events: WatchEvent[] = [];
    const w = new DirWatcher({
      plans: [p],
      logger: silentLogger,
      onChange: (e) => events.push(e),
      maxDirs: 6,
    });
    open.push(w);
    w.refresh(dirs);
    const [f0, f1] = dirs as [string, string];
    expect(w.sweptOnly(f0) && w.sweptOnly(f1)).toBe(true);
    // A watched folder, or one outside every plan's sweep, is not promoted; the room is 6 / 4 = 1.
    expect(w.promote([dirs[9] as string, join(root, "elsewhere")])).toEqual([]);
    expect(w.promote([f0])).toEqual([f0]);
    expect(w.covers(f0) && !w.sweptOnly(f0)).toBe(true);
    expect(w.promote([f1])).toEqual([]);
    expect(w.sweptOnly(f1)).toBe(true);
    const f10 = join(p.sourcesRoot, "f10");
    mkdirSync(f10);
    // A new folder: the set is ranked by mtime again, and the budget holds.
    w.refresh([...dirs, f10]);
    const folders = w.watched().filter((d) => d.startsWith(`${p.sourcesRoot}/`));
    expect(folders.length).toBe(6);
    expect(w.covers(f10)).toBe(true);
  });
});

describe("newestDirs: which source folders the watch budget keeps", () => {
  const age: Record<string, number> = { "/a": 30, "/b": 10, "/c": 20, "/d": 0, "/e": 20 };
  const mtime = (d: string) => age[d] ?? 0;

  it("within the budget: all, in their order", () => {
    expect(newestDirs(["/b", "/a"], 2, mtime)).toEqual({ watched: ["/b", "/a"], rest: [] });
  });

  it("past it: the newest by mtime, ties in their order; the rest, newest first; an unstat-able folder is the oldest", () => {
    expect(newestDirs(["/d", "/b", "/c", "/a", "/e", "/gone"], 3, mtime)).toEqual({
      watched: ["/a", "/c", "/e"],
      rest: ["/b", "/d", "/gone"],
    });
  });

  it("with real folders: the one touched last is kept", () => {
    const root = mkdtempSync(join(tmpdir(), "newest-"));
    try {
      const [x, y] = [join(root, "x"), join(root, "y")];
      mkdirSync(x);
      mkdirSync(y);
      utimesSync(y, 1_000_000, 1_000_000);
      expect(newestDirs([y, x, join(root, "none")], 1)).toEqual({
        watched: [x],
        rest: [y, join(root, "none")],
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
