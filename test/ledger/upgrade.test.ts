import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DataPoint } from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolSeriesRow } from "../../src/ledger/ledger.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { harness, sumValues } from "../export/helpers/sdk.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";

/**
 * A tool call read before its message's metrics (Cline saved the tool_use block first) is
 * stored with usage unknown. When a later read adds the metrics, the SAME transaction that adds
 * the event gives the call its 1/n share and adds that share to the usage-known series. The
 * calls counter keeps the call where it was first counted: a counter never goes down.
 */
let dir: string;
let l: Ledger;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "upgrade-"));
  l = Ledger.open(dir);
});
afterEach(() => {
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const paid = event("m1", { input: 90, output: 30, cacheRead: 60, cacheWrite: 6, toolCallCount: 3 });
const early = [call("c1", "", 3), call("c2", "", 3, { toolName: "read_files" }), call("c3", "", 3)];
const late = early.map((c) => ({ ...c, usageKey: paid.dedupKey }));

const tokens = (rows: readonly ToolSeriesRow[]) =>
  rows.reduce(
    (a, r) => ({
      input: a.input + r.input,
      output: a.output + r.output,
      cacheRead: a.cacheRead + r.cacheRead,
      cacheWrite: a.cacheWrite + r.cacheWrite,
    }),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  );
const calls = (rows: readonly ToolSeriesRow[], known: boolean) =>
  rows.filter((r) => r.usageKnown === known).reduce((a, r) => a + r.calls, 0);

function firstCallsThenMetrics(): void {
  expect(l.commit(observation([], early, 100))).toEqual({ eventsAdded: 0, callsAdded: 3 });
  expect(l.commit(observation([paid], late, 200))).toEqual({
    eventsAdded: 1,
    callsAdded: 0,
    callsUpgraded: 3,
  });
}

describe("a tool call seen before its message's metrics", () => {
  it("is upgraded with its 1/n share in the commit that adds the event; report and series agree", () => {
    firstCallsThenMetrics();
    const series = l.toolSeries();
    // Counted once, where first counted; the tokens are exactly the message's.
    expect(calls(series, false)).toBe(3);
    expect(calls(series, true)).toBe(0);
    expect(tokens(series.filter((r) => !r.usageKnown))).toEqual({
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
    });
    expect(tokens(series)).toEqual({ input: 90, output: 30, cacheRead: 60, cacheWrite: 6 });
    const run = series.find((r) => r.usageKnown && r.toolName === "run_commands");
    expect(run).toMatchObject({ input: 60, output: 20, cacheRead: 40, cacheWrite: 4, calls: 0 });
    // The report reads the calls themselves: one call each, one paying event, the whole share.
    expect(l.report.groupedCalls([])[0]).toMatchObject({ input: 90, output: 30, events: 1, toolCalls: 3 });
    expect(l.counts()).toMatchObject({ events: 1, calls: 3 });
  });

  it("a re-read upgrades nothing twice, and a call first seen with its metrics is not an upgrade", () => {
    firstCallsThenMetrics();
    expect(l.commit(observation([paid], late, 300))).toEqual({ eventsAdded: 0, callsAdded: 0 });
    const e2 = event("m2", { input: 10, toolCallCount: 1 });
    expect(l.commit(observation([e2], [call("d1", e2.dedupKey, 1)], 400))).toEqual({
      eventsAdded: 1,
      callsAdded: 1,
    });
    expect(tokens(l.toolSeries()).input).toBe(100);
    expect(calls(l.toolSeries(), true)).toBe(1);
  });

  it("the upgrade is in the transaction that adds the event: a failed commit leaves the call unknown", () => {
    l.commit(observation([], early, 100));
    expect(() => l.commit(observation([paid, event("bad", { total: 1 })], late, 200))).toThrow();
    expect(tokens(l.toolSeries()).input).toBe(0);
    expect(l.counts().events).toBe(0);
    expect(l.commit(observation([paid], late, 200))).toMatchObject({ eventsAdded: 1, callsUpgraded: 3 });
    expect(tokens(l.toolSeries()).input).toBe(90);
  });

  it("delta windows carry each call once and its tokens once, however the two watermarks split", () => {
    l.commit(observation([], early, 100));
    const w1 = l.maxIds();
    l.commit(observation([paid], late, 200));
    const w2 = l.maxIds();
    expect(w2.call).toBe(w1.call); // the upgrade adds no call row
    const first = l.toolDelta({ after: 0, upTo: w1.call }, { after: 0, upTo: w1.event });
    const second = l.toolDelta({ after: w1.call, upTo: w2.call }, { after: w1.event, upTo: w2.event });
    const whole = l.toolDelta({ after: 0, upTo: w2.call }, { after: 0, upTo: w2.event });
    expect([calls(first, false), tokens(first).input]).toEqual([3, 0]);
    expect([calls(second, false) + calls(second, true), tokens(second).input]).toEqual([0, 90]);
    // One window over everything equals the running series.
    const strip = (rows: ToolSeriesRow[]) =>
      rows
        .map(({ firstMs: _f, updatedMs: _u, ...r }) => r)
        .sort((a, b) => `${a.toolName}${a.usageKnown}`.localeCompare(`${b.toolName}${b.usageKnown}`));
    const series = strip(l.toolSeries());
    expect(strip(whole)).toEqual(series);
    // The event window ahead of the call window (the calls window is capped): still once each.
    const tokensFirst = l.toolDelta({ after: 0, upTo: 0 }, { after: 0, upTo: w2.event });
    const callsLater = l.toolDelta({ after: 0, upTo: w2.call }, { after: w2.event, upTo: w2.event });
    expect([calls(tokensFirst, false), tokens(tokensFirst).input]).toEqual([0, 90]);
    expect([calls(callsLater, false), tokens(callsLater).input]).toEqual([3, 0]);
  });
});

describe("the exported values of an upgraded call", () => {
  // The calls' results are in the first read: they are final (counted by outcome) before their
  // message's metrics arrive, so they are counted with usage unknown.
  const earlyFinal = () => observation([], early, 100, undefined, docSignals(early.map((c) => result(c))));
  const sum = (pts: DataPoint<number>[], attr?: [string, string]) =>
    sumValues(pts.filter((p) => attr === undefined || p.attributes[attr[0]] === attr[1]) as never);

  it("cumulative: the tool token series gains the share, the calls counter never goes down", async () => {
    const h = harness(l);
    try {
      l.commit(earlyFinal());
      await h.flush();
      expect(sum(h.lastPoints("cline.tool.calls"), ["cline.usage.known", "false"])).toBe(3);
      expect(sum(h.lastPoints("cline.tool.token.usage"))).toBe(0);
      l.commit(observation([paid], late, 200));
      await h.flush();
      expect(sum(h.lastPoints("cline.tool.calls"), ["cline.usage.known", "false"])).toBe(3);
      expect(sum(h.lastPoints("cline.tool.calls"))).toBe(3);
      expect(sum(h.lastPoints("cline.tool.token.usage"), ["type", "input"])).toBeCloseTo(90, 9);
      expect(sum(h.lastPoints("cline.tool.token.usage"))).toBeCloseTo(186, 9);
    } finally {
      await h.shutdown();
    }
  });

  it("delta: the sum of every delivered window is the same as the cumulative totals", async () => {
    const h = harness(l, { temporality: "delta" });
    try {
      l.commit(earlyFinal());
      await h.flush();
      l.commit(observation([paid], late, 200));
      await h.flush();
      await h.flush(); // nothing new: nothing more
      expect(sum(h.allPoints("cline.tool.calls"))).toBe(3);
      expect(sum(h.allPoints("cline.tool.calls"), ["cline.usage.known", "false"])).toBe(3);
      expect(sum(h.allPoints("cline.tool.token.usage"), ["type", "input"])).toBeCloseTo(90, 9);
      expect(sum(h.allPoints("cline.tool.token.usage"))).toBeCloseTo(186, 9);
    } finally {
      await h.shutdown();
    }
  });
});
