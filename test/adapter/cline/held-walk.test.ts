/**
 * The held walk (src/adapter/cline/held-walk.ts): walkSessions with a hold hands on the last walk's
 * very array while every listing it used holds, and otherwise walks as a walk without a hold does.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SESSION_DIRS_SCOPE, walkSessions } from "../../../src/adapter/cline/discover.ts";
import { walkHold } from "../../../src/adapter/cline/held-walk.ts";
import { LISTING_CONFIRM_MS, listingMemo } from "../../../src/adapter/listings.ts";
import type { Problem } from "../../../src/adapter/types.ts";

let dir: string;
let sessions: string;
/** Listings taken well after every change here, so each one holds once taken. */
const later = () => Date.now() + 10 * LISTING_CONFIRM_MS;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "held-walk-"));
  sessions = join(dir, "sessions");
  for (const id of ["s1", "s2", "s3"]) doc(id, `${id}.messages.json`);
  writeFileSync(join(sessions, "s2", "s2.compaction.json"), "{}");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function doc(folder: string, name: string): string {
  mkdirSync(join(sessions, folder), { recursive: true });
  const p = join(sessions, folder, name);
  writeFileSync(p, "{}");
  return p;
}

/** A walker as the adapter keeps one: one memo and one hold across walks. */
function walker(memo = listingMemo(SESSION_DIRS_SCOPE, undefined, later)) {
  const hold = walkHold();
  return () => {
    const problems: Problem[] = [];
    const compactions = new Set<string>();
    const docs = walkSessions(sessions, problems, compactions, memo, undefined, hold);
    return { docs, problems, compactions: [...compactions] };
  };
}
/** What a walk without any memo finds now. */
const plainWalk = () =>
  walkSessions(sessions, [], new Set(), listingMemo(SESSION_DIRS_SCOPE, undefined, later));

describe("held walk", () => {
  it("hands on the same array, and the compaction files, while nothing changed", () => {
    const walk = walker();
    const first = walk();
    expect(first.docs.map((d) => d.path)).toEqual(plainWalk().map((d) => d.path));
    const second = walk();
    expect(second.docs).toBe(first.docs);
    expect(second.compactions).toEqual([join(sessions, "s2", "s2.compaction.json")]);
    expect(second.problems).toEqual([]);
  });

  it("sees a document added to a folder, a folder added and a folder removed", () => {
    const walk = walker();
    const first = walk();
    const added = doc("s1", "b7.messages.json");
    const second = walk();
    expect(second.docs).not.toBe(first.docs);
    expect(second.docs.map((d) => d.path)).toContain(added);
    expect(second.docs).toEqual(plainWalk());
    const folder = doc("s9", "s9.messages.json");
    expect(walk().docs.map((d) => d.path)).toContain(folder);
    rmSync(join(sessions, "s3"), { recursive: true });
    const third = walk();
    expect(third.docs.map((d) => d.path).some((p) => p.includes("/s3/"))).toBe(false);
    expect(third.docs).toEqual(plainWalk());
    expect(walk().docs).toBe(third.docs);
  });

  it("is not held over a listing another walk of the same memo read again (the listing, not only its mark)", () => {
    const memo = listingMemo(SESSION_DIRS_SCOPE, undefined, later);
    const walk = walker(memo);
    walk();
    const added = doc("s1", "b7.messages.json");
    // The adapter's hint-building discovery walks with the same memo and no hold: s1 is listed
    // again there, so its stored listing holds for the new mark when the held walk looks.
    walkSessions(sessions, [], new Set(), memo);
    expect(walk().docs.map((d) => d.path)).toContain(added);
  });

  it("is never held with a symlinked folder (its target can change under the same name)", () => {
    const target = join(dir, "elsewhere", "l1");
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, "l1.messages.json"), "{}");
    symlinkSync(target, join(sessions, "l1"));
    const walk = walker();
    const first = walk();
    expect(first.docs.some((d) => d.path.endsWith("l1.messages.json") && !d.plain)).toBe(true);
    expect(walk().docs).not.toBe(first.docs);
  });
});
