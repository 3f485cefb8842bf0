/**
 * `activeTimeRows` (src/ledger/delivered/activity.ts): one row per type, hour, model, provider and
 * client, in the order each group is first met, keyed by its first gap; gaps before the covered end
 * skipped. Against a plain reference that keys every gap, for random timelines (the shortcut for a
 * gap in the group of the last gap of its type must not change a row).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ActiveTimeRecord } from "../../../src/adapter/types.ts";
import { activeTimeRows } from "../../../src/ledger/delivered/activity.ts";

const HOUR = 3_600_000;

function reference(gaps: readonly ActiveTimeRecord[], coveredMs: number) {
  const groups = new Map<
    string,
    { key: string; detail: string; amount: number; tsMs: number; model: string }
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
      });
  }
  return { rows: [...groups.values()], coveredMs: covered };
}

const gapArb = fc.record({
  after: fc.oneof(fc.nat({ max: 60_000 }), fc.nat({ max: 2 * HOUR })),
  ms: fc.integer({ min: 1, max: 20 * 60_000 }),
  user: fc.boolean(),
  model: fc.constantFrom("m1", "m2"),
  client: fc.constantFrom(undefined, "cli", ""),
});

describe("activeTimeRows", () => {
  it("groups as a plain per-gap key does, for random timelines and covered ends", () => {
    fc.assert(
      fc.property(fc.array(gapArb, { maxLength: 60 }), fc.nat({ max: 5 * HOUR }), (specs, coveredAfter) => {
        let at = 1_796_000_000_000;
        const gaps: ActiveTimeRecord[] = specs.map((s) => {
          at += s.after;
          const g: ActiveTimeRecord = {
            streamKey: "cline|s|active",
            sessionId: "s",
            agent: "lead",
            project: "/p",
            provider: "anthropic",
            sourcePath: "/s/a.json",
            model: s.model,
            type: s.user ? "user" : "agent",
            startMs: at,
            durationMs: s.ms,
            ...(s.client === undefined ? {} : { client: s.client }),
          };
          at += s.ms;
          return g;
        });
        const covered = 1_796_000_000_000 + coveredAfter;
        const got = activeTimeRows(gaps, covered);
        const want = reference(gaps, covered);
        expect(got.coveredMs).toBe(want.coveredMs);
        expect(
          got.rows.map((r) => ({
            key: r.key,
            detail: r.detail,
            amount: r.amount,
            tsMs: r.tsMs,
            model: r.model,
          })),
        ).toEqual(want.rows);
      }),
      { numRuns: 300 },
    );
  });
});
