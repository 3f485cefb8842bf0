import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkpointOf,
  collectIfChanged,
  mtimeMsOfNs,
  readWhole,
  statFile,
  unchangedNow,
  unchangedSince,
  unchangedSinceStat,
} from "../../src/adapter/fingerprint.ts";
import type { Observation, Source } from "../../src/adapter/types.ts";

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

  it("the plain-stat gate agrees with the nanosecond one, and Node's mtimeMs is what mtimeMsOfNs computes", () => {
    const p = join(dir, "a.json");
    writeFileSync(p, "{}");
    // Nanosecond times set exactly (touch -d @sec.nsec), around the boundaries of the arithmetic.
    const times = [
      "1764590000.000000000",
      "1764590000.999999999",
      "1764590000.123456789",
      "1000000000.000000001",
      "999999999.999999999",
      "12.345678901",
      "0.000000001",
      "4102444800.500000000",
    ];
    for (let i = 0; i < 40; i++) {
      times.push(
        `${1_700_000_000 + Math.floor(Math.random() * 1e8)}.${String(Math.floor(Math.random() * 1e9)).padStart(9, "0")}`,
      );
    }
    for (const t of times) {
      execFileSync("touch", ["-m", "-d", `@${t}`, p]);
      const ns = statSync(p, { bigint: true }).mtimeNs;
      const plain = statSync(p);
      expect(mtimeMsOfNs(ns.toString()), t).toBe(plain.mtimeMs);
      const cp = checkpointOf(p, statFile(p));
      expect(unchangedSinceStat(cp, plain)).toBe(true);
      expect(unchangedSinceStat({ ...cp, size: cp.size + 1 }, plain)).toBe(false);
      expect(unchangedSinceStat({ ...cp, ino: cp.ino + 1 }, plain)).toBe(false);
      // One microsecond either way is always seen (the double resolves 0.24 µs until 2039).
      expect(unchangedSinceStat({ ...cp, mtimeNs: (ns + 1000n).toString() }, plain)).toBe(false);
      expect(unchangedSinceStat({ ...cp, mtimeNs: (ns - 1000n).toString() }, plain)).toBe(false);
    }
    expect(unchangedSinceStat(undefined, statSync(p))).toBe(false);
    // Before 1970: floored seconds, non-negative nanoseconds, as the kernel gives them.
    expect(mtimeMsOfNs("-1")).toBe(-1 * 1e3 + 999999999 / 1e6);
    expect(mtimeMsOfNs("-1000000000")).toBe(-1000);
    expect(mtimeMsOfNs("-1764590000123456789")).toBe(-1764590001 * 1e3 + 876543211 / 1e6);
    // Not a number (a damaged checkpoint): never equal to a stat, so the file is read again.
    for (const bad of ["", "abc", "17645900001234567x9", "1.5e18"]) expect(mtimeMsOfNs(bad)).toBeNaN();
  });

  it("a document rewritten in place with the same size is read again, even with its mtime set back to the same second", async () => {
    const p = join(dir, "a.messages.json");
    writeFileSync(p, '{"v":1}');
    execFileSync("touch", ["-m", "-d", "@1764590000.123456789", p]);
    const cp = checkpointOf(p, statFile(p));
    const source: Source = { adapterId: "test", path: p, origin: "walk", hint: { rootSessionId: "a" } };
    const reads: string[] = [];
    const read = async (s: Source): Promise<Observation> => {
      reads.push(s.path);
      return { status: "failed", source: s, problem: { path: s.path, code: "internal", detail: "read" } };
    };
    expect((await collectIfChanged(source, cp, read)).status).toBe("unchanged");
    writeFileSync(p, '{"v":2}'); // same size, in place: same inode
    expect(statFile(p).ino).toBe(cp.ino);
    await collectIfChanged(source, cp, read);
    // The same second and a microsecond apart: still a change.
    execFileSync("touch", ["-m", "-d", "@1764590000.123457789", p]);
    await collectIfChanged(source, cp, read);
    expect(reads).toEqual([p, p]);
    const gone = await collectIfChanged({ ...source, path: join(dir, "gone.messages.json") }, cp, read);
    expect(gone.status === "failed" && gone.problem.code).toBe("vanished");
  });
});

describe("unchangedNow (the pass's synchronous gate)", () => {
  it("true while the file matches its checkpoint; false once rewritten, replaced or gone, or when it cannot say", () => {
    const p = join(dir, "doc.json");
    writeFileSync(p, "{}");
    const cp = checkpointOf(p, statFile(p));
    expect(unchangedNow(p, cp)).toBe(true);
    writeFileSync(p, "{ }");
    expect(unchangedNow(p, cp)).toBe(false);
    const cp2 = checkpointOf(p, statFile(p));
    rmSync(p);
    expect(unchangedNow(p, cp2)).toBe(false);
    // A path under a file cannot be stat-ed (ENOTDIR): "not sure", left to collectIfChanged to report.
    writeFileSync(p, "{}");
    expect(unchangedNow(join(p, "x"), cp2)).toBe(false);
  });
});
