/**
 * What a DirWatcher refresh depends on: a sources root's folders held while the root's mark holds
 * (a stat instead of a readdir), and the skip of a refresh whose inputs are those of the last one.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { unchangedInputs } from "../../src/collector/watch.ts";
import {
  type HeldSubdirectories,
  rememberedSubdirectories,
  sameDirSet,
} from "../../src/collector/watch-inputs.ts";

const work = mkdtempSync(join(tmpdir(), "watch-inputs-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("rememberedSubdirectories", () => {
  const later = () => Date.now() + 10_000;

  it("lists once, then answers from the held listing while the root's mark holds", () => {
    const root = join(work, "held");
    mkdirSync(join(root, "a"), { recursive: true });
    const memo = new Map<string, HeldSubdirectories>();
    const first = rememberedSubdirectories(root, memo, later);
    expect(first).toEqual({ dirs: [join(root, "a")], fresh: true });
    // A held listing with a sentinel entry: returned as is, so no readdir took place.
    const held = memo.get(root);
    if (held === undefined) throw new Error("not held");
    memo.set(root, { ...held, dirs: ["sentinel"] });
    expect(rememberedSubdirectories(root, memo, later)).toEqual({ dirs: ["sentinel"], fresh: false });
  });

  it("lists again when a folder appears (the mark changed)", () => {
    const root = join(work, "grows");
    mkdirSync(join(root, "a"), { recursive: true });
    const memo = new Map<string, HeldSubdirectories>();
    rememberedSubdirectories(root, memo, later);
    mkdirSync(join(root, "b"));
    const again = rememberedSubdirectories(root, memo, later);
    expect(again.fresh).toBe(true);
    expect([...again.dirs].sort()).toEqual([join(root, "a"), join(root, "b")]);
  });

  it("does not trust a listing taken within the confirmation window of the root's change", () => {
    const root = join(work, "young");
    mkdirSync(join(root, "a"), { recursive: true });
    const memo = new Map<string, HeldSubdirectories>();
    rememberedSubdirectories(root, memo); // taken now: unconfirmed
    expect(rememberedSubdirectories(root, memo).fresh).toBe(true);
  });

  it("a root that does not exist has no folders, and is fresh only when it went away", () => {
    const root = join(work, "later");
    const memo = new Map<string, HeldSubdirectories>();
    expect(rememberedSubdirectories(root, memo, later)).toEqual({ dirs: [], fresh: false });
    mkdirSync(join(root, "x"), { recursive: true });
    expect(rememberedSubdirectories(root, memo, later).fresh).toBe(true);
    rmSync(root, { recursive: true });
    expect(rememberedSubdirectories(root, memo, later)).toEqual({ dirs: [], fresh: true });
    expect(memo.has(root)).toBe(false);
  });
});

describe("sameDirSet and unchangedInputs", () => {
  it("compares members, not order", () => {
    expect(sameDirSet(new Set(["a", "b"]), new Set(["b", "a"]))).toBe(true);
    expect(sameDirSet(new Set(["a", "b"]), new Set(["a", "c"]))).toBe(false);
    expect(sameDirSet(new Set(["a"]), new Set(["a", "b"]))).toBe(false);
    expect(sameDirSet(undefined, new Set())).toBe(false);
    const held = new Set(["a"]);
    expect(sameDirSet(held, held)).toBe(true);
  });

  it("skips a refresh only when roots, listings and source folders are all the last ones", () => {
    const last = { roots: "r", sourceDirs: new Set(["/t/1", "/t/2"]) };
    const held = [{ fresh: false }];
    expect(unchangedInputs(last, "r", held, new Set(["/t/2", "/t/1"]))).toBe(true);
    expect(unchangedInputs(undefined, "r", held, new Set(["/t/1", "/t/2"]))).toBe(false);
    expect(unchangedInputs(last, "r2", held, new Set(["/t/1", "/t/2"]))).toBe(false);
    expect(unchangedInputs(last, "r", [{ fresh: true }], new Set(["/t/1", "/t/2"]))).toBe(false);
    expect(unchangedInputs(last, "r", held, new Set(["/t/1", "/t/3"]))).toBe(false);
  });
});
