/**
 * The per-commit series sums of edits and activity (EditSums, ActivitySums): a record of the same
 * series as the record before it reuses that sum without a key string. For random sequences of
 * records that differ from each other in any one key column, the sums equal a plain grouping by
 * the whole key.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EditRecord } from "../../../src/adapter/types.ts";
import { type ActivityRow, ActivitySums } from "../../../src/ledger/delivered/activity.ts";
import { EditSums } from "../../../src/ledger/delivered/edits.ts";

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

/**
 * Records' key columns (each of two values) as a walk: each record flips one column of the one
 * before it (or none), so neighbours differ in exactly the column a shortcut might miss.
 */
const keysArb = fc
  .tuple(
    fc.array(fc.nat({ max: 1 }), { minLength: 11, maxLength: 11 }),
    fc.array(fc.integer({ min: -1, max: 10 }), { maxLength: 40 }),
  )
  .map(([start, flips]) => {
    let k = start;
    return flips.map((f) => {
      k = k.map((v, j) => (j === f ? 1 - v : v));
      return k;
    });
  });

function editOf(k: readonly number[], i: number): EditRecord {
  const at = (j: number) => k[j] as number;
  const client = pick([undefined, "cli"], at(5));
  return {
    editKey: `c${i}|0`,
    callKey: `c${i}`,
    usageKey: "",
    sessionId: pick(["s1", "s2"], at(0)),
    agent: pick(["lead", "subagent"], at(1)),
    project: pick(["/a", "/b"], at(2)),
    model: pick(["m1", "m2"], at(3)),
    provider: pick(["p1", "p2"], at(4)),
    ...(client === undefined ? {} : { client }),
    toolName: pick(["editor", "apply_patch"], at(6)),
    operation: pick(["modify", "create"] as const, at(7)),
    decision: pick(["accepted", "rejected"] as const, at(8)),
    source: pick(["auto", "user"] as const, at(9)),
    language: pick(["typescript", "python"], at(10)),
    linesAdded: i + 1,
    linesRemoved: i % 3,
    exact: i % 4 !== 0,
    timestampMs: 1_000 + i,
    sourcePath: "/s/x.json",
  };
}

function rowOf(k: readonly number[], i: number): ActivityRow {
  const at = (j: number) => k[j] as number;
  return {
    key: `r${i}`,
    kind: pick(["active_time", "commit"] as const, at(6)),
    detail: pick(["user", "agent"], at(7)),
    amount: i + 1,
    sessionId: pick(["s1", "s2"], at(0)),
    agent: pick(["lead", "subagent"], at(1)),
    tsMs: 1_000 + i,
    model: pick(["m1", "m2"], at(3)),
    provider: pick(["p1", "p2"], at(4)),
    project: pick(["/a", "/b"], at(2)),
    client: pick(["", "cli"], at(5)),
    sourcePath: "/s/x.json",
  };
}

const sorted = <T>(xs: T[]): T[] => xs.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe("series sums", () => {
  it("EditSums: one sum per whole series key, whatever the order of the edits", () => {
    fc.assert(
      fc.property(keysArb, (keys) => {
        const edits = keys.map(editOf);
        const sums = new EditSums();
        for (const e of edits) sums.add(e);
        const want = new Map<
          string,
          { key: string[]; edits: number; linesAdded: number; inexactEdits: number }
        >();
        for (const e of edits) {
          const key = [
            e.sessionId,
            e.agent,
            e.project,
            e.model,
            e.provider,
            e.client ?? "",
            e.toolName,
            e.operation,
            e.decision,
            e.source,
            e.language,
          ];
          const w = want.get(JSON.stringify(key)) ?? { key, edits: 0, linesAdded: 0, inexactEdits: 0 };
          w.edits++;
          w.linesAdded += e.linesAdded;
          if (!e.exact) w.inexactEdits++;
          want.set(JSON.stringify(key), w);
        }
        const got = [...sums.values()].map((s) => ({
          key: [...s.key],
          edits: s.edits,
          linesAdded: s.linesAdded,
          inexactEdits: s.inexactEdits,
        }));
        expect(sorted(got)).toEqual(sorted([...want.values()]));
      }),
      { numRuns: 300 },
    );
  });

  it("ActivitySums: one sum per whole series key, and every row told to onRow", () => {
    fc.assert(
      fc.property(keysArb, (keys) => {
        const rows = keys.map(rowOf);
        const told: ActivityRow[] = [];
        const sums = new ActivitySums((r) => told.push(r));
        for (const r of rows) sums.add(r);
        expect(told).toEqual(rows);
        const want = new Map<string, { key: string[]; amount: number; records: number }>();
        for (const r of rows) {
          const key = [r.sessionId, r.agent, r.project, r.model, r.provider, r.client, r.kind, r.detail];
          const w = want.get(JSON.stringify(key)) ?? { key, amount: 0, records: 0 };
          w.amount += r.amount;
          w.records++;
          want.set(JSON.stringify(key), w);
        }
        const got = [...sums.values()].map((s) => ({
          key: [...s.key],
          amount: s.amount,
          records: s.records,
        }));
        expect(sorted(got)).toEqual(sorted([...want.values()]));
      }),
      { numRuns: 300 },
    );
  });
});
