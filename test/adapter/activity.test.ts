/**
 * `TimelineBuilder` (src/adapter/activity.ts): the columns it builds hold the gaps a plain per-point
 * walk finds (the running maximum, the idle cut-offs, the last gap held back while it is open), for
 * random timelines with timestamps out of order, missing and repeated, and models that change.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IDLE_CUTOFF_MS, TimelineBuilder } from "../../src/adapter/activity.ts";
import type { ActiveTimeType } from "../../src/adapter/types.ts";
import { gapsOf } from "../helpers/active-time.ts";

interface Point {
  readonly ts: number;
  readonly type: ActiveTimeType;
  readonly model: string;
  readonly provider: string;
}

/** The gaps, one per point that closes one (the adapters' walk before the builder). */
function reference(points: readonly Point[], lastOpen: boolean) {
  const out: [number, number, ActiveTimeType, string, string][] = [];
  let latest = 0;
  const end = lastOpen ? points.length - 1 : points.length;
  for (let i = 0; i < end; i++) {
    const p = points[i] as Point;
    if (!(p.ts > 0)) continue;
    if (latest > 0 && p.ts > latest && p.ts - latest <= IDLE_CUTOFF_MS[p.type])
      out.push([latest, p.ts - latest, p.type, p.model, p.provider]);
    if (p.ts > latest) latest = p.ts;
  }
  return out;
}

const CTX = {
  streamKey: "s|active",
  sessionId: "s",
  agent: "lead",
  project: "/p",
  sourcePath: "/s/a.json",
  client: "cli",
};

const pointArb = fc.record({
  // Forward (short or past a cut-off), backward (a result stored at its completion), none (0).
  step: fc.oneof(
    fc.integer({ min: 0, max: 120_000 }),
    fc.integer({ min: 14 * 60_000, max: 32 * 60_000 }),
    fc.integer({ min: -60_000, max: -1 }),
  ),
  noTs: fc.boolean(),
  user: fc.boolean(),
  model: fc.constantFrom("m1", "m2", "m3"),
  provider: fc.constantFrom("p1", "p2"),
});

describe("TimelineBuilder", () => {
  it("builds the gaps a per-point walk finds, each with its type, model and provider", () => {
    fc.assert(
      fc.property(fc.array(pointArb, { maxLength: 80 }), fc.boolean(), (specs, lastOpen) => {
        let at = 1_796_000_000_000;
        const points: Point[] = specs.map((s) => {
          at += s.step;
          return {
            ts: s.noTs ? 0 : at,
            type: s.user ? "user" : "agent",
            model: s.model,
            provider: s.provider,
          };
        });
        const b = new TimelineBuilder();
        for (const p of points) b.add(p.ts, p.type, p.model, p.provider);
        const built = b.done(lastOpen, CTX);
        const want = reference(points, lastOpen);
        expect(built.length).toBe(want.length === 0 ? 0 : 1);
        expect(gapsOf(built).map((g) => [g.startMs, g.durationMs, g.type, g.model, g.provider])).toEqual(
          want,
        );
        for (const t of built) {
          // Each distinct type, model and provider once.
          const ids = t.groups.map((g) => `${g.type}|${g.model}|${g.provider}`);
          expect(new Set(ids).size).toBe(ids.length);
          expect(t).toMatchObject(CTX);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("holds back only the last point's gap while it is open", () => {
    const b = new TimelineBuilder();
    b.add(1_000, "agent", "m", "p");
    b.add(2_000, "agent", "m", "p");
    b.add(0, "agent", "m", "p");
    b.add(2_500, "user", "m", "p");
    expect(gapsOf(b.done(true, CTX)).map((g) => [g.startMs, g.durationMs, g.type])).toEqual([
      [1_000, 1_000, "agent"],
    ]);
  });
});
