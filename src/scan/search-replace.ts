/**
 * Cline's replace_in_file blocks, read from the escaped text in place (docs/cline-format.md,
 * "Counting lines from bytes"). The markers are whole lines, as Cline's own parser matches them
 * (apps/vscode/src/core/assistant-message/diff.ts up to v3.89.2): `^[-]{3,} SEARCH>?$` (legacy
 * `^[<]{3,} SEARCH>?$`), `^[=]{3,}$`, `^[+]{3,} REPLACE>?$` (legacy `^[>]{3,} REPLACE>?$`). Every
 * line between two markers belongs to the block with its newline (Cline joins them with one), so a
 * block's old and new sides are compared as whole lines.
 *
 * A marker is plain ASCII that no JSON writer escapes, so it is recognised on the raw bytes of a
 * line (a line holding any escape is content).
 */
import type { EscapedText } from "./escaped-text.ts";
import { forEachHashedLine, type Lines, LinesBuilder } from "./lines.ts";
import { type NumStat, numstatOf } from "./numstat.ts";
import type { CountingScratch } from "./scratch.ts";

export interface SearchReplaceBlock {
  readonly old: Lines;
  readonly new: Lines;
}

enum Marker {
  None,
  SearchStart,
  Separator,
  ReplaceEnd,
}

/** The marker raw [s, e) is, if any. */
function markerOf(buf: Uint8Array, s: number, e: number): Marker {
  const first = buf[s];
  let i = s;
  while (i < e && buf[i] === first) i++;
  if (i - s < 3) return Marker.None;
  if (first === 0x3d) return i === e ? Marker.Separator : Marker.None; // =
  const rest = i;
  const word = (w: readonly number[]): boolean => {
    if (buf[rest] !== 0x20) return false;
    let k = rest + 1;
    for (const ch of w) if (buf[k++] !== ch) return false;
    if (k < e && buf[k] === 0x3e) k++; // an optional trailing `>`
    return k === e;
  };
  if ((first === 0x2d || first === 0x3c) && word(SEARCH)) return Marker.SearchStart; // - <
  if ((first === 0x2b || first === 0x3e) && word(REPLACE)) return Marker.ReplaceEnd; // + >
  return Marker.None;
}

const SEARCH = [0x53, 0x45, 0x41, 0x52, 0x43, 0x48]; // SEARCH
const REPLACE = [0x52, 0x45, 0x50, 0x4c, 0x41, 0x43, 0x45]; // REPLACE

/** Whether a line can be a marker at all: it starts with one of the markers' characters (- < = + >). */
function markerStart(b: number | undefined): boolean {
  return b === 0x2d || b === 0x3c || b === 0x3d || b === 0x2b || b === 0x3e;
}

/**
 * Walks the blocks of a replace_in_file text in one pass: each block's SEARCH lines, then its
 * REPLACE lines, are hashed into `out` (emptied where each block starts: no arrays per block), and
 * `block(nOld, nNew)` is called at the block's end, the old lines at `out.data` 0..nOld, the new
 * ones after them. False when the text is malformed (a separator or end outside a block, a block
 * left open). Lines outside blocks (Cline ignores them) are skipped.
 */
function walkBlocks(t: EscapedText, out: LinesBuilder, block: (nOld: number, nNew: number) => void): boolean {
  let state: Marker = Marker.None; // None: outside; SearchStart: in SEARCH; Separator: in REPLACE
  let nOld = 0;
  let malformed = false;
  // One walk: each line's hashes come with its range; a marker line's are dropped.
  forEachHashedLine(t, (s, e, escaped, h1, h2) => {
    const m = escaped || !markerStart(t.buf[s]) ? Marker.None : markerOf(t.buf, s, e);
    if (state === Marker.None) {
      if (m === Marker.SearchStart) {
        state = Marker.SearchStart;
        out.reset();
      } else if (m !== Marker.None) malformed = true;
    } else if (state === Marker.SearchStart) {
      if (m === Marker.Separator) {
        state = Marker.Separator;
        nOld = out.count;
      } else if (m === Marker.ReplaceEnd) malformed = true;
      else out.push(h1, h2);
    } else if (m === Marker.ReplaceEnd) {
      block(nOld, out.count - nOld);
      state = Marker.None;
    } else {
      out.push(h1, h2);
    }
    return !malformed;
  });
  return !malformed && state === Marker.None;
}

/**
 * The SEARCH/REPLACE blocks of a replace_in_file text, or null when it is malformed (walkBlocks).
 * Each block's lines are copied out; `searchReplaceNumstat` counts without keeping them.
 */
export function searchReplaceBlocks(t: EscapedText): readonly SearchReplaceBlock[] | null {
  const blocks: SearchReplaceBlock[] = [];
  const out = new LinesBuilder();
  const ok = walkBlocks(t, out, (nOld, nNew) => {
    const h = out.data;
    blocks.push({
      old: { hashes: h.slice(0, 2 * nOld), count: nOld },
      new: { hashes: h.slice(2 * nOld, 2 * (nOld + nNew)), count: nNew },
    });
  });
  return ok ? blocks : null;
}

/** A replace_in_file text's numstat: each block's old -> new, summed. */
export interface BlocksNumStat extends NumStat {
  /** The number of blocks (0: a text without markers, a whole-file rewrite). */
  readonly blocks: number;
}

/**
 * The sum of each block's numstat (as `searchReplaceBlocks` then `numstat` per block would count),
 * in `s`'s arrays: nothing allocated per block or line; null when the text is malformed.
 */
export function searchReplaceNumstat(t: EscapedText, s: CountingScratch): BlocksNumStat | null {
  let added = 0;
  let removed = 0;
  let exact = true;
  let blocks = 0;
  const ok = walkBlocks(t, s.a, (nOld, nNew) => {
    const h = s.a.data;
    const n = numstatOf(h, 0, nOld, h, nOld, nNew, s.diff);
    added += n.added;
    removed += n.removed;
    exact &&= n.exact;
    blocks++;
  });
  return ok ? { added, removed, exact, blocks } : null;
}
