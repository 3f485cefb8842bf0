/**
 * `git diff --numstat` of two texts given as line hashes (docs/cline-format.md, "Counting lines from
 * bytes"): with D the size of a shortest edit script of inserted and deleted lines (a changed line is
 * one of each), added = (D + |b| - |a|) / 2 and removed = (D - |b| + |a|) / 2.
 *
 * Written here rather than taken from `diff` (jsdiff): only D is needed, never the script, so Myers'
 * greedy forward pass runs with ONE frontier array (O(|a| + |b|) memory, no path kept), where
 * jsdiff's `diffArrays` keeps a path per diagonal and returns the edit components; and the count must
 * be git's, whose xdiff prepares the texts first (`kept` below: the common prefix and suffix trimmed,
 * lines found nowhere on the other side taken out, and git's multi-match rule), which also makes a
 * rewrite of a whole file cost a hash lookup per line. On what remains xdiff's search is minimal
 * while the cost stays under its heuristics' threshold (256 edits), and so is this one: above it
 * git may count a few more lines than a minimal diff, this count does not (documented).
 *
 * Time is bounded: past `budget` steps of the search (a pathological pair: many common lines in a
 * very different order) the counts fall back to the upper bound "every line between the common
 * prefix and suffix changed" and `exact` is false.
 */
import type { Lines } from "./lines.ts";

export interface NumStat {
  readonly added: number;
  readonly removed: number;
  /** False when the search was cut by its budget: the counts are then an upper bound. */
  readonly exact: boolean;
}

/** Steps of the search before giving up (about 0.1 s); a 10,000-line file with scattered edits needs far fewer. */
export const DEFAULT_DIFF_BUDGET = 50_000_000;

/** `git diff --numstat` of `a` -> `b`. */
export function numstat(a: Lines, b: Lines, budget = DEFAULT_DIFF_BUDGET): NumStat {
  const [x, y, ids] = intern(a, b);
  let lo = 0;
  let hiX = x.length;
  let hiY = y.length;
  while (lo < hiX && lo < hiY && x[lo] === y[lo]) lo++;
  while (hiX > lo && hiY > lo && x[hiX - 1] === y[hiY - 1]) {
    hiX--;
    hiY--;
  }
  // Each line's number of occurrences in each WHOLE text (xdiff counts before trimming).
  const inX = new Int32Array(ids);
  const inY = new Int32Array(ids);
  for (const v of x) inX[v] = (inX[v] as number) + 1;
  for (const v of y) inY[v] = (inY[v] as number) + 1;
  const xs = kept(x, lo, hiX, inY);
  const ys = kept(y, lo, hiY, inX);
  const xOut = hiX - lo - xs.length;
  const yOut = hiY - lo - ys.length;
  const d = editDistance(xs, ys, budget);
  if (d < 0) return { added: hiY - lo, removed: hiX - lo, exact: false };
  const grow = ys.length - xs.length;
  return { added: yOut + (d + grow) / 2, removed: xOut + (d - grow) / 2, exact: true };
}

/** Both sides' lines as small integers, equal exactly when their hash pairs are equal; and how many ids. */
function intern(a: Lines, b: Lines): [Int32Array, Int32Array, number] {
  const ids = new Map<number, number>();
  const one = (l: Lines): Int32Array => {
    const out = new Int32Array(l.count);
    for (let i = 0; i < l.count; i++) {
      // 53 of the 64 hash bits: a JS number key without allocation.
      const key = (l.hashes[2 * i] as number) * 0x200000 + ((l.hashes[2 * i + 1] as number) >>> 11);
      let id = ids.get(key);
      if (id === undefined) {
        id = ids.size;
        ids.set(key, id);
      }
      out[i] = id;
    }
    return out;
  };
  const x = one(a);
  return [x, one(b), ids.size];
}

// xdiff's constants (git's xdiff/xdiffi.h, xprepare.c).
const MAX_EQLIMIT = 1024;
const SIMSCAN_WINDOW = 100;
const KPDIS_RUN = 4;

/** xdiff's `xdl_bogosqrt`: a power of two near the square root, from above. */
function bogosqrt(n: number): number {
  let i = 1;
  for (let k = n; k > 0; k = Math.floor(k / 4)) i *= 2;
  return i;
}

/**
 * The lines of `p[from..to)` git's diff compares (xdiff's `xdl_cleanup_records`): a line found
 * nowhere in the other text is changed for sure and taken out; a line found there many times
 * (at least about the square root of this text's length) is taken out too when it sits in a run
 * of such lines (`xdl_clean_mmatch`). The second rule is a heuristic, not a minimal diff: it is
 * kept because numstat must be git's count (a blank line amid new lines counts as new).
 */
function kept(p: Int32Array, from: number, to: number, inOther: Int32Array): Int32Array {
  const mlim = Math.min(bogosqrt(p.length), MAX_EQLIMIT);
  const dis = new Uint8Array(to - from);
  for (let i = from; i < to; i++) {
    const nm = inOther[p[i] as number] as number;
    dis[i - from] = nm === 0 ? 0 : nm >= mlim ? 2 : 1;
  }
  const out = new Int32Array(to - from);
  let n = 0;
  for (let i = 0; i < dis.length; i++) {
    const d = dis[i];
    if (d === 1 || (d === 2 && !cleanMultiMatch(dis, i, 0, dis.length - 1))) out[n++] = p[from + i] as number;
  }
  return out.subarray(0, n);
}

/** xdiff's `xdl_clean_mmatch`: whether the multi-match line `i` sits in a run of unmatched ones. */
function cleanMultiMatch(dis: Uint8Array, i: number, start: number, end: number): boolean {
  const s = i - start > SIMSCAN_WINDOW ? i - SIMSCAN_WINDOW : start;
  const e = end - i > SIMSCAN_WINDOW ? i + SIMSCAN_WINDOW : end;
  let rdis0 = 0;
  let rpdis0 = 1;
  for (let r = 1; i - r >= s; r++) {
    const v = dis[i - r];
    if (v === 0) rdis0++;
    else if (v === 2) rpdis0++;
    else break;
  }
  if (rdis0 === 0) return false;
  let rdis1 = 0;
  let rpdis1 = 1;
  for (let r = 1; i + r <= e; r++) {
    const v = dis[i + r];
    if (v === 0) rdis1++;
    else if (v === 2) rpdis1++;
    else break;
  }
  if (rdis1 === 0) return false;
  rdis1 += rdis0;
  rpdis1 += rpdis0;
  return rpdis1 * KPDIS_RUN < rpdis1 + rdis1;
}

/**
 * Myers' O(ND) greedy forward search (Myers 1986, "An O(ND) Difference Algorithm", section 2) for
 * D alone: -1 when it takes more than `budget` steps.
 */
function editDistance(a: Int32Array, b: Int32Array, budget: number): number {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return 0;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  let steps = 0;
  for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && (v[off + k - 1] as number) < (v[off + k + 1] as number)))
        x = v[off + k + 1] as number;
      else x = (v[off + k - 1] as number) + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      steps += 1 + x - x0;
      v[off + k] = x;
      if (x >= n && y >= m) return d;
    }
    if (steps > budget) return -1;
  }
  return max;
}
