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
 * The SEARCH/REPLACE blocks of a replace_in_file text, or null when it is malformed (a separator or
 * end outside a block, a block left open). Lines outside blocks (Cline ignores them) are skipped.
 */
export function searchReplaceBlocks(t: EscapedText): readonly SearchReplaceBlock[] | null {
  const blocks: SearchReplaceBlock[] = [];
  let state: Marker = Marker.None; // None: outside; SearchStart: in SEARCH; Separator: in REPLACE
  let old = new LinesBuilder();
  let neu = new LinesBuilder();
  let malformed = false;
  // One walk: each line's hashes come with its range; a marker line's are dropped.
  forEachHashedLine(t, (s, e, escaped, h1, h2) => {
    const m = escaped || !markerStart(t.buf[s]) ? Marker.None : markerOf(t.buf, s, e);
    if (state === Marker.None) {
      if (m === Marker.SearchStart) state = Marker.SearchStart;
      else if (m !== Marker.None) malformed = true;
    } else if (state === Marker.SearchStart) {
      if (m === Marker.Separator) state = Marker.Separator;
      else if (m === Marker.ReplaceEnd) malformed = true;
      else old.push(h1, h2);
    } else if (m === Marker.ReplaceEnd) {
      blocks.push({ old: old.build(), new: neu.build() });
      old = new LinesBuilder();
      neu = new LinesBuilder();
      state = Marker.None;
    } else {
      neu.push(h1, h2);
    }
    return !malformed;
  });
  if (malformed || state !== Marker.None) return null;
  return blocks;
}
