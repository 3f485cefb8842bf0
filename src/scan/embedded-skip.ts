/**
 * Crossing a skipped string of an embedded document (the `request` text of an `api_req_started`
 * entry) in the OUTER string's raw bytes, without unescaping them: the inner string's closing
 * quote is an outer `\"` whose backslash run, read as pairs, leaves an even number of inner
 * backslashes before it. Nothing is copied and nothing becomes a JS string.
 *
 * Fast path: a memchr per raw quote and a look back over its backslashes (as machine.ts'
 * `findQuote`): a run of r backslashes then `"` is (r-1)/2 inner backslashes and an inner quote,
 * which closes the string when r % 4 === 1 (a run starts at an escape boundary: every escape but
 * `\\` ends in another byte). A `\u0022` or `\u005c` escape (an inner quote or backslash the fast
 * path cannot see; no common writer emits them) or the end of the piece hands over to the exact
 * walk, escape by escape, which keeps the inner backslash parity across pieces.
 */
import { readHex4, simpleEscape } from "./decode.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** `\u00`: the start of every escape the fast path cannot read (`\u0022`, `\u005c`). */
const U00 = Buffer.from("\\u00", "latin1");

/** The outer string is malformed: the nested scan ends (embedded.ts). */
export class BadEscape extends Error {}

/** What crossing a skipped inner string carries from one piece to the next. */
export interface InnerSkip {
  /** The inner content so far ends in an odd run of inner backslashes. */
  odd: boolean;
  /** Where an escape cut by the end of the piece starts (its bytes go on in the next piece), or -1. */
  cut: number;
  /**
   * The next `\u0022`/`\u005c` at or after the last search's start, or `suspectTo` when none: one
   * search per piece, not per skipped string (a tool text holds several). Valid while `suspectIn`
   * and `suspectTo` are the piece being crossed (the caller resets `suspectIn` for a new piece).
   */
  suspect?: number;
  suspectIn?: Buffer | null;
  suspectTo?: number;
}

/**
 * Crosses the skipped inner string whose raw (outer-escaped) content goes on at `src[p]`, up to
 * `to` (`last`: the outer string ends there). Returns the index just past the raw closing `\"`
 * (or `\u0022`), or -1 when the string goes on past `to` (then `state` says how).
 */
export function crossInnerString(
  src: Buffer,
  p: number,
  to: number,
  last: boolean,
  state: InnerSkip,
): number {
  state.cut = -1;
  let from = p;
  if (!state.odd) {
    let suspect = -1; // the next `\u00` at or after `from`, or `to` when none
    for (;;) {
      const q = src.indexOf(QUOTE, from);
      // In the outer string every raw quote is escaped, so the outer closing quote bounds this search.
      if (q < 0 || q >= to) break;
      if (suspect < from) {
        const cached = state.suspect ?? -1;
        if (state.suspectIn === src && state.suspectTo === to && cached >= from) suspect = cached;
        else {
          suspect = nextU00(src, from, to);
          state.suspect = suspect;
          state.suspectIn = src;
          state.suspectTo = to;
        }
      }
      if (suspect < q) break;
      let k = q - 1;
      while (k >= from && src[k] === BACKSLASH) k--;
      if (((q - 1 - k) & 3) === 1) return q + 1;
      from = q + 1; // an escaped inner quote: the inner state is clean after it
    }
  }
  return exactWalk(src, from, to, last, state);
}

/** The next `\u0022` or `\u005c`/`\u005C` in `src[from..to)`, or `to` (other `\u00XX`, as ANSI codes, are common). */
function nextU00(src: Buffer, from: number, to: number): number {
  // Bounded: an unbounded indexOf would search the rest of the chunk for every string.
  const piece = src.subarray(from, to);
  for (let i = piece.indexOf(U00); i >= 0; i = piece.indexOf(U00, i + 1)) {
    const a = piece[i + 4];
    const b = piece[i + 5];
    // Cut short by `to`: treated as one (the exact walk then decides).
    if (a === undefined || b === undefined) return from + i;
    if ((a === 0x32 && b === 0x32) || (a === 0x35 && (b === 0x63 || b === 0x43))) return from + i;
  }
  return to;
}

/** Escape by escape from `p`, with the inner backslash parity in `state.odd`. */
function exactWalk(src: Buffer, p: number, to: number, last: boolean, state: InnerSkip): number {
  let odd = state.odd;
  for (;;) {
    const bs = src.indexOf(BACKSLASH, p);
    if (bs < 0 || bs >= to) {
      if (p < to) odd = false;
      state.odd = odd;
      return -1;
    }
    if (bs > p) odd = false; // plain bytes between: the run of inner backslashes is broken
    let v: number;
    let next: number;
    if (bs + 1 < to && src[bs + 1] !== 0x75) {
      v = simpleEscape(src[bs + 1] as number);
      if (v < 0) throw new BadEscape("invalid escape");
      next = bs + 2;
    } else if (bs + 6 <= to) {
      v = readHex4(src, bs + 1, to);
      if (v < 0) throw new BadEscape("bad \\u escape");
      next = bs + 6;
    } else {
      if (last) throw new BadEscape("cut escape at the end of the string");
      state.odd = odd;
      state.cut = bs;
      return -1;
    }
    if (v === QUOTE && !odd) return next;
    odd = v === BACKSLASH ? !odd : false;
    p = next;
  }
}
