/**
 * Several agents' adapters as one, for the generic collector: discovery concatenates theirs, and
 * each source goes back to the adapter that listed it (by its `adapterId`, which every adapter
 * sets on its sources); the watch plans are all of theirs. Keys are each adapter's own: nothing is
 * deduplicated across them.
 */
import type { Adapter, DiscoverResult, Source } from "./types.ts";

/** The sum of the discoveries' `unchangedUnlisted`, as a field only when any counted some. */
export function unlistedOf(results: readonly DiscoverResult[]): { readonly unchangedUnlisted?: number } {
  let n = 0;
  for (const r of results) n += r.unchangedUnlisted ?? 0;
  return n === 0 ? {} : { unchangedUnlisted: n };
}

export function combineAdapters(id: string, adapters: readonly Adapter[]): Adapter {
  if (adapters.length === 1) return adapters[0] as Adapter;
  /** Which adapter listed sources of each adapterId (an adapter may own several surfaces). */
  const owner = new Map<string, Adapter>();
  const pick = (adapterId: string): Adapter => {
    const a = owner.get(adapterId);
    if (a === undefined) throw new Error(`combineAdapters: no adapter listed a source of ${adapterId}`);
    return a;
  };
  /**
   * The last discovery: each adapter's source list and their concatenation. An adapter that hands
   * on the very same list (an idle sweep) needs no owner set per source, and when all do, the
   * concatenation is the last one (the loop then compares one array, not 10,000 sources).
   */
  let last: { readonly each: readonly (readonly Source[])[]; readonly all: readonly Source[] } | undefined;
  return {
    id,
    async discover(known) {
      const results = await Promise.all(adapters.map((a) => a.discover(known)));
      results.forEach((r, i) => {
        if (r.sources !== last?.each[i])
          for (const s of r.sources) owner.set(s.adapterId, adapters[i] as Adapter);
        for (const l of r.listings ?? []) owner.set(l.adapterId, adapters[i] as Adapter);
      });
      const each = results.map((r) => r.sources);
      // An adapter with no sources may list a new empty array each time: the same list.
      const same = (s: readonly Source[], i: number): boolean =>
        s === last?.each[i] || (s.length === 0 && last?.each[i]?.length === 0);
      const all = last !== undefined && each.every(same) ? last.all : results.flatMap((r) => r.sources);
      last = { each, all };
      return {
        sources: all,
        problems: results.flatMap((r) => r.problems),
        listings: results.flatMap((r) => r.listings ?? []),
        ...unlistedOf(results),
      };
    },
    collectIncremental: (source, checkpoint) => pick(source.adapterId).collectIncremental(source, checkpoint),
    unchangedNow: (source, checkpoint) => pick(source.adapterId).unchangedNow?.(source, checkpoint) ?? false,
    watchPlans: Object.freeze(adapters.flatMap((a) => a.watchPlans ?? [])),
  };
}
