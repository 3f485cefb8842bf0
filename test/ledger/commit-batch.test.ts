/**
 * Several sources in one transaction (Ledger.commitAll, used by the collection pass): each
 * stored exactly as commit() stores it, and the batch all or nothing, checkpoints included.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Source } from "../../src/adapter/types.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { event, observation } from "../helpers/events.ts";

const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(): Ledger {
  const d = mkdtempSync(join(tmpdir(), "batch-"));
  dirs.push(d);
  const l = Ledger.open(d);
  ledgers.push(l);
  return l;
}

function source(path: string): Source {
  return { adapterId: "cline-cli", path, origin: "walk", hint: {} };
}

describe("Ledger.commitAll", () => {
  it("stores each source as commit() would, in one transaction", () => {
    const batched = open();
    const single = open();
    const obs = ["/a", "/b", "/c"].map((p, i) =>
      observation(
        [event(`e${i}`, { dedupKey: `k${p}` }), event(`f${i}`, { dedupKey: `j${p}` })],
        [],
        10 + i,
        source(p),
      ),
    );
    const results = batched.commitAll(obs);
    expect(results.map((r) => r.eventsAdded)).toEqual([2, 2, 2]);
    for (const o of obs) single.commit(o);
    expect(batched.counts()).toEqual(single.counts());
    expect(batched.usageSeries().map(({ firstMs, updatedMs, ...r }) => r)).toEqual(
      single.usageSeries().map(({ firstMs, updatedMs, ...r }) => r),
    );
    expect([...batched.allCheckpoints().keys()].sort()).toEqual(["/a", "/b", "/c"]);
    // A repeated source adds nothing, inside a batch as across them.
    expect(batched.commitAll([obs[0] as (typeof obs)[number]]).map((r) => r.eventsAdded)).toEqual([0]);
  });

  it("a failure anywhere in the batch stores none of it: no event, no checkpoint", () => {
    const l = open();
    const good = observation([event("e1", { dedupKey: "k1" })], [], 10, source("/good"));
    const bad = observation([event("e2", { dedupKey: "k2" })], [], 10, source("/bad"));
    // A checkpoint the schema refuses (NOT NULL size): the commit throws after /good's rows.
    const broken = { ...bad, checkpoint: { ...bad.checkpoint, size: null as unknown as number } };
    expect(() => l.commitAll([good, broken])).toThrow();
    expect(l.counts()).toEqual({ events: 0, calls: 0, sources: 0 });
    expect(l.allCheckpoints().size).toBe(0);
    // Retried (next pass), the same sources land once.
    expect(l.commitAll([good, bad]).map((r) => r.eventsAdded)).toEqual([1, 1]);
    expect(l.counts().events).toBe(2);
  });
});
