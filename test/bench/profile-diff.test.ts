/** bench/profile-diff.ts: inclusive time by function name from V8 profiles, and the diff of two builds. */
import { describe, expect, it } from "vitest";
import { type CpuProfile, diffRows, frameName, inclusiveMs, meanMs } from "../../bench/profile-diff.ts";

const frame = (functionName: string, url = "file:///x/dist/chunks/ledger-Ab12Cd34.js") => ({
  functionName,
  url,
});

/**
 * (root) > main > commit > insert, main > read, main > (self), and an idle sample. Samples: insert,
 * insert, read, main, idle, commit; each sample's time is the NEXT delta (V8's convention).
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 6] },
    { id: 2, callFrame: frame("main"), children: [3, 5] },
    { id: 3, callFrame: frame("commit"), children: [4] },
    { id: 4, callFrame: frame("insert") },
    { id: 5, callFrame: frame("read", "file:///x/dist/chunks/adapter-Zz99Yy88.js") },
    { id: 6, callFrame: frame("(idle)", "") },
  ],
  samples: [4, 4, 5, 2, 6, 3],
  timeDeltas: [0, 1000, 2000, 3000, 4000, 5000],
};

describe("profile-diff", () => {
  it("names a frame by function and file, the chunk's hash stripped", () => {
    expect(frameName(frame("insert"))).toBe("insert ledger.js");
    expect(frameName(frame("", "file:///a/b/loader"))).toBe("(anon) loader");
  });

  it("sums each sample's time (the next delta) into every frame above it, idle left out", () => {
    const m = inclusiveMs(profile);
    // insert: samples 0 and 1 (1 + 2 ms); read: 3 ms; main self: 4 ms; idle: 5 ms left out; commit
    // self: the last sample, whose next delta is none (0).
    expect(m.get("insert ledger.js")).toBe(3);
    expect(m.get("commit ledger.js")).toBe(3);
    expect(m.get("read adapter.js")).toBe(3);
    expect(m.get("main ledger.js")).toBe(10);
    expect(m.get("(root)")).toBe(10);
    expect(m.has("(idle)")).toBe(false);
  });

  it("under a frame: its direct callees and its own time", () => {
    const m = inclusiveMs(profile, "main");
    expect(Object.fromEntries(m)).toEqual({
      "commit ledger.js": 3,
      "read adapter.js": 3,
      "(self)": 4,
    });
  });

  it("a mean per profile, and the rows by the largest difference", () => {
    const a = meanMs([profile, profile]);
    expect(a.get("main ledger.js")).toBe(10);
    const b = new Map([
      ["(root)", 10],
      ["main ledger.js", 12],
      ["read adapter.js", 9],
    ]);
    const rows = diffRows(a, b);
    expect(rows[0]).toEqual(["read adapter.js", 3, 9]);
    expect(
      rows
        .slice(1, 3)
        .map((r) => r[0])
        .sort(),
    ).toEqual(["commit ledger.js", "insert ledger.js"]);
    expect(rows.at(-1)).toEqual(["(root)", 10, 10]);
  });
});
