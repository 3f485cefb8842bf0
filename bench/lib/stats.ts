/**
 * Timing helpers shared by the benchmark cases and the CI ratio check. These machines are
 * noisy and shared, so nothing here judges an absolute time: cases are measured interleaved
 * (A B C, A B C, ...) so a slow spell hits every case alike, and compared as ratios of medians.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Median of a non-empty sample (the upper middle one for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new RangeError("median() of an empty sample");
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * Median of the per-round ratios a[i] / b[i]. Each round's pair ran back to back, so a slow
 * spell that hits a round hits both sides; the median then drops the rounds it hit unevenly.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError(`pairedRatio(): ${a.length} vs ${b.length} samples`);
  return median(a.map((x, i) => x / (b[i] as number)));
}

/** A full GC, so one case does not pay for collecting another's garbage. */
export function fullGcFunction(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

export interface InterleaveOptions {
  /** Timed rounds (each runs every case once). */
  readonly reps: number;
  /** Untimed rounds first, so every case runs JIT-optimized code when timed. */
  readonly warmup?: number;
  /**
   * Force a full GC before each timed run (default false). Off by default: a full GC that
   * frees every object of a shape lets V8 drop that shape and deoptimize the code built on it
   * ("weak objects"), so the next run re-warms; measured 5x slower scans that way.
   */
  readonly gcBetween?: boolean;
}

/**
 * Runs the cases round-robin and returns every timed run in ms, per case. The order within
 * a round rotates, so no case always follows the same neighbour (whose garbage or page-cache
 * effects it would otherwise inherit every time).
 */
export async function interleave<K extends string>(
  cases: Readonly<Record<K, () => unknown>>,
  opts: InterleaveOptions,
): Promise<Record<K, number[]>> {
  const names = Object.keys(cases) as K[];
  const gc = opts.gcBetween === true ? fullGcFunction() : undefined;
  const out = Object.fromEntries(names.map((n) => [n, [] as number[]])) as Record<K, number[]>;
  for (let w = 0; w < (opts.warmup ?? 1); w++) for (const n of names) await cases[n]();
  for (let r = 0; r < opts.reps; r++) {
    for (let i = 0; i < names.length; i++) {
      const n = names[(i + r) % names.length] as K;
      gc?.();
      const t = performance.now();
      await cases[n]();
      out[n].push(performance.now() - t);
    }
  }
  return out;
}

export function fmt(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

export const MiB = 1024 * 1024;
