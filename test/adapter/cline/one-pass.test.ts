/**
 * The one-pass adapter (createClineAdapter `onePass`, what `run --once` and `report` use): the
 * same sources as the daemon's adapter, nothing held for a next pass (a second discovery builds
 * its sources again instead of handing on the last ones), the listings still written to the store
 * for the next process, and the surfaces' index read let go once both discoveries have it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../../src/adapter/cline/adapter.ts";
import { createClineSurfaces } from "../../../src/adapter/cline/captures/collect.ts";
import { SESSION_DIRS_SCOPE } from "../../../src/adapter/cline/discover.ts";
import { cachedIndexReader, readSessionIndex } from "../../../src/adapter/cline/index-db.ts";
import { resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import type { ListingStore, StoredListing } from "../../../src/adapter/listings.ts";
import type { Source } from "../../../src/adapter/types.ts";
import { makeTree, type Tree } from "../../helpers/cline-tree.ts";

let dir: string;
let tree: Tree;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "one-pass-"));
  tree = makeTree(join(dir, "home"), [
    { id: "s1", cwd: "/p1", messages: [{ id: "m1" }] },
    { id: "s2", cwd: "/p2", messages: [{ id: "m1" }], subagents: { a1: [{ id: "x" }] } },
    { id: "u1", cwd: "/unindexed", messages: [{ id: "m1" }], indexed: false },
  ]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** What a source says, without its identity. */
const view = (sources: readonly Source[]) =>
  sources
    .map((s) => ({ path: s.path, origin: s.origin, hint: s.hint, after: s.after }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

/** A store in memory that records what was saved per scope. */
function memoryStore(): ListingStore & { readonly saved: Map<string, Map<string, StoredListing>> } {
  const saved = new Map<string, Map<string, StoredListing>>();
  const scope = (s: string) => saved.get(s) ?? saved.set(s, new Map()).get(s) ?? new Map();
  return {
    saved,
    load: (s) => new Map(scope(s)),
    save(s, put, drop) {
      const m = scope(s);
      for (const [k, v] of put) m.set(k, v);
      for (const k of drop) m.delete(k);
    },
  };
}

describe("the one-pass adapter", () => {
  it("discovers what the daemon's adapter does, holds nothing for a next pass, and still writes the listings", async () => {
    const paths = resolveClinePaths({}, {}, tree.home);
    const daemon = createClineAdapter(paths, cachedIndexReader());
    const store = memoryStore();
    const once = createClineAdapter(paths, cachedIndexReader(), store, Date.now, { onePass: true });
    const held = await daemon.discover();
    const first = await once.discover();
    expect(first.problems).toEqual([]);
    expect(view(first.sources)).toEqual(view(held.sources));
    // The daemon's adapter hands on its very array; the one-pass adapter kept nothing to hand on.
    expect((await daemon.discover()).sources).toBe(held.sources);
    const second = await once.discover();
    expect(second.sources).not.toBe(first.sources);
    expect(view(second.sources)).toEqual(view(first.sources));
    // The next process's walk stats these folders instead of listing them.
    const folders = [...(store.saved.get(SESSION_DIRS_SCOPE)?.keys() ?? [])].sort();
    expect(folders).toEqual(
      ["s1", "s2", "u1"]
        .map((id) => join(tree.sessionsDir, id))
        .concat(tree.sessionsDir)
        .sort(),
    );
  });

  it("the surfaces read the index once per discovery and keep no read between them", async () => {
    const paths = resolveClinePaths({}, {}, tree.home);
    let reads = 0;
    const counting = (d: string) => {
      reads++;
      return readSessionIndex(d);
    };
    const surfaces = (onePass: boolean) =>
      createClineSurfaces(paths, [], undefined, { onePass }, cachedIndexReader(counting));
    const daemon = surfaces(false);
    await daemon.discover();
    await daemon.discover();
    expect(reads).toBe(1);
    reads = 0;
    const once = surfaces(true);
    await once.discover();
    await once.discover();
    expect(reads).toBe(2);
  });
});
