/**
 * The checkpoints a writer holds between passes (src/ledger/collection/checkpoints.ts): an idle
 * sweep looks them up in memory, and whatever changes them (a commit, a prune, a rolled-back
 * batch) is seen by the next read exactly as a fresh load would see it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Source, SourceCheckpoint } from "../../../src/adapter/types.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { event, observation } from "../../helpers/events.ts";

const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function stateDir(): string {
  const d = mkdtempSync(join(tmpdir(), "checkpoints-"));
  dirs.push(d);
  return d;
}

function open(dir: string, readOnly = false): Ledger {
  const l = Ledger.open(dir, readOnly ? { readOnly: true } : {});
  ledgers.push(l);
  return l;
}

const source = (path: string, adapterId = "cline-cli"): Source => ({
  adapterId,
  path,
  origin: "walk",
  hint: {},
});
let n = 0;
const obsOf = (path: string, size: number, adapterId = "cline-cli") =>
  observation([event(`e${n}`, { dedupKey: `k${n++}` })], [], size, source(path, adapterId));

/** What a fresh load sees: the truth the held map must always equal. */
const plain = (m: ReadonlyMap<string, SourceCheckpoint>) =>
  [...m.values()].map((c) => [c.path, c.size, c.mtimeNs, c.ino, c.dev]).sort();

describe("held checkpoints", () => {
  it("a writer answers a second load from memory, and a commit is seen by the next load", () => {
    const dir = stateDir();
    const l = open(dir);
    l.commitAll([obsOf("/a", 10), obsOf("/b", 11)]);
    const first = l.allCheckpoints();
    // Held: the same map, no second query (an idle sweep's 10,000 rows not loaded again).
    expect(l.allCheckpoints()).toBe(first);
    l.commitAll([obsOf("/a", 20), obsOf("/c", 12)]);
    const after = l.allCheckpoints();
    expect(after).not.toBe(first);
    expect(after.get("/a")?.size).toBe(20);
    expect([...after.keys()].sort()).toEqual(["/a", "/b", "/c"]);
    l.close();
    expect(plain(open(dir).allCheckpoints())).toEqual(plain(after));
  });

  it("a batch that fails leaves nothing held of it: the next load is the committed state", () => {
    const l = open(stateDir());
    l.commitAll([obsOf("/a", 10)]);
    const held = l.allCheckpoints();
    const bad = obsOf("/bad", 11);
    // /b's checkpoint is written, then the batch fails on the refused checkpoint and rolls back.
    const broken = { ...bad, checkpoint: { ...bad.checkpoint, size: null as unknown as number } };
    expect(() => l.commitAll([obsOf("/b", 12), broken])).toThrow();
    expect(plain(l.allCheckpoints())).toEqual(plain(held));
    // A load inside a transaction that is then rolled back is not held either.
    expect(() =>
      l.transaction(() => {
        l.commitAll([obsOf("/c", 13)]);
        expect(l.allCheckpoints().has("/c")).toBe(true);
        throw new Error("rolled back");
      }),
    ).toThrow("rolled back");
    expect([...l.allCheckpoints().keys()]).toEqual(["/a"]);
  });

  it("prune finds what is gone after a commit added it, and a prune is seen by the next load", () => {
    const l = open(stateDir());
    l.commitAll([obsOf("/a", 10), obsOf("/b", 11), obsOf("/x", 5, "other")]);
    l.allCheckpoints();
    expect(l.pruneCheckpoints("cline-cli", new Set(["/a", "/b"]), [])).toBe(0);
    // Added after the paths were held: a prune that does not list it drops it.
    l.commitAll([obsOf("/c", 12)]);
    expect(l.pruneCheckpoints("cline-cli", new Set(["/a", "/b"]), [])).toBe(1);
    expect([...l.allCheckpoints().keys()].sort()).toEqual(["/a", "/b", "/x"]);
    expect(l.pruneCheckpoints("cline-cli", new Set(["/a"]), [])).toBe(1);
    expect([...l.allCheckpoints().keys()].sort()).toEqual(["/a", "/x"]);
    expect(l.pruneCheckpoints("other", new Set(), [])).toBe(1);
    expect([...l.allCheckpoints().keys()]).toEqual(["/a"]);
  });

  it("a load takes the caller's string for each path it knows, and a held map asks for none", () => {
    const l = open(stateDir());
    l.commitAll([obsOf("/a", 10), obsOf("/b", 11)]);
    const asked: string[] = [];
    // The caller knows /a only (a source of its last discovery); /b keeps the row's own string.
    const first = l.allCheckpoints((p) => {
      asked.push(p);
      return p === "/a" ? "/a" : undefined;
    });
    expect(asked.sort()).toEqual(["/a", "/b"]);
    expect([...first.values()].map((c) => [c.path, c.size]).sort()).toEqual([
      ["/a", 10],
      ["/b", 11],
    ]);
    expect([...first.keys()].sort()).toEqual(["/a", "/b"]);
    // Held: answered from memory, no path looked up again (an idle sweep's 38,888 not hashed).
    const again = (): undefined => {
      asked.push("again");
    };
    expect(l.allCheckpoints(again)).toBe(first);
    expect(asked).not.toContain("again");
    // The known checkpoints a pass hands to discovery take the same lookup on their first load.
    l.commitAll([obsOf("/c", 12)]);
    const viaKnown: string[] = [];
    const known = l.knownCheckpoints((p) => {
      viaKnown.push(p);
      return undefined;
    });
    expect([...known.all().keys()].sort()).toEqual(["/a", "/b", "/c"]);
    expect(viaKnown.sort()).toEqual(["/a", "/b", "/c"]);
  });

  it("a read-only view holds nothing: the writer's commits show at its next load", () => {
    const dir = stateDir();
    const w = open(dir);
    w.commitAll([obsOf("/a", 10)]);
    const r = open(dir, true);
    expect([...r.allCheckpoints().keys()]).toEqual(["/a"]);
    w.commitAll([obsOf("/b", 11)]);
    expect([...r.allCheckpoints().keys()].sort()).toEqual(["/a", "/b"]);
  });
});
