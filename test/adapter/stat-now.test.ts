import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { statNow } from "../../src/adapter/stat-now.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "stat-now-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("statNow (a stat for the checks that only ask whether a path is as it was)", () => {
  it("the stat of what is there", () => {
    const p = join(dir, "doc.json");
    writeFileSync(p, "{}");
    expect(statNow(p)?.size).toBe(2);
  });

  it("undefined for a path that is gone, and for one that cannot be stat-ed (an errno error)", () => {
    const p = join(dir, "doc.json");
    writeFileSync(p, "{}");
    expect(statNow(join(dir, "gone.json"))).toBeUndefined();
    // ENOTDIR: left to the caller's full path to report.
    expect(statNow(join(p, "x"))).toBeUndefined();
  });

  it("throws what is not an errno error (a bug, not the filesystem)", () => {
    expect(() => statNow(undefined as unknown as string)).toThrow(TypeError);
  });
});
