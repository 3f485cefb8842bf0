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

/**
 * Steps of the search before giving up: about 0.1-0.2 s on a shared core (bench/numstat.ts). A
 * 10,000-line file with 1 % of its lines edited takes about 40,000; the budget is met past some
 * 3,000 edits in one text, far above the 256 where git's own search stops being minimal.
 */
export const DEFAULT_DIFF_BUDGET = 5_000_000;

/**
 * The typed arrays one diff uses, kept for the next (a history's edits are thousands of small
 * blocks: a fresh set of arrays per block cost more than the diff itself, and fed the GC). Grown by
 * doubling, never shrunk; one per reader (a document's parse), never shared across threads.
 */
export class DiffScratch {
  /** Both sides' lines as interned ids. */
  x: Int32Array = new Int32Array(16);
  y: Int32Array = new Int32Array(16);
  /** The interning table: the hash pair of each slot and its id (-1: empty). */
  k1: Uint32Array = new Uint32Array(16);
  k2: Uint32Array = new Uint32Array(16);
  ids: Int32Array = new Int32Array(16);
  /** Occurrences of each id in each whole text. */
  inX: Int32Array = new Int32Array(16);
  inY: Int32Array = new Int32Array(16);
  /** `kept`'s classes and both sides' kept lines. */
  dis: Uint8Array = new Uint8Array(16);
  xs: Int32Array = new Int32Array(16);
  ys: Int32Array = new Int32Array(16);
  /** Myers' frontier. */
  v: Int32Array = new Int32Array(16);
}

/** The size to grow an array of `have` to, for `need`: doubled until it holds it. */
function grownSize(have: number, need: number): number {
  let size = have * 2;
  while (size < need) size *= 2;
  return size;
}
const i32 = (a: Int32Array, n: number): Int32Array =>
  a.length >= n ? a : new Int32Array(grownSize(a.length, n));
const u32 = (a: Uint32Array, n: number): Uint32Array =>
  a.length >= n ? a : new Uint32Array(grownSize(a.length, n));

/** `git diff --numstat` of `a` -> `b`. */
export function numstat(a: Lines, b: Lines, budget = DEFAULT_DIFF_BUDGET, s = new DiffScratch()): NumStat {
  return numstatOf(a.hashes, 0, a.count, b.hashes, 0, b.count, s, budget);
}

/**
 * `git diff --numstat` of the `na` lines of `ha` from line `a0` -> the `nb` lines of `hb` from `b0`
 * (line i's hash pair at `2i, 2i+1`; both may be one array), in `s`'s arrays.
 */
export function numstatOf(
  ha: Uint32Array,
  a0: number,
  na: number,
  hb: Uint32Array,
  b0: number,
  nb: number,
  s: DiffScratch,
  budget = DEFAULT_DIFF_BUDGET,
): NumStat {
  // The common prefix and suffix on the hash pairs themselves: when one side is all of it, the
  // rest of the other is added or removed whole (what the search below would find, without it).
  let lo = 0;
  while (lo < na && lo < nb && samePair(ha, 2 * (a0 + lo), hb, 2 * (b0 + lo))) lo++;
  let hiX = na;
  let hiY = nb;
  while (hiX > lo && hiY > lo && samePair(ha, 2 * (a0 + hiX - 1), hb, 2 * (b0 + hiY - 1))) {
    hiX--;
    hiY--;
  }
  if (hiX === lo || hiY === lo) return { added: hiY - lo, removed: hiX - lo, exact: true };
  const ids = intern(ha, a0, na, hb, b0, nb, s);
  const x = s.x;
  const y = s.y;
  // Each line's number of occurrences in each WHOLE text (xdiff counts before trimming).
  s.inX = i32(s.inX, ids);
  s.inY = i32(s.inY, ids);
  const inX = s.inX.fill(0, 0, ids);
  const inY = s.inY.fill(0, 0, ids);
  for (let i = 0; i < na; i++) inX[x[i] as number] = (inX[x[i] as number] as number) + 1;
  for (let i = 0; i < nb; i++) inY[y[i] as number] = (inY[y[i] as number] as number) + 1;
  s.xs = i32(s.xs, hiX - lo);
  s.ys = i32(s.ys, hiY - lo);
  const nxs = kept(x, na, lo, hiX, inY, s, s.xs);
  const nys = kept(y, nb, lo, hiY, inX, s, s.ys);
  const xOut = hiX - lo - nxs;
  const yOut = hiY - lo - nys;
  const d = editDistance(s.xs, nxs, s.ys, nys, budget, s);
  if (d < 0) return { added: hiY - lo, removed: hiX - lo, exact: false };
  const grow = nys - nxs;
  return { added: yOut + (d + grow) / 2, removed: xOut + (d - grow) / 2, exact: true };
}

function samePair(ha: Uint32Array, i: number, hb: Uint32Array, j: number): boolean {
  return ha[i] === hb[j] && ha[i + 1] === hb[j + 1];
}

/**
 * Both sides' lines as small integers (into `s.x`, `s.y`), equal exactly when their hash pairs are
 * equal; returns how many distinct ones. An open-addressing table over the pairs in typed arrays (a
 * JS Map keyed by a 53-bit number was 10x slower: every key a heap number).
 */
function intern(
  ha: Uint32Array,
  a0: number,
  na: number,
  hb: Uint32Array,
  b0: number,
  nb: number,
  s: DiffScratch,
): number {
  let size = 16;
  while (size < 2 * (na + nb)) size *= 2;
  const mask = size - 1;
  s.k1 = u32(s.k1, size);
  s.k2 = u32(s.k2, size);
  s.ids = i32(s.ids, size);
  s.x = i32(s.x, na);
  s.y = i32(s.y, nb);
  const k1 = s.k1;
  const k2 = s.k2;
  const ids = s.ids.fill(-1, 0, size);
  let next = 0;
  for (let side = 0; side < 2; side++) {
    const h = side === 0 ? ha : hb;
    const from = side === 0 ? a0 : b0;
    const count = side === 0 ? na : nb;
    const out = side === 0 ? s.x : s.y;
    for (let i = 0; i < count; i++) {
      const h1 = h[2 * (from + i)] as number;
      const h2 = h[2 * (from + i) + 1] as number;
      let slot = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
      for (;;) {
        const id = ids[slot] as number;
        if (id < 0) {
          k1[slot] = h1;
          k2[slot] = h2;
          ids[slot] = next;
          out[i] = next++;
          break;
        }
        if (k1[slot] === h1 && k2[slot] === h2) {
          out[i] = id;
          break;
        }
        slot = (slot + 1) & mask;
      }
    }
  }
  return next;
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
 * kept because numstat must be git's count (a blank line amid new lines counts as new). `p` holds
 * the `length` lines of the whole text; the kept ones are written to `out`, their number returned.
 */
function kept(
  p: Int32Array,
  length: number,
  from: number,
  to: number,
  inOther: Int32Array,
  s: DiffScratch,
  out: Int32Array,
): number {
  const mlim = Math.min(bogosqrt(length), MAX_EQLIMIT);
  if (s.dis.length < to - from) s.dis = new Uint8Array(grownSize(s.dis.length, to - from));
  const dis = s.dis;
  const nd = to - from;
  for (let i = from; i < to; i++) {
    const nm = inOther[p[i] as number] as number;
    dis[i - from] = nm === 0 ? 0 : nm >= mlim ? 2 : 1;
  }
  let n = 0;
  for (let i = 0; i < nd; i++) {
    const d = dis[i];
    if (d === 1 || (d === 2 && !cleanMultiMatch(dis, i, 0, nd - 1))) out[n++] = p[from + i] as number;
  }
  return n;
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
 * D alone, over `a[0..n)` and `b[0..m)`: -1 when it takes more than `budget` steps.
 */
function editDistance(
  a: Int32Array,
  n: number,
  b: Int32Array,
  m: number,
  budget: number,
  s: DiffScratch,
): number {
  const max = n + m;
  if (max === 0) return 0;
  const off = max + 1;
  s.v = i32(s.v, 2 * max + 3);
  const v = s.v;
  // The search reads only the diagonals of the step before, written there; the first reads v[1].
  v[off + 1] = 0;
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
