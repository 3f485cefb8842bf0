/**
 * A WebAssembly memory holding the chunk buffers, plus the SIMD string skipper that runs
 * over them (skip.wat). Chunks are read straight into these slots, so scanning them costs
 * no copy. When WebAssembly SIMD is unavailable, `SkipArena.create` returns null and the
 * machine falls back to `Buffer#indexOf`.
 */
import { SKIP_WASM_BASE64 } from "./skip-wasm.ts";

/** Bytes after each slot that the skipper may read (it loads 64-byte blocks, masked). */
const SLACK = 64;
const PAGE = 65536;
/** Addresses must stay below 2^31: skip() returns them as signed i32. */
const MAX_ARENA_BYTES = 1 << 30;

export type SkipFn = (p: number, end: number, carry: number) => number;

interface Compiled {
  readonly module: WebAssembly.Module | null;
  readonly reason: string;
}

function compile(): Compiled {
  try {
    return { module: new WebAssembly.Module(Buffer.from(SKIP_WASM_BASE64, "base64")), reason: "" };
  } catch (err) {
    // Feature detection: a runtime without wasm SIMD gets the indexOf path, and says why.
    return { module: null, reason: String(err) };
  }
}

/** Compiled once at load: the module is immutable and 450 bytes, so this costs microseconds. */
const COMPILED = compile();

/** Why the SIMD path is unavailable ("" when it is available). */
export const wasmUnavailableReason: string = COMPILED.reason;

export class SkipArena {
  readonly skip: SkipFn;
  private readonly mem: WebAssembly.Memory;
  private readonly slotBytes: number;
  private readonly stride: number;
  private readonly slots: number;

  private constructor(module: WebAssembly.Module, slotBytes: number, slots: number) {
    this.slotBytes = slotBytes;
    this.stride = slotBytes + SLACK;
    this.slots = slots;
    const pages = Math.ceil((this.stride * slots) / PAGE);
    this.mem = new WebAssembly.Memory({ initial: pages, maximum: pages });
    const inst = new WebAssembly.Instance(module, { env: { mem: this.mem } });
    this.skip = inst.exports.skip as SkipFn;
  }

  /** An arena of `slots` buffers of `slotBytes` each, or null when wasm SIMD is unavailable or it would be too large. */
  static create(slotBytes: number, slots: number): SkipArena | null {
    if (COMPILED.module === null) return null;
    if ((slotBytes + SLACK) * slots > MAX_ARENA_BYTES) return null;
    return new SkipArena(COMPILED.module, slotBytes, slots);
  }

  /** Address of slot `k`'s first byte in wasm memory. */
  addr(k: number): number {
    if (k < 0 || k >= this.slots) throw new RangeError(`slot ${k} out of range`);
    return k * this.stride;
  }

  /** A Buffer view of slot `k` (memory never grows, so views never detach). */
  slot(k: number): Buffer {
    return Buffer.from(this.mem.buffer, this.addr(k), this.slotBytes);
  }
}
