import { mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { createClineSurfaces } from "../../src/adapter/cline/captures/collect.ts";
import type { ClinePaths } from "../../src/adapter/cline/paths.ts";
import { clineWatchPlan } from "../../src/adapter/cline/watch-plan.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import type { TaskRoot } from "../../src/adapter/cline-tasks/types.ts";
import { combineAdapters } from "../../src/adapter/combine.ts";
import type { Adapter, Observation, Source } from "../../src/adapter/types.ts";
import {
  CollectorLoop,
  describePass,
  nextDelay,
  sameSources,
  trackSourceFailures,
} from "../../src/collector/loop.ts";
import type { PassResult } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { createLogger } from "../../src/util/log.ts";
import { settledRequests, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { metricsFor, writeSession } from "../e2e/helpers/sessions.ts";
import { event, observation } from "../helpers/events.ts";
import { countingAdapter } from "./counting.ts";

// A watch the kernel refuses (ENOSPC: the inotify budget spent by other programs), for one directory.
const refused = vi.hoisted(() => ({ dir: undefined as string | undefined }));
vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  const watch = ((dir: string, ...rest: unknown[]) => {
    if (dir === refused.dir) throw Object.assign(new Error(`ENOSPC: ${dir}`), { code: "ENOSPC" });
    return (fs.watch as (...a: unknown[]) => unknown)(dir, ...rest);
  }) as typeof fs.watch;
  return { ...fs, default: { ...fs, watch }, watch };
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, ms = 5000): Promise<number> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
  return performance.now() - t0;
}

function pass(over: Partial<PassResult> = {}): PassResult {
  return {
    sources: 3,
    read: 0,
    unchanged: 3,
    failed: 0,
    eventsAdded: 0,
    callsAdded: 0,
    problems: [],
    failedPaths: [],
    durationMs: 12,
    ...over,
  };
}

describe("trackSourceFailures", () => {
  const torn = { path: "/a", code: "partial-document", detail: "truncated" };
  it("reports a source once when it starts failing and once when it recovers", () => {
    const r1 = trackSourceFailures(
      new Map(),
      pass({ problems: [torn], failedPaths: ["/a"], failed: 1 }),
      true,
    );
    expect(r1.started).toEqual([torn]);
    const r2 = trackSourceFailures(r1.next, pass({ problems: [torn], failedPaths: ["/a"], failed: 1 }), true);
    expect(r2.started).toEqual([]);
    expect(r2.recovered).toEqual([]);
    const r3 = trackSourceFailures(r2.next, pass(), true);
    expect(r3.recovered).toEqual(["/a"]);
    expect(r3.next.size).toBe(0);
  });

  it("an incomplete pass (shutdown) clears nothing", () => {
    const prev = new Map([["/a", torn]]);
    const r = trackSourceFailures(prev, pass(), false);
    expect(r.recovered).toEqual([]);
    expect([...r.next.keys()]).toEqual(["/a"]);
  });
});

describe("describePass", () => {
  const none = { started: [], recovered: [], next: new Map() };
  it.each([
    [pass(), undefined],
    [
      pass({ read: 2, eventsAdded: 5, callsAdded: 1 }),
      "pass: 2 of 3 documents read, +5 events, +1 tool calls (12 ms)",
    ],
  ])("%o -> %s", (r, line) => {
    expect(describePass(r, none)).toBe(line);
  });

  it("mentions failing sources and rejected messages", () => {
    const torn = { path: "/a", code: "partial-document", detail: "" };
    const bad = { path: "/b", code: "invalid-metrics", detail: "" };
    const line = describePass(pass({ read: 1, failed: 1, problems: [torn, bad], failedPaths: ["/a"] }), {
      started: [torn],
      recovered: [],
      next: new Map([["/a", torn]]),
    });
    expect(line).toBe("pass: 1 of 3 documents read, +0 events, +0 tool calls, 1 failing, 1 problems (12 ms)");
  });

  it("counts capture files apart from message documents", () => {
    const r = pass({ sources: 10, read: 4, eventsAdded: 2, captures: { files: 7, read: 3, added: 3 } });
    expect(describePass(r, none)).toBe(
      "pass: 1 of 3 documents read, 3 of 7 capture files read, +2 events, +0 tool calls, +3 captures (12 ms)",
    );
    expect(
      describePass(pass({ sources: 10, unchanged: 10, captures: { files: 7, read: 0, added: 0 } }), none),
    ).toBe(undefined);
  });
});

describe("nextDelay", () => {
  it.each([
    [false, undefined, 5000],
    [true, undefined, 250],
    [true, 250, 500],
    [true, 4000, 5000],
  ] as const)("failing=%s prev=%s -> %d", (failing, prev, want) => {
    expect(nextDelay(failing, prev, 250, 5000)).toBe(want);
  });
});

// ---------- the loop itself ----------

const dirs: string[] = [];
const loops: CollectorLoop[] = [];
const ledgers: Ledger[] = [];
afterEach(async () => {
  refused.dir = undefined;
  for (const l of loops.splice(0)) await l.stop();
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "loop-"));
  dirs.push(d);
  return d;
}

function openLedger(): Ledger {
  const l = Ledger.open(join(tmp(), "state"));
  ledgers.push(l);
  return l;
}

function source(path: string): Source {
  return { adapterId: "cline", path, origin: "walk", hint: {} };
}

/** A scripted adapter: counts discoveries, can hold a pass open and fail sources on demand. */
function fakeAdapter(paths: string[]) {
  const state = {
    discovers: 0,
    active: 0,
    maxActive: 0,
    collected: 0,
    gate: undefined as Promise<void> | undefined,
    discoverError: undefined as Error | undefined,
    fail: new Set<string>(),
    sourceDelayMs: 0,
  };
  const adapter: Adapter = {
    id: "cline",
    async discover() {
      state.discovers++;
      state.active++;
      state.maxActive = Math.max(state.maxActive, state.active);
      try {
        if (state.discoverError) throw state.discoverError;
        if (state.gate) await state.gate;
        return { sources: paths.map(source), problems: [] };
      } finally {
        state.active--;
      }
    },
    async collectIncremental(s): Promise<Observation> {
      state.collected++;
      if (state.sourceDelayMs > 0) await sleep(state.sourceDelayMs);
      if (state.fail.has(s.path)) {
        return {
          status: "failed",
          source: s,
          problem: { path: s.path, code: "partial-document", detail: "torn" },
        };
      }
      return { ...observation([event(`e${state.collected}`, { dedupKey: `k${s.path}` })], [], 1, s) };
    },
  };
  return { adapter, state };
}

function loopOf(
  adapter: Adapter,
  ledger: Ledger,
  logs: string[],
  over: Partial<ConstructorParameters<typeof CollectorLoop>[2]> = {},
) {
  const loop = new CollectorLoop(adapter, ledger, {
    pollIntervalMs: 60_000,
    logger: createLogger("debug", (l) => logs.push(l)),
    retryMs: 10,
    ...over,
  });
  loops.push(loop);
  return loop;
}

describe("CollectorLoop", () => {
  it("never overlaps passes; requests during a pass schedule exactly one follow-up", async () => {
    const { adapter, state } = fakeAdapter(["/a", "/b"]);
    let release: () => void = () => {};
    state.gate = new Promise<void>((r) => {
      release = r;
    });
    const loop = loopOf(adapter, openLedger(), []);
    loop.start();
    await until("first discover", () => state.discovers === 1);
    for (let i = 0; i < 5; i++) loop.requestPass();
    release();
    state.gate = undefined;
    await until("follow-up pass", () => loop.passCount === 2);
    await sleep(50);
    await loop.idle();
    expect(state.discovers).toBe(2);
    expect(loop.passCount).toBe(2);
    expect(state.maxActive).toBe(1);
  });

  it("never dies when a whole pass fails; logs the error once and keeps retrying", async () => {
    const { adapter, state } = fakeAdapter(["/a"]);
    state.discoverError = new Error("disk on fire");
    const logs: string[] = [];
    const loop = loopOf(adapter, openLedger(), logs, { pollIntervalMs: 40 });
    loop.start();
    await until("several attempts", () => state.discovers >= 4);
    state.discoverError = undefined;
    await until("a pass succeeds", () => loop.passCount >= 1);
    expect(logs.filter((l) => l.includes("disk on fire"))).toHaveLength(1);
  });

  it("a failing source is logged once when it starts failing and once when it recovers", async () => {
    const { adapter, state } = fakeAdapter(["/a", "/b"]);
    state.fail.add("/a");
    const logs: string[] = [];
    const loop = loopOf(adapter, openLedger(), logs, { pollIntervalMs: 30 });
    loop.start();
    await until("several passes", () => loop.passCount >= 4);
    state.fail.clear();
    await until("recovery", () => logs.some((l) => l.includes("source recovered")));
    const after = loop.passCount;
    await until("more passes", () => loop.passCount >= after + 2);
    expect(logs.filter((l) => l.includes("source failing: /a"))).toHaveLength(1);
    expect(logs.filter((l) => l.includes("source recovered: /a"))).toHaveLength(1);
  });

  it("stop() lets the current source finish and starts nothing more", async () => {
    const paths = Array.from({ length: 10 }, (_, i) => `/s${i}`);
    const { adapter, state } = fakeAdapter(paths);
    state.sourceDelayMs = 30;
    const loop = loopOf(adapter, openLedger(), []);
    loop.start();
    await until("first source", () => state.collected >= 1);
    await loop.stop();
    const n = state.collected;
    expect(n).toBeLessThan(10);
    await sleep(100);
    expect(state.collected).toBe(n);
    expect(state.discovers).toBe(1);
  });

  it("runOnce runs exactly one pass and resolves with its result", async () => {
    const { adapter } = fakeAdapter(["/a", "/b"]);
    const loop = loopOf(adapter, openLedger(), []);
    const r = await loop.runOnce();
    expect(r?.sources).toBe(2);
    expect(r?.eventsAdded).toBe(2);
    expect(loop.passCount).toBe(1);
  });
});

/** A Cline home with empty sessions and db dirs, named by flags. */
function clineDirs() {
  const root = tmp();
  const sessions = join(root, "data", "sessions");
  const db = join(root, "data", "db");
  mkdirSync(sessions, { recursive: true });
  mkdirSync(db, { recursive: true });
  const paths: ClinePaths = {
    root: { path: root, origin: "flag", via: "test" },
    data: { path: join(root, "data"), origin: "flag", via: "test" },
    sessions: { path: sessions, origin: "flag", via: "test" },
    db: { path: db, origin: "flag", via: "test" },
  };
  return { sessions, db, paths };
}
/** `n` priced messages, ids from `msg_<from>`. */
const msgs = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: `msg_${from + i}`,
    model: "m",
    provider: "p",
    metrics: metricsFor(from + i),
  }));

describe("CollectorLoop with the real Cline adapter: filesystem watching", () => {
  it("a new and a rewritten document reach the ledger within a second (polling set to 60 s)", async () => {
    const { sessions, db, paths } = clineDirs();
    const ledger = openLedger();
    const loop = loopOf(createClineAdapter(paths), ledger, [], {
      watch: watchPlan(sessions, db),
    });
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    const id = "1796000000001_aaaaa";
    writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(2) });
    const newDoc = await until("new session in ledger", () => ledger.counts().events === 2, 1000);
    writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(5) });
    const rewrite = await until("rewrite in ledger", () => ledger.counts().events === 5, 1000);
    const other = "1796000000002_bbbbb";
    writeSession(sessions, { sessionId: other, cwd: "/w", messages: msgs(3, 100) });
    const second = await until("second session in ledger", () => ledger.counts().events === 8, 1000);
    console.log(
      `watch pick-up latency: new session ${newDoc.toFixed(0)} ms, rewrite ${rewrite.toFixed(0)} ms, another session ${second.toFixed(0)} ms`,
    );
  });

  it("a sessions dir Cline creates after the daemon started is watched from its first write", async () => {
    const root = tmp();
    const sessions = join(root, "home", ".cline", "data", "sessions");
    const db = join(root, "home", ".cline", "data", "db");
    const paths: ClinePaths = {
      root: { path: join(root, "home", ".cline"), origin: "flag", via: "test" },
      data: { path: join(root, "home", ".cline", "data"), origin: "flag", via: "test" },
      sessions: { path: sessions, origin: "flag", via: "test" },
      db: { path: db, origin: "flag", via: "test" },
    };
    mkdirSync(join(root, "home"));
    const ledger = openLedger();
    const loop = loopOf(createClineAdapter(paths), ledger, [], {
      watch: watchPlan(sessions, db),
    });
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    mkdirSync(sessions, { recursive: true });
    writeSession(sessions, { sessionId: "1796000000009_zzzzz", cwd: "/w", messages: msgs(2) });
    const ms = await until("the first session in the ledger", () => ledger.counts().events === 2, 1500);
    writeSession(sessions, { sessionId: "1796000000009_zzzzz", cwd: "/w", messages: msgs(4) });
    await until("its rewrite", () => ledger.counts().events === 4, 1000);
    console.log(`pick-up latency with the sessions dir created after start: ${ms.toFixed(0)} ms`);
  });

  it("without watching, only the poll picks changes up", async () => {
    const { sessions, paths } = clineDirs();
    const ledger = openLedger();
    const loop = loopOf(createClineAdapter(paths), ledger, [], { pollIntervalMs: 1500 });
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    writeSession(sessions, { sessionId: "1796000000003_ccccc", cwd: "/w", messages: msgs(2) });
    await sleep(600);
    expect(ledger.counts().events).toBe(0);
    await until("the poll", () => ledger.counts().events === 2, 3000);
  });
});

describe("CollectorLoop with both adapters combined: the task-format roots are watched too", () => {
  /** The daemon's surfaces: the CLI's sessions and one task-format root, watched by their plans. */
  function daemonOf(taskRoot: string, ledger: Ledger) {
    const { paths } = clineDirs();
    const root: TaskRoot = { path: taskRoot, client: "cli", product: "test", foundBy: "test" };
    const surfaces = combineAdapters("cline", [
      createClineSurfaces(paths, []),
      createClineTasksAdapter([root]),
    ]);
    expect(surfaces.watchPlans?.length).toBe(2);
    // The sweep far away: only a watch event can bring the task's requests in time.
    return loopOf(surfaces, ledger, [], {
      watch: { plans: surfaces.watchPlans ?? [] },
      pollIntervalMs: 600_000,
      sweepIntervalMs: 600_000,
    });
  }

  it("a task written by temp file + rename, then rewritten, reaches the ledger within a second", async () => {
    const data = join(tmp(), "data");
    mkdirSync(join(data, "tasks"), { recursive: true });
    const ledger = openLedger();
    const loop = daemonOf(data, ledger);
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    await loop.idle();
    // A new task folder, then its first ui_messages.json as the legacy core writes it.
    writeTask(data, "1796000000001", settledRequests(1));
    const newTask = await until("the new task's request", () => ledger.counts().events === 1, 1000);
    writeTask(data, "1796000000001", settledRequests(2));
    const rewrite = await until("the rewrite's request", () => ledger.counts().events === 2, 1000);
    console.log(
      `task-format pick-up latency: new task ${newTask.toFixed(0)} ms, rewrite ${rewrite.toFixed(0)} ms`,
    );
  });

  it("a task root created after the daemon started is watched once it appears", async () => {
    const home = tmp();
    const data = join(home, ".cline", "data");
    const ledger = openLedger();
    const loop = daemonOf(data, ledger);
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    await loop.idle();
    mkdirSync(join(data, "tasks"), { recursive: true });
    writeTask(data, "1796000000002", settledRequests(1));
    const ms = await until("the first task's request", () => ledger.counts().events === 1, 2000);
    writeTask(data, "1796000000002", settledRequests(2));
    await until("its rewrite", () => ledger.counts().events === 2, 1000);
    console.log(`task-format pick-up latency with the root created after start: ${ms.toFixed(0)} ms`);
  });

  it("a rewrite between the first read's commit and its folder's watch is read by the pass that follows", async () => {
    // The e2e daemon missed this once in ~20 runs on a loaded machine: the folder's watch is set
    // after the pass that found it, and the pass that then looks at the folder once more reused
    // the discovery, whose stat (taken before the rewrite) the gate trusted. Here the rewrite is
    // made inside that commit, so it always falls in that window.
    const home = tmp();
    const data = join(home, ".cline", "data");
    const ledger = openLedger();
    let rewritten = false;
    const rewriting = new Proxy(ledger, {
      get(target, prop, receiver) {
        if (prop !== "commitAll") return Reflect.get(target, prop, receiver);
        return (...args: Parameters<Ledger["commitAll"]>) => {
          const r = target.commitAll(...args);
          if (!rewritten && target.counts().events === 1) {
            rewritten = true;
            writeTask(data, "1796000000003", settledRequests(2));
          }
          return r;
        };
      },
    });
    const loop = daemonOf(data, rewriting);
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    await loop.idle();
    mkdirSync(join(data, "tasks"), { recursive: true });
    writeTask(data, "1796000000003", settledRequests(1));
    await until("the first request", () => rewritten, 2000);
    // No event will name the rewrite (it came before the watch) and the sweep is 10 minutes away.
    await until("the rewrite's request", () => ledger.counts().events === 2);
  });
});

describe("CollectorLoop: watching drives the work", () => {
  const counting = countingAdapter;
  const ids = Array.from({ length: 12 }, (_, i) => `17960000000${String(i).padStart(2, "0")}_s${i}`);

  async function settled(loop: CollectorLoop): Promise<void> {
    // The first pass, then the one that looks again at the directories it started watching.
    await until("first passes", () => loop.passCount >= 2);
    await loop.idle();
    await sleep(150);
    await loop.idle();
  }

  it("a rewrite is read without discovery and without a stat of any other source", async () => {
    const { sessions, db, paths } = clineDirs();
    for (const [i, id] of ids.entries())
      writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(1, i * 10) });
    const ledger = openLedger();
    const { adapter, n } = counting(createClineAdapter(paths));
    const loop = loopOf(adapter, ledger, [], {
      watch: watchPlan(sessions, db),
      pollIntervalMs: 60_000,
    });
    loop.start();
    await settled(loop);
    expect(ledger.counts().events).toBe(ids.length);
    n.discovers = 0;
    n.looked.length = 0;
    // An old session (not among the newest) resumed: its folder is watched like every other.
    const old = ids[0] as string;
    writeSession(sessions, { sessionId: old, cwd: "/w", messages: msgs(3) });
    await until("the rewrite in the ledger", () => ledger.counts().events === ids.length + 2, 2000);
    await loop.idle();
    expect(n.discovers).toBe(0);
    expect(new Set(n.looked)).toEqual(new Set([join(sessions, old, `${old}.messages.json`)]));
  });

  it("idle while every directory is watched: no pass until the sweep, however short the poll", async () => {
    const { sessions, db, paths } = clineDirs();
    for (const id of ids.slice(0, 3)) writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(1) });
    const { adapter, n } = counting(createClineAdapter(paths));
    const loop = loopOf(adapter, openLedger(), [], {
      watch: watchPlan(sessions, db),
      pollIntervalMs: 20,
      sweepIntervalMs: 1500,
    });
    loop.start();
    await settled(loop);
    const passes = loop.passCount;
    const discovers = n.discovers;
    await sleep(600);
    expect(loop.passCount).toBe(passes);
    // The safety-net sweep: a full pass with discovery.
    await until("the sweep", () => loop.passCount > passes, 3000);
    await loop.idle();
    expect(n.discovers).toBe(discovers + 1);
  });

  it("more source folders than watches: the newest are watched, the oldest left to the sweep, no polling", async () => {
    const { sessions, db, paths } = clineDirs();
    const four = ids.slice(0, 4);
    for (const [i, id] of four.entries())
      writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(1, i * 10) });
    // Folder ages: ids[0] the oldest, ids[3] the newest.
    for (const [i, id] of four.entries()) utimesSync(join(sessions, id), 1_000_000 + i, 1_000_000 + i);
    const ledger = openLedger();
    const logs: string[] = [];
    const { adapter, n } = counting(createClineAdapter(paths));
    const loop = loopOf(adapter, ledger, logs, {
      watch: { ...watchPlan(sessions, db), maxDirs: 2 },
      pollIntervalMs: 40,
      sweepIntervalMs: 1500,
    });
    loop.start();
    await settled(loop);
    expect(logs.some((l) => l.includes("watching the newest 2 of 4 source directories"))).toBe(true);
    expect(logs.some((l) => l.includes("cannot watch every directory"))).toBe(false);
    // Idle: no pass every 40 ms (the poll), whatever is left to the sweep.
    const passes = loop.passCount;
    await sleep(500);
    expect(loop.passCount).toBe(passes);
    // The newest folder is watched: its rewrite is read by an event, that one document only.
    n.discovers = 0;
    n.looked.length = 0;
    const newest = ids[3] as string;
    writeSession(sessions, { sessionId: newest, cwd: "/w", messages: msgs(3, 30) });
    await until("the newest rewrite", () => ledger.counts().events === 4 + 2, 1000);
    await loop.idle();
    expect(n.discovers).toBe(0);
    expect(new Set(n.looked)).toEqual(new Set([join(sessions, newest, `${newest}.messages.json`)]));
    // The oldest is left to the sweep: its rewrite is read by it (within 1.5 s), by no poll before.
    const oldest = ids[0] as string;
    const at = performance.now();
    writeSession(sessions, { sessionId: oldest, cwd: "/w", messages: msgs(3, 0) });
    await until("the oldest rewrite", () => ledger.counts().events === 6 + 2, 3000);
    expect(n.discovers).toBe(1);
    expect(performance.now() - at).toBeGreaterThan(200);
    // Resumed, the oldest folder is watched from then on (DirWatcher.promote): its next rewrite
    // is read by an event, before any sweep, with no discovery.
    await loop.idle();
    expect(loop.watchedDirs().includes(join(sessions, oldest))).toBe(true);
    n.discovers = 0;
    n.looked.length = 0;
    writeSession(sessions, { sessionId: oldest, cwd: "/w", messages: msgs(4, 0) });
    await until("the oldest's next rewrite, by an event", () => ledger.counts().events === 8 + 1, 1000);
    await loop.idle();
    expect(n.discovers).toBe(0);
    expect(new Set(n.looked)).toEqual(new Set([join(sessions, oldest, `${oldest}.messages.json`)]));
  });

  it("an incomplete watch (a directory refused) falls back to polling", async () => {
    const { sessions, db, paths } = clineDirs();
    for (const id of ids.slice(0, 2)) writeSession(sessions, { sessionId: id, cwd: "/w", messages: msgs(1) });
    refused.dir = join(sessions, ids[1] as string);
    const logs: string[] = [];
    const loop = loopOf(createClineAdapter(paths), openLedger(), logs, {
      watch: watchPlan(sessions, db),
      pollIntervalMs: 40,
      sweepIntervalMs: 60_000,
    });
    loop.start();
    await until("first pass", () => loop.passCount >= 1);
    const passes = loop.passCount;
    await until("polling passes", () => loop.passCount >= passes + 3, 2000);
    expect(logs.some((l) => l.includes("cannot watch every directory"))).toBe(true);
  });
});

/** The Cline adapter's watch plan for a sessions and a db dir (no capture dirs). */
function watchPlan(sessions: string, db: string) {
  const at = (path: string) => ({ path, origin: "flag" as const, via: "test" });
  return {
    plans: [
      clineWatchPlan({ root: at(sessions), data: at(sessions), sessions: at(sessions), db: at(db) }, []),
    ],
  };
}

describe("sameSources", () => {
  const src = (path: string) => ({ adapterId: "a", path, origin: "walk" as const, hint: {} });
  it("holds for the same objects in the same order only, not for equal copies", () => {
    const a = src("/x");
    const b = src("/y");
    expect(sameSources([a, b], [a, b])).toBe(true);
    expect(sameSources([a, b], [b, a])).toBe(false);
    expect(sameSources([a, b], [a, src("/y")])).toBe(false);
    expect(sameSources([a], [a, b])).toBe(false);
    expect(sameSources([], [])).toBe(true);
  });
});
