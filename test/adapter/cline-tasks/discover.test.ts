/** Discovery of task folders whose ui_messages.json is not a file: reported, never read. */
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  discoverTasks,
  discoveryMemo,
  type GateStat,
  type HeldTaskIds,
  listTaskFiles,
  listTaskIds,
  type TasksDiscovery,
  taskFileProblem,
} from "../../../src/adapter/cline-tasks/discover.ts";
import { HistoryCache } from "../../../src/adapter/cline-tasks/history.ts";
import { checkpointOf, statFile, unchangedSinceStat } from "../../../src/adapter/fingerprint.ts";
import type { Source } from "../../../src/adapter/types.ts";
import { counts, ROOT, request, say, writeHistory, writeTask } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cline-tasks-discover-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("taskFileProblem", () => {
  it("a file or nothing yet is no problem; a directory is not-a-file", () => {
    const p = writeTask(dir, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    expect(taskFileProblem(p, statSync(p))).toBeUndefined();
    expect(taskFileProblem(join(dir, "none"), undefined)).toBeUndefined();
    expect(taskFileProblem(dir, statSync(dir))).toEqual({
      path: dir,
      code: "not-a-file",
      detail: "ui_messages.json is a directory",
    });
  });
});

describe("discoverTasks", () => {
  it("lists the good task, and reports a directory and a symlink loop where ui_messages.json belongs", async () => {
    const root = { ...ROOT, path: join(dir, "data") };
    writeTask(root.path, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    mkdirSync(join(root.path, "tasks", "2", "ui_messages.json"), { recursive: true });
    const loop = join(root.path, "tasks", "3", "ui_messages.json");
    mkdirSync(join(root.path, "tasks", "3"));
    symlinkSync(`${loop}.b`, loop);
    symlinkSync(loop, `${loop}.b`);
    const d = await discoverTasks([root], new HistoryCache());
    expect(d.sources.map((s) => s.hint.sessionId)).toEqual(["1"]);
    expect(d.problems.map((p) => [p.path.slice(root.path.length), p.code])).toEqual([
      ["/tasks/2/ui_messages.json", "not-a-file"],
      ["/tasks/3/ui_messages.json", "unreadable"],
    ]);
  });
});

describe("discovery's stats", () => {
  it("answer the gate as a stat of the file would, and only for what discovery found", async () => {
    const root = { ...ROOT, path: join(dir, "data") };
    const paths = ["1", "2", "3"].map((id) => writeTask(root.path, id, [request(10, counts(1, 1))]));
    mkdirSync(join(root.path, "tasks", "4", "ui_messages.json"), { recursive: true });
    const d = await discoverTasks([root], new HistoryCache(), new Map(), discoveryMemo());
    for (const p of paths) {
      const cp = checkpointOf(p, statFile(p));
      const s = statSync(p);
      const found = d.stats.statOf(p);
      expect(found).toEqual({ size: s.size, ino: s.ino, mtimeMs: s.mtimeMs });
      expect(unchangedSinceStat(cp, found as GateStat)).toBe(true);
      // Any field off: changed, as the plain stat says.
      for (const off of [
        { size: cp.size + 1 },
        { ino: cp.ino + 1 },
        { mtimeNs: `${BigInt(cp.mtimeNs) + 1_000_000n}` },
      ]) {
        expect(unchangedSinceStat({ ...cp, ...off }, found as GateStat)).toBe(false);
        expect(unchangedSinceStat({ ...cp, ...off }, s)).toBe(false);
      }
    }
    // A directory where the file belongs, and a path no discovery listed: not answered here.
    expect(d.stats.statOf(join(root.path, "tasks", "4", "ui_messages.json"))).toBeUndefined();
    expect(d.stats.statOf(join(dir, "elsewhere"))).toBeUndefined();
  });
});

describe("listTaskIds", () => {
  const later = () => Date.now() + 10_000;

  it("answers from the held listing while the tasks dir's mark holds (no readdir)", () => {
    const tasks = join(dir, "tasks");
    mkdirSync(join(tasks, "2"), { recursive: true });
    mkdirSync(join(tasks, "1"));
    const memo = new Map<string, HeldTaskIds>();
    expect(listTaskIds(tasks, memo, later)).toEqual(["1", "2"]);
    const held = memo.get(tasks);
    if (held === undefined) throw new Error("not held");
    memo.set(tasks, { ...held, ids: ["sentinel"] });
    expect(listTaskIds(tasks, memo, later)).toEqual(["sentinel"]);
  });

  it("lists again when a task folder appears, or when the listing is not confirmed yet", () => {
    const tasks = join(dir, "tasks");
    mkdirSync(join(tasks, "1"), { recursive: true });
    const memo = new Map<string, HeldTaskIds>();
    listTaskIds(tasks, memo, later);
    mkdirSync(join(tasks, "3"));
    expect(listTaskIds(tasks, memo, later)).toEqual(["1", "3"]);
    const young = new Map<string, HeldTaskIds>();
    listTaskIds(tasks, young); // taken right after the change: unconfirmed
    const h = young.get(tasks);
    if (h === undefined) throw new Error("not held");
    young.set(tasks, { ...h, ids: ["sentinel"] });
    expect(listTaskIds(tasks, young)).toEqual(["1", "3"]);
  });

  it("holds each task's ui_messages.json path with the ids: a held sweep builds no path", () => {
    const tasks = join(dir, "tasks");
    mkdirSync(join(tasks, "b"), { recursive: true });
    mkdirSync(join(tasks, "a"));
    const memo = new Map<string, HeldTaskIds>();
    const first = listTaskFiles(tasks, memo, later);
    expect(first.paths).toEqual([join(tasks, "a", "ui_messages.json"), join(tasks, "b", "ui_messages.json")]);
    // Held: the very same arrays (strings built and hashed once per listing, not per sweep).
    const again = listTaskFiles(tasks, memo, later);
    expect(again.paths).toBe(first.paths);
    expect(again.ids).toBe(first.ids);
    mkdirSync(join(tasks, "c"));
    const changed = listTaskFiles(tasks, memo, later);
    expect(changed.paths).not.toBe(first.paths);
    expect(changed.paths.at(-1)).toBe(join(tasks, "c", "ui_messages.json"));
  });

  it("discovery lists the same Source objects at an idle sweep", async () => {
    const root = { ...ROOT, path: join(dir, "data") };
    writeTask(root.path, "1", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    writeTask(root.path, "2", [request(10, counts(1, 1)), say(11, "text", "ok")]);
    const memo = discoveryMemo();
    const history = new HistoryCache();
    const d1 = await discoverTasks([root], history, new Map(), memo);
    const prev = new Map(d1.sources.map((s) => [s.path, s]));
    const d2 = await discoverTasks([root], history, prev, memo);
    expect(d2.sources).toHaveLength(2);
    d2.sources.forEach((s, i) => {
      expect(s).toBe(d1.sources[i]);
    });
  });

  it("a tasks dir that went away throws ENOENT and is forgotten", () => {
    const tasks = join(dir, "tasks");
    mkdirSync(join(tasks, "1"), { recursive: true });
    const memo = new Map<string, HeldTaskIds>();
    listTaskIds(tasks, memo, later);
    rmSync(tasks, { recursive: true });
    expect(() => listTaskIds(tasks, memo, later)).toThrow(/ENOENT/);
    expect(memo.has(tasks)).toBe(false);
  });
});

describe("an idle discovery (the listing and the history as last time): stats only", () => {
  const later = () => Date.now() + 10_000;

  /** Tasks 1-4 with messages, task 5 a folder without them yet; discovered twice (the second held). */
  async function held() {
    const root = { ...ROOT, path: join(dir, "data") };
    for (const id of ["1", "2", "3", "4"]) writeTask(root.path, id, [request(10, counts(1, 1))]);
    mkdirSync(join(root.path, "tasks", "5"));
    writeHistory(
      root.path,
      ["1", "2", "3", "4", "5"].map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
    );
    const memo = discoveryMemo();
    // The listing confirmed (as LISTING_CONFIRM_MS after the dir's last change).
    listTaskFiles(join(root.path, "tasks"), memo.listings, later);
    const history = new HistoryCache();
    const doc = (id: string) => join(root.path, "tasks", id, "ui_messages.json");
    let prev = new Map<string, Source>();
    const discover = async () => {
      const d = await discoverTasks([root], history, prev, memo);
      prev = new Map(d.sources.map((s) => [s.path, s]));
      return d;
    };
    const first = await discover();
    const idle = await discover();
    return { root, doc, first, idle, discover };
  }

  /** Every task's answer to the gate is what a stat of its file says now. */
  function expectStatsNow(d: TasksDiscovery, paths: readonly string[]) {
    for (const p of paths) {
      const s = statSync(p);
      expect(d.stats.statOf(p)).toEqual({ size: s.size, ino: s.ino, mtimeMs: s.mtimeMs });
      expect(d.stats.sameFacts(p, s.size, s.ino, s.mtimeMs)).toBe(true);
      expect(d.stats.sameFacts(p, s.size + 1, s.ino, s.mtimeMs)).toBe(false);
    }
  }

  it("hands on the last discovery's very source list, with fresh stats", async () => {
    const t = await held();
    expect(t.idle.sources).toBe(t.first.sources);
    expect(t.idle.sources.map((s) => [s.hint.sessionId, s.hint.project])).toEqual([
      ["1", "/w/1"],
      ["2", "/w/2"],
      ["3", "/w/3"],
      ["4", "/w/4"],
    ]);
    expect(t.idle.problems).toEqual([]);
    expectStatsNow(t.idle, ["1", "2", "3", "4"].map(t.doc));
    expect(t.idle.stats.statOf(t.doc("5"))).toBeUndefined();
    expect(t.idle.stats.sameFacts(t.doc("5"), 0, 0, 0)).toBeUndefined();
  });

  it("a file rewritten in place or renamed onto: the next discovery's stats say so", async () => {
    const t = await held();
    const before = statSync(t.doc("2"));
    writeFileSync(t.doc("2"), JSON.stringify([request(10, counts(1, 1)), say(11, "text", "more")]));
    writeTask(t.root.path, "3", [request(10, counts(2, 2))]);
    const d = await t.discover();
    expect(statSync(t.doc("2")).ino).toBe(before.ino);
    expectStatsNow(d, ["1", "2", "3", "4"].map(t.doc));
    expect(d.stats.sameFacts(t.doc("2"), before.size, before.ino, before.mtimeMs)).toBe(false);
    expect(d.sources).toBe(t.first.sources);
  });

  it("messages that appear in a listed folder, or go from one, change the sources", async () => {
    const t = await held();
    writeTask(t.root.path, "5", [request(10, counts(1, 1))]);
    const added = await t.discover();
    expect(added.sources.map((s) => s.hint.sessionId)).toEqual(["1", "2", "3", "4", "5"]);
    expectStatsNow(added, ["1", "2", "3", "4", "5"].map(t.doc));
    rmSync(t.doc("2"));
    const gone = await t.discover();
    expect(gone.sources.map((s) => s.hint.sessionId)).toEqual(["1", "3", "4", "5"]);
    expect(gone.stats.statOf(t.doc("2"))).toBeUndefined();
    // Held again from here: the same list handed on.
    expect((await t.discover()).sources).toBe(gone.sources);
  });

  it("a directory where the messages belong is reported at every discovery", async () => {
    const t = await held();
    rmSync(t.doc("3"));
    mkdirSync(t.doc("3"));
    for (let i = 0; i < 2; i++) {
      const d = await t.discover();
      expect(d.sources.map((s) => s.hint.sessionId)).toEqual(["1", "2", "4"]);
      expect(d.problems.map((p) => [p.path, p.code])).toEqual([[t.doc("3"), "not-a-file"]]);
    }
  });

  it("a history rewritten with another cwd gives that task its new project", async () => {
    const t = await held();
    writeHistory(t.root.path, [
      ...["2", "3", "4"].map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
      { id: "1", cwdOnTaskInitialization: "/elsewhere" },
    ]);
    const d = await t.discover();
    expect(d.sources.map((s) => s.hint.project)).toEqual(["/elsewhere", "/w/2", "/w/3", "/w/4"]);
    expect(d.sources[1]).toBe(t.first.sources[1]);
  });

  it("a root without a history file is held too", async () => {
    const root = { ...ROOT, path: join(dir, "bare") };
    writeTask(root.path, "1", [request(10, counts(1, 1))]);
    const memo = discoveryMemo();
    listTaskFiles(join(root.path, "tasks"), memo.listings, later);
    const history = new HistoryCache();
    const d1 = await discoverTasks([root], history, new Map(), memo);
    const d2 = await discoverTasks([root], history, new Map(d1.sources.map((s) => [s.path, s])), memo);
    expect(d2.sources).toBe(d1.sources);
    expect(d2.entryless).toEqual(new Set([root.path]));
  });
});
