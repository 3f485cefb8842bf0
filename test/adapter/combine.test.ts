/** Several adapters as one: sources routed back to their adapter; an idle discovery's list handed on. */
import { describe, expect, it } from "vitest";
import { combineAdapters } from "../../src/adapter/combine.ts";
import type { Adapter, Observation, Source } from "../../src/adapter/types.ts";

function source(adapterId: string, path: string): Source {
  return { adapterId, path, origin: "walk", hint: {} };
}

/** An adapter listing whatever `lists()` returns, recording what it is asked to collect. */
function fake(id: string, lists: () => readonly Source[]) {
  const seen: string[] = [];
  const adapter: Adapter = {
    id,
    discover: async () => ({ sources: lists(), problems: [] }),
    collectIncremental: async (s, cp): Promise<Observation> => {
      seen.push(`${id}:${s.path}`);
      return {
        status: "unchanged",
        source: s,
        checkpoint: cp ?? { path: s.path, size: 0, mtimeNs: "0", ino: 0, dev: 0 },
      };
    },
    unchangedNow: (s) => s.path.endsWith("clean"),
  };
  return { adapter, seen };
}

describe("combineAdapters", () => {
  it("adds up the sources each adapter counted unlisted (DiscoverResult.unchangedUnlisted)", async () => {
    const counting = (id: string, n: number | undefined): Adapter => ({
      ...fake(id, () => [source(id, `/${id}/1`)]).adapter,
      discover: async () => ({
        sources: [source(id, `/${id}/1`)],
        problems: [],
        ...(n === undefined ? {} : { unchangedUnlisted: n }),
      }),
    });
    const d = await combineAdapters("all", [
      counting("a", 3),
      counting("b", undefined),
      counting("c", 2),
    ]).discover();
    expect(d.unchangedUnlisted).toBe(5);
    expect(d.sources.map((s) => s.path)).toEqual(["/a/1", "/b/1", "/c/1"]);
    const none = await combineAdapters("none", [counting("a", undefined), counting("b", 0)]).discover();
    expect(none.unchangedUnlisted).toBeUndefined();
  });

  it("hands on the last combined list while every adapter lists the same (or no) sources", async () => {
    const a = [source("a", "/a/1"), source("a", "/a/2")];
    let b: readonly Source[] = [];
    const A = fake("a", () => a);
    // The second adapter lists nothing as a new empty array each time, sources as its held list.
    const B = fake("b", () => (b.length === 0 ? [] : b));
    const both = combineAdapters("both", [A.adapter, B.adapter]);
    const d1 = await both.discover();
    const d2 = await both.discover();
    expect(d2.sources).toBe(d1.sources);
    expect(d2.sources).toEqual(a);
    // A source of the second: a new list, with it.
    b = [source("b", "/b/clean")];
    const d3 = await both.discover();
    expect(d3.sources).not.toBe(d1.sources);
    expect(d3.sources.map((s) => s.path)).toEqual(["/a/1", "/a/2", "/b/clean"]);
    // Each source goes back to the adapter that listed it.
    for (const s of d3.sources) await both.collectIncremental(s, undefined);
    expect([...A.seen, ...B.seen]).toEqual(["a:/a/1", "a:/a/2", "b:/b/clean"]);
    const cp = { path: "", size: 0, mtimeNs: "0", ino: 0, dev: 0 };
    expect(both.unchangedNow?.(d3.sources[2] as Source, cp)).toBe(true);
    expect(both.unchangedNow?.(d3.sources[0] as Source, cp)).toBe(false);
    // The same lists again: handed on; a new list from one adapter: a new combined list.
    expect((await both.discover()).sources).toBe(d3.sources);
    b = [...b];
    expect((await both.discover()).sources).not.toBe(d3.sources);
  });
});
