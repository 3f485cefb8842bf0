/**
 * A whole-file rewrite through a temp file and a rename (the legacy core's ui_messages.json, 2-4
 * times per request) re-reads only that source: no discovery while it names a known source that
 * still exists; a rename away (or onto a name no discovery listed) still discovers again.
 */
import { mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import type { TaskRoot } from "../../src/adapter/cline-tasks/types.ts";
import { CollectorLoop } from "../../src/collector/loop.ts";
import { needsDiscovery } from "../../src/collector/scope.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { silentLogger } from "../../src/util/log.ts";
import { settledRequests, writeHistory, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { countingAdapter } from "./counting.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(what: string, cond: () => boolean, ms = 3000): Promise<void> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
}

describe("needsDiscovery", () => {
  it("only when asked for, or when a renamed known source is gone", () => {
    const here = (p: string) => p !== "/gone";
    expect(needsDiscovery({ rediscover: true, renamed: new Set() }, here)).toBe(true);
    expect(needsDiscovery({ rediscover: false, renamed: new Set() }, here)).toBe(false);
    expect(needsDiscovery({ rediscover: false, renamed: new Set(["/a", "/b"]) }, here)).toBe(false);
    expect(needsDiscovery({ rediscover: false, renamed: new Set(["/a", "/gone"]) }, here)).toBe(true);
  });
});

/** The task adapter over one root, counting discoveries and the sources it was asked about. */
function watchedTasks(renamesRediscover = false, historyOf = (_ids: readonly string[]) => [] as string[]) {
  const work = mkdtempSync(join(tmpdir(), "loop-rename-"));
  cleanup.push(() => rmSync(work, { recursive: true, force: true }));
  const data = join(work, "data");
  const ids = Array.from({ length: 6 }, (_, i) => String(1_796_000_000_000 + i));
  for (const id of ids) writeTask(data, id, settledRequests(1));
  writeHistory(
    data,
    historyOf(ids).map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
  );
  const root: TaskRoot = { path: data, client: "cli", product: "test", foundBy: "test" };
  const inner = createClineTasksAdapter([root]);
  const { adapter, n } = countingAdapter(inner);
  const ledger = Ledger.open(join(work, "state"));
  const plans = (inner.watchPlans ?? []).map((p) => ({ ...p, renamesRediscover }));
  const loop = new CollectorLoop(adapter, ledger, {
    pollIntervalMs: 600_000,
    sweepIntervalMs: 600_000,
    logger: silentLogger,
    watch: { plans },
  });
  cleanup.push(() => ledger.close());
  cleanup.push(() => loop.stop());
  const doc = (id: string) => join(data, "tasks", id, "ui_messages.json");
  return { data, ids, n, ledger, loop, doc };
}

async function settled(loop: CollectorLoop): Promise<void> {
  await until("first passes", () => loop.passCount >= 1);
  await loop.idle();
  await sleep(200);
  await loop.idle();
}

describe("CollectorLoop: a rename onto a known source", () => {
  it("re-reads that source only (new inode in its checkpoint); a rename away discovers again", async () => {
    const t = watchedTasks();
    t.loop.start();
    await settled(t.loop);
    expect(t.ledger.counts().events).toBe(t.ids.length);
    t.n.discovers = 0;
    t.n.looked.length = 0;
    const id = t.ids[2] as string;
    const before = t.ledger.allCheckpoints().get(t.doc(id));
    writeTask(t.data, id, settledRequests(2));
    await until("the rewrite's request", () => t.ledger.counts().events === t.ids.length + 1);
    await t.loop.idle();
    expect(t.n.discovers).toBe(0);
    expect(new Set(t.n.looked)).toEqual(new Set([t.doc(id)]));
    const after = t.ledger.allCheckpoints().get(t.doc(id));
    expect(after?.ino).toBe(statSync(t.doc(id)).ino);
    expect(after?.ino).not.toBe(before?.ino);

    // Renamed away (the task deleted through a rename): the set of sources changed.
    const gone = t.ids[4] as string;
    renameSync(t.doc(gone), `${t.doc(gone)}.bak`);
    await until("a discovery", () => t.n.discovers === 1);
    await t.loop.idle();
    expect(t.ledger.allCheckpoints().has(t.doc(gone))).toBe(false);

    // A name no discovery listed: a new source, found by discovering again.
    writeTask(t.data, "1796000000099", settledRequests(1));
    await until("the new task's request", () => t.ledger.counts().events === t.ids.length + 2);
    expect(t.n.discovers).toBe(2);
  });

  it("a sweep that finds the same sources prunes nothing; one that finds fewer prunes the gone one", async () => {
    const t = watchedTasks();
    const prunes: number[] = [];
    const prune = t.ledger.pruneCheckpoints.bind(t.ledger);
    t.ledger.pruneCheckpoints = (adapter, live, keepUnder) => {
      prunes.push(live.size);
      return prune(adapter, live, keepUnder);
    };
    t.loop.start();
    await settled(t.loop);
    expect(prunes).toEqual([t.ids.length]);
    // The sweep (asked for here instead of waited for): the same sources, no live-path set built.
    t.loop.requestPass();
    await until("the sweep", () => t.loop.passCount >= 2);
    await t.loop.idle();
    expect(t.n.discovers).toBeGreaterThanOrEqual(2);
    expect(prunes).toEqual([t.ids.length]);
    // A task gone: the sweep after it lists one source fewer and prunes its checkpoint.
    const gone = t.ids[3] as string;
    rmSync(join(t.data, "tasks", gone), { recursive: true });
    t.loop.requestPass();
    await until("the next sweep", () => t.loop.passCount >= 3);
    await t.loop.idle();
    expect(prunes.at(-1)).toBe(t.ids.length - 1);
    expect(t.ledger.allCheckpoints().has(t.doc(gone))).toBe(false);
    expect(t.ledger.allCheckpoints().size).toBe(t.ids.length - 1);
  });

  it("an adapter whose plan asks for it (renamesRediscover) discovers on every rename", async () => {
    const t = watchedTasks(true);
    t.loop.start();
    await settled(t.loop);
    t.n.discovers = 0;
    writeTask(t.data, t.ids[1] as string, settledRequests(2));
    await until("the rewrite's request", () => t.ledger.counts().events === t.ids.length + 1);
    await t.loop.idle();
    expect(t.n.discovers).toBe(1);
  });
});

describe("CollectorLoop: taskHistory.json rewritten (with every request)", () => {
  it("asks for no discovery once every listed task has its entry; does while one has none", async () => {
    const t = watchedTasks(false, (ids) => ids.slice(1));
    t.loop.start();
    await settled(t.loop);
    t.n.discovers = 0;
    // The first task has no entry yet: its cwd may come with the next rewrite.
    writeHistory(
      t.data,
      t.ids.map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
    );
    await until("a discovery", () => t.n.discovers === 1);
    await t.loop.idle();
    const passes = t.loop.passCount;
    // Now every task has one: a rewrite (new totals) needs nothing of discovery.
    writeHistory(
      t.data,
      t.ids.map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}`, tokensIn: 5 })),
    );
    await sleep(400);
    await t.loop.idle();
    expect(t.n.discovers).toBe(1);
    expect(t.loop.passCount).toBe(passes);
    // A new task still brings its discovery.
    writeHistory(
      t.data,
      [...t.ids, "1796000000077"].map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
    );
    writeTask(t.data, "1796000000077", settledRequests(1));
    await until("the new task's request", () => t.ledger.counts().events === t.ids.length + 1);
    expect(t.n.discovers).toBe(2);
  });
});
