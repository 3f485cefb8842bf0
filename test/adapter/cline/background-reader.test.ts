import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BackgroundReader,
  hasIdleCore,
  IDLE_CORE_MARGIN,
  MIN_WORKER_CORES,
  useWorker,
  WORKER_IDLE_MS,
  WORKER_MIN_IN_FLIGHT,
  workerUrl,
} from "../../../src/adapter/cline/background-reader.ts";
import { collectDocument } from "../../../src/adapter/cline/document.ts";
import { collectIfChanged } from "../../../src/adapter/fingerprint.ts";
import type { Observation, Source } from "../../../src/adapter/types.ts";
import { type MsgSpec, makeTree, type Tree } from "../../helpers/cline-tree.ts";

const M = (i: number, o: number) => ({
  inputTokens: i,
  outputTokens: o,
  cacheReadTokens: 2,
  cacheWriteTokens: 1,
});
let dir: string;
let tree: Tree;
let sources: Source[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "bgreader-"));
  const ids = Array.from({ length: 24 }, (_, i) => `17960000000${String(i).padStart(2, "0")}_s${i}`);
  tree = makeTree(
    join(dir, "home"),
    ids.map((id, i) => ({
      id,
      cwd: `/p${i % 3}`,
      messages: [
        { id: "m1", metrics: M(10 + i, 1), tools: ["read_file", "execute_command"] },
        { id: "m2", metrics: M(20, 2 + i) },
      ],
      subagents: (i % 5 === 0 ? { agent_x: [{ id: "a1", metrics: M(3, 3) }] } : {}) as Record<
        string,
        MsgSpec[]
      >,
    })),
  );
  const doc = (id: string) => join(tree.sessionsDir, id, `${id}.messages.json`);
  // A torn document and a vanished one: their failures must be the same from the worker.
  writeFileSync(doc(ids[3] as string), '{"version":1,"messages":[{"id":"m1","role":"assist');
  rmSync(doc(ids[4] as string));
  sources = ids.map((id) => ({
    adapterId: "cline",
    path: doc(id),
    origin: "index",
    hint: { sessionId: id, rootSessionId: id, project: "/hint" },
  }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The machine's load decides in production (hasIdleCore); here each test decides.
let spare = true;
beforeAll(() => {
  vi.spyOn(BackgroundReader.prototype, "spareCore").mockImplementation(() => spare);
});
afterAll(() => vi.restoreAllMocks());

const inThread = (s: Source) => collectIfChanged(s, undefined, collectDocument);

describe("useWorker", () => {
  it("starts a worker only with many reads in flight, keeps it while it runs, never once disabled", () => {
    expect(useWorker(1, false, false)).toBe(false);
    expect(useWorker(WORKER_MIN_IN_FLIGHT - 1, false, false)).toBe(false);
    expect(useWorker(WORKER_MIN_IN_FLIGHT, false, false)).toBe(true);
    expect(useWorker(1, true, false)).toBe(true);
    expect(useWorker(WORKER_MIN_IN_FLIGHT, true, true)).toBe(false);
  });

  it("wants MIN_WORKER_CORES cores or more, the others' load leaving two of them (ours and the worker's) within IDLE_CORE_MARGIN", () => {
    expect(MIN_WORKER_CORES).toBe(4);
    expect(hasIdleCore(1, 0)).toBe(false);
    // Two or three cores, however idle: slower with the worker than without (measured on 2).
    expect(hasIdleCore(2, 0)).toBe(false);
    expect(hasIdleCore(3, 0)).toBe(false);
    expect(hasIdleCore(4, 0)).toBe(true);
    // Four cores: the others' load must leave two (main thread and worker), within the margin.
    expect(hasIdleCore(4, 2 + IDLE_CORE_MARGIN)).toBe(true);
    expect(hasIdleCore(4, 2 + IDLE_CORE_MARGIN + 0.01)).toBe(false);
    expect(hasIdleCore(8, 4)).toBe(true);
    expect(hasIdleCore(8, 6.5)).toBe(true);
    expect(hasIdleCore(8, 6.6)).toBe(false);
  });

  it("finds the worker module next to itself, as .ts from the sources and .js when built", () => {
    expect(workerUrl("file:///x/dist/adapter/cline/background-reader.js").href).toBe(
      "file:///x/dist/adapter/cline/document-worker.js",
    );
    expect(workerUrl().pathname.endsWith("/src/adapter/cline/document-worker.ts")).toBe(true);
  });
});

describe("BackgroundReader", () => {
  it("reads in the worker exactly what the main thread reads: events, calls, signals, failures", async () => {
    const reader = new BackgroundReader({ minInFlight: 1 });
    try {
      const got = await Promise.all(sources.map((s) => reader.collect(s, undefined)));
      const want = await Promise.all(sources.map(inThread));
      expect(got).toEqual(want);
      // The same source objects come back (the pass and the ledger keep using them).
      for (const [k, o] of got.entries()) expect(o.source).toBe(sources[k]);
      expect(
        got
          .filter((o) => o.status === "failed")
          .map((o) => (o as { problem: { code: string } }).problem.code),
      ).toEqual(["partial-document", "vanished"]);
      expect(reader.stats).toMatchObject({
        inWorker: sources.length,
        inThread: 0,
        started: 1,
        disabled: undefined,
      });
    } finally {
      await reader.close();
    }
  });

  it("reads on the main thread while few reads are in flight (an ordinary pass never starts it)", async () => {
    const reader = new BackgroundReader();
    for (const s of sources) await reader.collect(s, undefined);
    expect(reader.stats).toMatchObject({ inWorker: 0, inThread: sources.length, started: 0 });
    expect(reader.running).toBe(false);
  });

  it("on a busy machine (no core to spare) reads on the main thread, with the same results", async () => {
    spare = false;
    try {
      const reader = new BackgroundReader({ minInFlight: 1 });
      const got = await Promise.all(sources.map((s) => reader.collect(s, undefined)));
      expect(got).toEqual(await Promise.all(sources.map(inThread)));
      expect(reader.stats).toMatchObject({
        inWorker: 0,
        inThread: sources.length,
        started: 0,
        disabled: undefined,
      });
      expect(reader.stats.gated).toBeGreaterThan(0);
      expect(reader.running).toBe(false);
    } finally {
      spare = true;
    }
  });

  it("falls back to the main thread, with the same results, when the worker cannot load", async () => {
    const reader = new BackgroundReader({
      minInFlight: 1,
      url: pathToFileURL(join(dir, "no-such-worker.js")),
    });
    const got = await Promise.all(sources.map((s) => reader.collect(s, undefined)));
    expect(got).toEqual(await Promise.all(sources.map(inThread)));
    expect(reader.stats.disabled).toMatch(/document worker/);
    expect(reader.stats.inWorker).toBe(0);
    expect(reader.running).toBe(false);
    // Disabled for good: later reads stay on this thread.
    await Promise.all(sources.map((s) => reader.collect(s, undefined)));
    expect(reader.stats.started).toBe(1);
    // Said once (the adapter reports it as a `reader-fallback` problem of its next pass).
    expect(reader.takeDisabledNotice()).toMatch(/document worker/);
    expect(reader.takeDisabledNotice()).toBeUndefined();
  });

  it("a reader whose worker is fine has nothing to report", async () => {
    const reader = new BackgroundReader({ minInFlight: 1 });
    await Promise.all(sources.map((s) => reader.collect(s, undefined)));
    expect(reader.takeDisabledNotice()).toBeUndefined();
    await reader.close();
  });

  it("ends the worker once no read has been in flight for WORKER_IDLE_MS, and starts a new one later", async () => {
    const reader = new BackgroundReader({ minInFlight: 1 });
    await Promise.all(sources.slice(0, 4).map((s) => reader.collect(s, undefined)));
    expect(reader.running).toBe(true);
    await new Promise((r) => setTimeout(r, WORKER_IDLE_MS + 300));
    expect(reader.running).toBe(false);
    const again: Observation[] = await Promise.all(
      sources.slice(0, 4).map((s) => reader.collect(s, undefined)),
    );
    expect(again).toEqual(await Promise.all(sources.slice(0, 4).map(inThread)));
    expect(reader.stats.started).toBe(2);
    await reader.close();
    expect(reader.running).toBe(false);
  });

  it("close() with reads in flight finishes them on this thread", async () => {
    const reader = new BackgroundReader({ minInFlight: 1 });
    const p = Promise.all(sources.map((s) => reader.collect(s, undefined)));
    await reader.close();
    expect(await p).toEqual(await Promise.all(sources.map(inThread)));
  });
});
