import { describe, expect, it } from "vitest";
import { compileSkipWat } from "../../bench/lib/build-scan-wasm.ts";
import { prng } from "../../bench/lib/messages-doc.ts";
import { SkipArena, wasmUnavailableReason } from "../../src/scan/arena.ts";
import { SKIP_WASM_BASE64 } from "../../src/scan/skip-wasm.ts";

/** Scalar reference for skip(): first unescaped quote in [p, end), else -1 - (is `end` escaped). */
function refSkip(u8: Uint8Array, p: number, end: number, carry: number): number {
  let esc = carry === 1;
  for (let i = p; i < end; i++) {
    const c = u8[i];
    if (esc) esc = false;
    else if (c === 0x5c) esc = true;
    else if (c === 0x22) return i;
  }
  return -1 - (esc ? 1 : 0);
}

describe("wasm string skipper", () => {
  it("is available on this runtime", () => {
    expect(wasmUnavailableReason).toBe("");
  });

  it("embeds exactly the bytes compiled from skip.wat", async () => {
    const compiled = await compileSkipWat();
    expect(Buffer.from(SKIP_WASM_BASE64, "base64").equals(Buffer.from(compiled))).toBe(true);
  });

  it("agrees with a scalar reference on random quote/backslash mixes", () => {
    const arena = SkipArena.create(4096, 1);
    if (arena === null) throw new Error("no arena");
    const mem = arena.slot(0);
    const base = arena.addr(0);
    const rand = prng(5);
    for (let it = 0; it < 20_000; it++) {
      const len = Math.floor(rand() * 300);
      const start = Math.floor(rand() * 70);
      const pq = rand() * 0.1;
      const pb = rand() * 0.7;
      for (let i = 0; i < start + len + 64 && i < mem.length; i++) {
        const r = rand();
        mem[i] = r < pq ? 0x22 : r < pq + pb ? 0x5c : 0x61;
      }
      const carry = rand() < 0.5 ? 1 : 0;
      const want = refSkip(mem, start, start + len, carry);
      const got = arena.skip(base + start, base + start + len, carry);
      expect(got < 0 ? got : got - base, `case ${it}`).toBe(want);
    }
  });

  it("handles long backslash runs that cross 64-byte blocks", () => {
    const arena = SkipArena.create(1024, 1);
    if (arena === null) throw new Error("no arena");
    const mem = arena.slot(0);
    const base = arena.addr(0);
    for (let run = 0; run < 200; run++) {
      mem.fill(0x61);
      mem.fill(0x5c, 3, 3 + run);
      mem[3 + run] = 0x22;
      mem[3 + run + 5] = 0x22;
      for (const carry of [0, 1]) {
        const want = refSkip(mem, 0, 900, carry);
        const got = arena.skip(base, base + 900, carry);
        expect(got < 0 ? got : got - base).toBe(want);
        // and the same string cut at the end of the run: the carry must come out right
        expect(arena.skip(base, base + 3 + run, carry)).toBe(refSkip(mem, 0, 3 + run, carry));
      }
    }
  });
});
