import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkpointOf, readWhole, statFile, unchangedSince } from "../../src/adapter/fingerprint.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "fp-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("fingerprints", () => {
  it("a checkpoint from a stat matches the file until its size, mtime or inode changes", () => {
    const p = join(dir, "a.json");
    writeFileSync(p, "{}");
    const s = statFile(p);
    const cp = checkpointOf(p, s);
    expect(cp).toEqual({ path: p, size: 2, mtimeNs: s.mtimeNs.toString(), ino: s.ino, dev: s.dev });
    expect(unchangedSince(cp, statFile(p))).toBe(true);
    expect(unchangedSince(undefined, s)).toBe(false);
    expect(unchangedSince({ ...cp, size: 3 }, s)).toBe(false);
    expect(unchangedSince({ ...cp, mtimeNs: "1" }, s)).toBe(false);
    expect(unchangedSince({ ...cp, ino: cp.ino + 1 }, s)).toBe(false);
    expect(() => statFile(join(dir, "gone"))).toThrow(/ENOENT/);
  });

  it("a read is whole only when the fingerprint held and every byte was read", () => {
    const s = { size: 10, mtimeNs: 5n, ino: 1, dev: 1 };
    expect(readWhole({ statBefore: s, statAfter: s, bytesRead: 10 })).toBe(true);
    expect(readWhole({ statBefore: s, statAfter: s, bytesRead: 9 })).toBe(false);
    expect(readWhole({ statBefore: s, statAfter: { ...s, mtimeNs: 6n }, bytesRead: 10 })).toBe(false);
    expect(readWhole({ statBefore: s, statAfter: { ...s, ino: 2 }, bytesRead: 10 })).toBe(false);
  });
});
