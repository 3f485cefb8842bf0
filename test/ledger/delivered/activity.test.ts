/**
 * `activeTimeRows` (src/ledger/delivered/activity.ts): one row per type, hour, model, provider and
 * client, in the order each group is first met, keyed by its first gap; gaps before the covered end
 * skipped. Against a plain reference that keys every gap, for random timelines packed into columns
 * (the per-group open row must not change a row).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ActiveTimeline } from "../../../src/adapter/types.ts";
import { activeTimeRows } from "../../../src/ledger/delivered/activity.ts";
import { type Gap, timelines } from "../../helpers/active-time.ts";

const HOUR = 3_600_000;

function reference(gaps: readonly Gap[], coveredMs: number) {
  const groups = new Map<
    string,
    {
      key: string;
      detail: string;
      amount: number;
      tsMs: number;
      model: string;
      provider: string;
      client: string;
    }
  >();
  let covered = coveredMs;
  for (const g of gaps) {
    if (g.startMs < coveredMs) continue;
    covered = Math.max(covered, g.startMs + g.durationMs);
    const id = JSON.stringify([g.type, Math.floor(g.startMs / HOUR), g.model, g.provider, g.client ?? ""]);
    const prev = groups.get(id);
    if (prev !== undefined) prev.amount += g.durationMs;
    else
      groups.set(id, {
        key: `${g.streamKey}|${g.type}|${g.startMs}`,
        detail: g.type,
        amount: g.durationMs,
        tsMs: g.startMs,
        model: g.model,
        provider: g.provider,
        client: g.client ?? "",
      });
  }
  return { rows: [...groups.values()], coveredMs: covered };
}

const gapArb = fc.record({
  after: fc.oneof(fc.nat({ max: 60_000 }), fc.nat({ max: 2 * HOUR })),
  ms: fc.integer({ min: 1, max: 20 * 60_000 }),
  user: fc.boolean(),
  model: fc.constantFrom("m1", "m2"),
  provider: fc.constantFrom("anthropic", "openrouter"),
});

describe("activeTimeRows", () => {
  it("groups as a plain per-gap key does, for random timelines and covered ends", () => {
    fc.assert(
      fc.property(
        fc.array(gapArb, { minLength: 1, maxLength: 60 }),
        fc.nat({ max: 5 * HOUR }),
        fc.constantFrom(undefined, "cli", ""),
        (specs, coveredAfter, client) => {
          let at = 1_796_000_000_000;
          const gaps: Gap[] = specs.map((s) => {
            at += s.after;
            const g: Gap = {
              streamKey: "cline|s|active",
              sessionId: "s",
              agent: "lead",
              project: "/p",
              provider: s.provider,
              sourcePath: "/s/a.json",
              model: s.model,
              type: s.user ? "user" : "agent",
              startMs: at,
              durationMs: s.ms,
              ...(client === undefined ? {} : { client }),
            };
            at += s.ms;
            return g;
          });
          const covered = 1_796_000_000_000 + coveredAfter;
          const got = activeTimeRows(timelines(gaps)[0] as ActiveTimeline, covered);
          const want = reference(gaps, covered);
          expect(got.coveredMs).toBe(want.coveredMs);
          expect(
            got.rows.map((r) => ({
              key: r.key,
              detail: r.detail,
              amount: r.amount,
              tsMs: r.tsMs,
              model: r.model,
              provider: r.provider,
              client: r.client,
            })),
          ).toEqual(want.rows);
        },
      ),
      { numRuns: 300 },
    );
  });

  const one = (startMs: number[], durationMs: number[], group: number[]): ActiveTimeline => ({
    streamKey: "cline|s|active",
    sessionId: "s",
    agent: "lead",
    project: "/p",
    sourcePath: "/s/a.json",
    groups: [{ type: "agent", model: "m", provider: "p" }],
    startMs: Float64Array.from(startMs),
    durationMs: Float64Array.from(durationMs),
    group: Uint32Array.from(group),
  });

  it("refuses a timeline whose columns disagree, a gap of no group, a duration that is not whole ms", () => {
    expect(() => activeTimeRows(one([1_000, 2_000], [500], [0, 0]), 0)).toThrow(/columns of 2, 1 and 2/);
    expect(() => activeTimeRows(one([1_000], [500], [1]), 0)).toThrow(/no group 1/);
    expect(() => activeTimeRows(one([1_000], [0.5], [0]), 0)).toThrow(/not a duration/);
    expect(activeTimeRows(one([], [], []), 7)).toEqual({ rows: [], coveredMs: 7 });
  });
});
