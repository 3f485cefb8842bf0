import { afterEach, describe, expect, it } from "vitest";
import { computeCost, type Price } from "../../src/cost/index.ts";
import { ALLOWED_ATTRIBUTES } from "../../src/export/attributes.ts";
import {
  isLive,
  liveSeries,
  METRICS,
  type MetricId,
  NO_PRICES,
  type PriceLookup,
  type SeriesPoint,
  type TranslateOptions,
  translate,
} from "../../src/export/translate.ts";
import type { ToolSeriesRow, UsageSeriesRow } from "../../src/ledger/ledger.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";

const PRICE: Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const priced: PriceLookup = (_p, model) => (model === "m1" ? PRICE : undefined);
const OPTS: TranslateOptions = { project: "path", includeSessionId: true, priceOf: priced };

function usageRow(over: Partial<UsageSeriesRow> = {}): UsageSeriesRow {
  return {
    sessionId: "s1",
    agent: "lead",
    project: "/work/app",
    model: "m1",
    provider: "p1",
    client: "",
    input: 100,
    output: 10,
    cacheRead: 50,
    cacheWrite: 5,
    events: 2,
    firstMs: 1,
    updatedMs: 10,
    lastEventMs: 8,
    ...over,
  };
}

function toolRow(over: Partial<ToolSeriesRow> = {}): ToolSeriesRow {
  return {
    sessionId: "s1",
    agent: "lead",
    project: "/work/app",
    model: "m1",
    provider: "p1",
    client: "",
    toolName: "run_commands",
    usageKnown: true,
    calls: 1,
    input: 50,
    output: 5,
    cacheRead: 25,
    cacheWrite: 2.5,
    firstMs: 1,
    updatedMs: 10,
    lastEventMs: 8,
    ...over,
  };
}

/** metric -> "attr=value,..." -> value, for compact expectations. */
function flat(points: ReadonlyMap<MetricId, readonly SeriesPoint[]>): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [id, series] of points) {
    const m: Record<string, number> = {};
    for (const p of series) {
      const k = Object.entries(p.attributes)
        .filter(([key]) =>
          [
            "type",
            "gen_ai.tool.name",
            "cline.usage.known",
            "cline.tool.outcome",
            "session.id",
            "cline.project",
          ].includes(key),
        )
        .map(([key, v]) => `${key}=${v}`)
        .join(",");
      m[k] = p.value;
    }
    out[METRICS[id].name] = m;
  }
  return out;
}

let t: TempLedger | undefined;
afterEach(() => {
  t?.dispose();
  t = undefined;
});

describe("translate: usage series", () => {
  it("emits the four token types, the request count and the cost of a priced series", () => {
    const out = flat(translate([usageRow()], [], OPTS));
    const s = "session.id=s1,cline.project=/work/app";
    expect(out["cline.token.usage"]).toEqual({
      [`${s},type=input`]: 100,
      [`${s},type=output`]: 10,
      [`${s},type=cache_read`]: 50,
      [`${s},type=cache_write`]: 5,
    });
    expect(out["cline.requests"]).toEqual({ [s]: 2 });
    expect(out["cline.cost.usage"]?.[s]).toBeCloseTo((100 * 3 + 10 * 15 + 50 * 0.3 + 5 * 3.75) / 1e6, 15);
    expect(out["cline.requests.unpriced"]).toBeUndefined();
  });

  it("counts an unpriced model as unpriced requests and emits no cost (unknown, never zero)", () => {
    const out = flat(translate([usageRow({ model: "nope", events: 3 })], [], OPTS));
    expect(out["cline.cost.usage"]).toBeUndefined();
    expect(out["cline.requests.unpriced"]).toEqual({ "session.id=s1,cline.project=/work/app": 3 });
  });

  it("with NO_PRICES every request is unpriced", () => {
    const out = flat(translate([usageRow()], [toolRow()], { ...OPTS, priceOf: NO_PRICES }));
    expect(out["cline.cost.usage"]).toBeUndefined();
    expect(out["cline.tool.cost.usage"]).toBeUndefined();
    expect(Object.values(out["cline.requests.unpriced"] ?? {})).toEqual([2]);
  });

  it.each([
    ["path", "/work/app"],
    ["basename", "app"],
    ["none", undefined],
  ] as const)("project mode %s renders cline.project as %s", (project, expected) => {
    const pts = translate([usageRow()], [], { ...OPTS, project }).get("requests") ?? [];
    expect(pts[0]?.attributes["cline.project"]).toBe(expected);
    expect("cline.project" in (pts[0]?.attributes ?? {})).toBe(expected !== undefined);
  });

  it("project mode hash leaves no path in any attribute", () => {
    const points = translate([usageRow({ project: "/home/alice/topsecret" })], [toolRow()], {
      ...OPTS,
      project: "hash",
    });
    for (const series of points.values()) {
      for (const p of series) {
        expect(p.attributes["cline.project"]).toMatch(/^[0-9a-f]{16}$/);
        expect(JSON.stringify(p.attributes)).not.toContain("topsecret");
      }
    }
  });

  it("without session.id, series that coincide are summed (values, latest update, newest event)", () => {
    const rows = [
      usageRow({ sessionId: "a", input: 1, events: 1, updatedMs: 5, lastEventMs: 4 }),
      usageRow({ sessionId: "b", input: 2, events: 4, updatedMs: 9, lastEventMs: 3 }),
      usageRow({ sessionId: "c", input: 4, events: 1, model: "other", updatedMs: 7, lastEventMs: 6 }),
    ];
    const points = translate(rows, [], { ...OPTS, includeSessionId: false });
    const req = points.get("requests") ?? [];
    expect(
      req.map((p) => [p.attributes["gen_ai.request.model"], p.value, p.updatedMs, p.lastEventMs]),
    ).toEqual([
      ["m1", 5, 9, 4],
      ["other", 1, 7, 6],
    ]);
    for (const p of req) expect(p.attributes).not.toHaveProperty("session.id");
    const input = (points.get("tokenUsage") ?? []).filter((p) => p.attributes.type === "input");
    expect(input.map((p) => p.value)).toEqual([3, 4]);
    // Cost is linear: the summed series costs what its rows cost.
    const cost = points.get("costUsage") ?? [];
    expect(cost).toHaveLength(1);
    expect(cost[0]?.value).toBeCloseTo(
      computeCost(rows[0] as UsageSeriesRow, PRICE) + computeCost(rows[1] as UsageSeriesRow, PRICE),
      15,
    );
  });
});

describe("translate: tool series and fractional attribution (through a real ledger)", () => {
  it("1, 2 and 3 calls in a message and a call without metrics", () => {
    t = tempLedger();
    const a = event("a", { input: 90, output: 30, cacheRead: 60, cacheWrite: 0, toolCallCount: 1 });
    const b = event("b", { input: 100, output: 10, cacheRead: 0, cacheWrite: 40, toolCallCount: 2 });
    const c = event("c", { input: 300, output: 60, cacheRead: 90, cacheWrite: 30, toolCallCount: 3 });
    const calls = [
      call("a1", a.dedupKey, 1, { toolName: "read_files" }),
      call("b1", b.dedupKey, 2, { toolName: "read_files" }),
      call("b2", b.dedupKey, 2, { toolName: "editor" }),
      call("c1", c.dedupKey, 3, { toolName: "run_commands" }),
      call("c2", c.dedupKey, 3, { toolName: "run_commands" }),
      call("c3", c.dedupKey, 3, { toolName: "editor" }),
      // A tool_use in a message without metrics: the call is a fact, its cost is unknown.
      call("d1", "", 1, { toolName: "editor" }),
    ];
    // Results in the same read (final at once): c2 failed, c3's is_error is not a boolean, and
    // b2 has none yet (not final: not counted in cline.tool.calls, its tokens are).
    const results = calls
      .filter((x) => !x.callKey.endsWith("b2"))
      .map((x) => result(x, x.callKey.endsWith("c2") ? true : x.callKey.endsWith("c3") ? null : false));
    t.ledger.commit(observation([a, b, c], calls, 100, undefined, docSignals(results)));
    const outcomes = t.ledger.signals?.toolOutcomes.series() ?? [];
    const points = translate(t.ledger.usageSeries(), t.ledger.toolSeries(), OPTS, outcomes);
    const out = flat(points);
    const s = "session.id=s1,cline.project=/work/ws";

    expect(out["cline.tool.calls"]).toEqual({
      [`${s},gen_ai.tool.name=read_files,cline.usage.known=true,cline.tool.outcome=success`]: 2,
      [`${s},gen_ai.tool.name=run_commands,cline.usage.known=true,cline.tool.outcome=success`]: 1,
      [`${s},gen_ai.tool.name=run_commands,cline.usage.known=true,cline.tool.outcome=failure`]: 1,
      [`${s},gen_ai.tool.name=editor,cline.usage.known=true,cline.tool.outcome=unknown`]: 1,
      [`${s},gen_ai.tool.name=editor,cline.usage.known=false,cline.tool.outcome=success`]: 1,
    });
    // Without the outcome rows there is no cline.tool.calls at all (it never counts a call when seen).
    expect(
      flat(translate(t.ledger.usageSeries(), t.ledger.toolSeries(), OPTS))["cline.tool.calls"],
    ).toBeUndefined();
    const tok = out["cline.tool.token.usage"] ?? {};
    // read_files: all of a + half of b; editor: half of b + a third of c; run_commands: two thirds of c.
    expect(tok[`${s},gen_ai.tool.name=read_files,type=input`]).toBeCloseTo(90 + 50, 9);
    expect(tok[`${s},gen_ai.tool.name=read_files,type=cache_write`]).toBeCloseTo(20, 9);
    expect(tok[`${s},gen_ai.tool.name=editor,type=input`]).toBeCloseTo(50 + 100, 9);
    expect(tok[`${s},gen_ai.tool.name=editor,type=output`]).toBeCloseTo(5 + 20, 9);
    expect(tok[`${s},gen_ai.tool.name=run_commands,type=input`]).toBeCloseTo(200, 9);
    expect(tok[`${s},gen_ai.tool.name=run_commands,type=cache_read`]).toBeCloseTo(60, 9);
    // The call without metrics adds no tokens (its known=false series has no token points).
    expect(Object.keys(tok)).toHaveLength(3 * 4);
    // Every token of a message with calls is attributed exactly once across its calls.
    for (const type of ["input", "output", "cache_read", "cache_write"]) {
      const attributed = Object.entries(tok)
        .filter(([k]) => k.endsWith(`type=${type}`))
        .reduce((x, [, v]) => x + v, 0);
      const part = (e: typeof a): number =>
        type === "input"
          ? e.input
          : type === "output"
            ? e.output
            : type === "cache_read"
              ? e.cacheRead
              : e.cacheWrite;
      const total = [a, b, c].reduce((x, e) => x + part(e), 0);
      expect(attributed).toBeCloseTo(total, 9);
    }
    // Tool cost = cost of the attributed shares; the unknown call has none.
    const toolCost = out["cline.tool.cost.usage"] ?? {};
    expect(Object.keys(toolCost)).toHaveLength(3);
    const sumToolCost = Object.values(toolCost).reduce((x, v) => x + v, 0);
    const eventsCost = [a, b, c].reduce((x, e) => x + computeCost(e, PRICE), 0);
    expect(sumToolCost).toBeCloseTo(eventsCost, 12);
  });
});

describe("allow-list of exported attributes", () => {
  it("no exported point carries a key outside the allow-list, whatever the rows hold", () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 20 });
    const extra = { sourcePath: "/secret/a.messages.json", prompt: "hello", messageId: "msg_1" };
    const usage = t.ledger.usageSeries().map((r) => ({ ...r, ...extra }));
    const tools = t.ledger.toolSeries().map((r) => ({ ...r, ...extra }));
    for (const project of ["path", "basename", "hash", "none"] as const) {
      for (const includeSessionId of [true, false]) {
        const points = translate(usage, tools, { project, includeSessionId, priceOf: priced });
        expect(points.size).toBeGreaterThan(0);
        for (const series of points.values()) {
          for (const p of series) {
            for (const key of Object.keys(p.attributes)) expect(ALLOWED_ATTRIBUTES.has(key)).toBe(true);
            expect(JSON.stringify(p.attributes)).not.toMatch(/secret|hello|msg_1/);
          }
        }
      }
    }
  });
});

describe("liveSeries (cumulative series TTL, by event time)", () => {
  const p = (updatedMs: number, lastEventMs: number): SeriesPoint => ({
    attributes: {},
    value: 1,
    updatedMs,
    lastEventMs,
  });
  it.each([
    // lastEventMs, updatedMs, now, ttl, deliveredBefore, kept
    [100, 100, 1000, 500, 2000, false], // no event within the TTL, delivered since: dropped
    [100, 100, 1000, 500, 50, true], // old events, never delivered since the update: kept
    [100, 100, 1000, 500, 100, true], // updated in the same ms as the delivering read: not known delivered
    [600, 600, 1000, 500, 2000, true], // an event within the TTL: kept
    [500, 500, 1000, 500, 2000, true], // exactly at the TTL edge: kept
    // A backfill: old events ingested just now. Delivered once, then dropped at once,
    // although the ingestion is recent (the old rule kept it for a whole TTL).
    [100, 950, 1000, 500, 900, true],
    [100, 950, 1000, 500, 960, false],
    // A recent event ingested long ago (a clock ahead of the collector): kept by event time.
    [900, 100, 1000, 500, 2000, true],
  ] as const)("event %d, updated %d, now %d, ttl %d, delivered before %d -> kept %s", (e, u, now, ttl, delivered, kept) => {
    expect(liveSeries([p(u, e)], now, ttl, delivered)).toHaveLength(kept ? 1 : 0);
    expect(isLive(p(u, e), now, ttl, delivered)).toBe(kept);
  });
});
