/**
 * The safety sweep is what finds a change whose watch event was lost. Task discovery hands on
 * its last sources while the `tasks/` listing and taskHistory.json are unchanged (stats only):
 * here the loop has no watch at all, so only the sweep can find each change, made after a sweep
 * that was held.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import type { TaskRoot } from "../../src/adapter/cline-tasks/types.ts";
import { LISTING_CONFIRM_MS } from "../../src/adapter/listings.ts";
import type { Adapter, Source } from "../../src/adapter/types.ts";
import { CollectorLoop } from "../../src/collector/loop.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { silentLogger } from "../../src/util/log.ts";
import { settledRequests, writeHistory, writeTask } from "../adapter/cline-tasks/helpers.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(5);
  }
}

describe("the sweep finds every change made without an event (task format)", () => {
  it("a rewrite in place, a rename onto, messages in a listed folder, a task deleted, a task added", async () => {
    const work = mkdtempSync(join(tmpdir(), "loop-sweep-"));
    cleanup.push(() => rmSync(work, { recursive: true, force: true }));
    const data = join(work, "data");
    const ids = Array.from({ length: 6 }, (_, i) => String(1_796_000_000_000 + i));
    for (const id of ids) writeTask(data, id, settledRequests(1));
    const waiting = "1796000000050";
    mkdirSync(join(data, "tasks", waiting));
    writeHistory(
      data,
      [...ids, waiting].map((id) => ({ id, cwdOnTaskInitialization: `/w/${id}` })),
    );
    const doc = (id: string) => join(data, "tasks", id, "ui_messages.json");
    const root: TaskRoot = { path: data, client: "cli", product: "test", foundBy: "test" };
    const inner = createClineTasksAdapter([root]);
    // Each discovery's source list, to see that the sweeps before the changes were held.
    const lists: (readonly Source[])[] = [];
    const adapter: Adapter = {
      ...inner,
      discover: async () => {
        const d = await inner.discover();
        lists.push(d.sources);
        return d;
      },
    };
    const ledger = Ledger.open(join(work, "state"));
    cleanup.push(() => ledger.close());
    // No watch: nothing but the sweep (asked for below) looks at the tasks.
    const loop = new CollectorLoop(adapter, ledger, {
      pollIntervalMs: 600_000,
      sweepIntervalMs: 600_000,
      logger: silentLogger,
    });
    cleanup.push(() => loop.stop());
    const sweep = async () => {
      const n = loop.passCount;
      loop.requestPass();
      await until("the sweep", () => loop.passCount > n);
      await loop.idle();
    };
    loop.start();
    await until("the first pass", () => loop.passCount >= 1);
    await loop.idle();
    expect(ledger.counts().events).toBe(ids.length);
    // The `tasks/` listing is held once confirmed; the sweep after the one that holds it is held.
    await sleep(LISTING_CONFIRM_MS + 100);
    await sweep();
    await sweep();
    expect(lists.at(-1)).toBe(lists.at(-2));

    const inPlace = ids[0] as string;
    const ino = statSync(doc(inPlace)).ino;
    writeFileSync(doc(inPlace), JSON.stringify(settledRequests(2)));
    expect(statSync(doc(inPlace)).ino).toBe(ino);
    writeTask(data, ids[1] as string, settledRequests(3));
    await sweep();
    expect(ledger.counts().events).toBe(ids.length + 1 + 2);
    expect(ledger.allCheckpoints().get(doc(ids[1] as string))?.ino).toBe(statSync(doc(ids[1] as string)).ino);
    // Each change alone after a held sweep (one could make the sweep a full discovery for others).
    await sweep();
    expect(lists.at(-1)).toBe(lists.at(-2));
    writeTask(data, waiting, settledRequests(1));
    await sweep();
    expect(ledger.counts().events).toBe(ids.length + 1 + 2 + 1);

    // Held again, then a task deleted and another added.
    await sweep();
    expect(lists.at(-1)).toBe(lists.at(-2));
    const gone = ids[2] as string;
    rmSync(join(data, "tasks", gone), { recursive: true });
    writeTask(data, "1796000000099", settledRequests(2));
    await sweep();
    expect(ledger.allCheckpoints().has(doc(gone))).toBe(false);
    expect(ledger.allCheckpoints().has(doc("1796000000099"))).toBe(true);
    expect(ledger.counts().events).toBe(ids.length + 4 + 2);
  });
});
