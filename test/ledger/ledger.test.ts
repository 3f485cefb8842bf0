import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger, LedgerError } from "../../src/ledger/ledger.ts";
import { SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { call, event, observation } from "../helpers/events.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ledger-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("Ledger", () => {
  it("creates a private state dir and ledger, versioned with user_version", () => {
    const state = join(dir, "state");
    const l = Ledger.open(state);
    l.close();
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(statSync(join(state, LEDGER_FILE)).mode & 0o777).toBe(0o600);
    const db = new Database(join(state, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
  });

  it("conflict-skips events and calls already seen; checkpoints move with them", () => {
    const l = Ledger.open(dir);
    const e1 = event("a", { toolCallCount: 2 });
    const calls = [call("c1", e1.dedupKey, 2), call("c2", e1.dedupKey, 2)];
    expect(l.commit(observation([e1], calls, 100))).toEqual({ eventsAdded: 1, callsAdded: 2 });
    expect(l.commit(observation([e1, event("b")], calls, 200))).toEqual({ eventsAdded: 1, callsAdded: 0 });
    expect(l.getCheckpoint("/s/a/a.messages.json")?.size).toBe(200);
    expect(l.counts()).toEqual({ events: 2, calls: 2, sources: 1 });
    l.close();
  });

  it("keeps series totals equal to the events they sum", () => {
    const l = Ledger.open(dir);
    l.commit(observation([event("a"), event("b", { model: "m2", input: 7 }), event("c")]));
    l.commit(observation([event("c"), event("d", { agent: "subagent", dedupKey: "cline|s1|subagent|d" })]));
    const series = l.usageSeries();
    expect(series).toHaveLength(3);
    const m1 = series.find((s) => s.model === "m1" && s.agent === "lead");
    expect(m1).toMatchObject({ input: 200, output: 20, cacheRead: 100, cacheWrite: 10, events: 2 });
    const all = l.report.groupedEvents([])[0];
    const sum = series.reduce((a, s) => a + s.input, 0);
    expect(sum).toBe(all?.input);
    l.close();
  });

  it("gives each tool call 1/n of its message's components", () => {
    const l = Ledger.open(dir);
    const e = event("a", { input: 99, output: 9, cacheRead: 30, cacheWrite: 3, toolCallCount: 3 });
    const calls = [
      call("c1", e.dedupKey, 3),
      call("c2", e.dedupKey, 3, { toolName: "read_files" }),
      call("c3", e.dedupKey, 3),
      call("c4", "", 1, { toolName: "editor" }),
    ];
    l.commit(observation([e], calls));
    const tools = l.toolSeries();
    const run = tools.find((t) => t.toolName === "run_commands");
    expect(run).toMatchObject({
      calls: 2,
      input: 66,
      output: 6,
      cacheRead: 20,
      cacheWrite: 2,
      usageKnown: true,
    });
    const ed = tools.find((t) => t.toolName === "editor");
    expect(ed).toMatchObject({ calls: 1, input: 0, usageKnown: false });
    const sumInput = tools.reduce((a, t) => a + t.input, 0);
    expect(sumInput).toBeCloseTo(99, 9);
    l.close();
  });

  it("joins a call to an event committed in an earlier transaction", () => {
    const l = Ledger.open(dir);
    const e = event("a", { toolCallCount: 1 });
    l.commit(observation([e]));
    l.commit(observation([], [call("c1", e.dedupKey, 1)]));
    expect(l.toolSeries()[0]).toMatchObject({ input: 100, usageKnown: true });
    l.close();
  });

  it("refuses a second writer with a message naming the state dir", () => {
    const l = Ledger.open(dir);
    try {
      expect(() => Ledger.open(dir)).toThrowError(
        /another cline-otel process \(pid \d+\) is using the ledger/,
      );
      const ro = Ledger.open(dir, { readOnly: true });
      expect(ro.counts().events).toBe(0);
      ro.close();
    } finally {
      l.close();
    }
    Ledger.open(dir).close();
  });

  it("reports a corrupt ledger and never resets it", () => {
    const path = join(dir, LEDGER_FILE);
    writeFileSync(path, Buffer.alloc(8192, 0x41));
    const before = readFileSync(path);
    let err: unknown;
    try {
      Ledger.open(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).code).toBe("corrupt");
    expect((err as Error).message).toContain(path);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("refuses a ledger from a newer cline-otel", () => {
    Ledger.open(dir).close();
    const db = new Database(join(dir, LEDGER_FILE));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => Ledger.open(dir)).toThrowError(/newer than this cline-otel/);
  });

  it("persists the instance id and stream start across reopen", () => {
    const a = Ledger.open(dir, { now: () => 1_000 });
    const id = a.instanceId;
    a.close();
    const b = Ledger.open(dir, { now: () => 999_999 });
    expect(b.instanceId).toBe(id);
    expect(b.streamStartNs).toBe(1_000_000_000n);
    b.close();
  });

  it("rejects rows whose components do not sum to the total (schema CHECK)", () => {
    const l = Ledger.open(dir);
    expect(() => l.commit(observation([event("x", { total: 1 })]))).toThrow();
    expect(l.counts().events).toBe(0);
    expect(l.getCheckpoint("/s/a/a.messages.json")).toBeUndefined();
    l.close();
  });

  it("delta queries aggregate events after a watermark", () => {
    const l = Ledger.open(dir);
    l.commit(observation([event("a"), event("b")]));
    const { event: w } = l.maxIds();
    l.commit(observation([event("c", { input: 1 })]));
    const d = l.usageDelta(w, l.maxIds().event);
    expect(d).toHaveLength(1);
    expect(d[0]).toMatchObject({ input: 1, events: 1 });
    l.putExportState({
      exporter: "otlp",
      eventWatermark: 3,
      callWatermark: 0,
      captureWatermark: 0,
      windowStartNs: 5n,
      lastSuccessMs: 9,
    });
    expect(l.getExportState("otlp")).toMatchObject({
      eventWatermark: 3,
      windowStartNs: 5n,
      lastSuccessMs: 9,
    });
    l.close();
  });
});

describe("read-only opens", () => {
  it("a ledger still being created gives a clear LedgerError, not a raw SQLite error", () => {
    const d = mkdtempSync(join(tmpdir(), "ro-ledger-"));
    try {
      new Database(join(d, LEDGER_FILE)).close();
      expect(() => Ledger.open(d, { readOnly: true })).toThrowError(/still being created/);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
