/**
 * `git diff --numstat` of two texts given as line hashes (docs/cline-format.md, "Counting lines from
 * bytes"): with D the size of a shortest edit script of inserted and deleted lines (a changed line is
 * one of each), added = (D + |b| - |a|) / 2 and removed = (D - |b| + |a|) / 2.
 *
 * Written here rather than taken from `diff` (jsdiff): only D is needed, never the script, so Myers'
 * greedy forward pass runs with ONE frontier array (O(|a| + |b|) memory, no path kept), where
 * jsdiff's `diffArrays` keeps a path per diagonal and returns the edit components. Before it, as git's
 * xdiff does, the common prefix and suffix are trimmed and the lines found nowhere on the other side
 * are taken out (each is certainly an insertion or a deletion, so D stays exact), which makes a
 * rewrite of a whole file cost a hash lookup per line.
 *
 * Time is bounded: past `budget` steps of the search (a pathological pair: many common lines in a
 * very different order) the counts fall back to the upper bound "every remaining line changed" and
 * `exact` is false. git itself gives up on minimality for costly pairs (xdiff's heuristics), so an
 * exact answer there is not git's answer either.
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
  const [x, y] = intern(a, b);
  let lo = 0;
  let hiX = x.length;
  let hiY = y.length;
  while (lo < hiX && lo < hiY && x[lo] === y[lo]) lo++;
  while (hiX > lo && hiY > lo && x[hiX - 1] === y[hiY - 1]) {
    hiX--;
    hiY--;
  }
  const [xs, xOnly] = keepShared(x, lo, hiX, y, lo, hiY);
  const [ys, yOnly] = keepShared(y, lo, hiY, x, lo, hiX);
  const d = editDistance(xs, ys, budget);
  if (d < 0) return { added: hiY - lo, removed: hiX - lo, exact: false };
  const grow = ys.length - xs.length;
  return { added: yOnly + (d + grow) / 2, removed: xOnly + (d - grow) / 2, exact: true };
}

/** Both sides' lines as small integers, equal exactly when their hash pairs are equal. */
function intern(a: Lines, b: Lines): [Int32Array, Int32Array] {
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
  return [one(a), one(b)];
}

/** `p[from..to)` without the lines absent from `q[qFrom..qTo)`, and how many were taken out. */
function keepShared(
  p: Int32Array,
  from: number,
  to: number,
  q: Int32Array,
  qFrom: number,
  qTo: number,
): [Int32Array, number] {
  const present = new Set<number>();
  for (let i = qFrom; i < qTo; i++) present.add(q[i] as number);
  const out = new Int32Array(to - from);
  let n = 0;
  for (let i = from; i < to; i++) {
    const v = p[i] as number;
    if (present.has(v)) out[n++] = v;
  }
  return [out.subarray(0, n), to - from - n];
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
