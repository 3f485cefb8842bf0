/**
 * Reading a JSON string's content as its LOGICAL bytes (the UTF-8 bytes of the decoded text)
 * straight from the raw, still-escaped bytes, without copying them and without making a JS string.
 * docs/cline-format.md, "Counting lines from bytes".
 *
 * Depth 1 is a plain JSON string field (CLI 3.x `tool_use.input.new_text`); depth 2 is a JSON string
 * inside a JSON string (the task format's `ui_messages.json` `text` holds JSON `{tool, path, content}`:
 * a newline of the file is the raw `\\n`, a backslash the raw `\\\\`). Escapes are tokenized from the
 * string's start: a reading position (`Cursor.pos`) is always at a token boundary, so an escaped
 * backslash followed by `n` is never taken for a newline.
 *
 * The fast path every walk uses: a raw byte that is not a backslash is, at either depth, one logical
 * byte (an escape is the only multi-byte token); only a raw backslash goes through `decodeToken`.
 */
import { readHex4, simpleEscape } from "./decode.ts";

/** The raw bytes of a JSON string's content (between the quotes), escaped `depth` times. */
export interface EscapedText {
  readonly buf: Uint8Array;
  readonly start: number;
  readonly end: number;
  readonly depth: 1 | 2;
}

/** A walk over an EscapedText's logical bytes: one per walk, never shared. */
export interface Cursor {
  readonly buf: Uint8Array;
  readonly end: number;
  readonly depth: 1 | 2;
  /** Raw index of the next token (a token boundary whenever `qn` is 0). */
  pos: number;
  /** The logical bytes an escape decoded to beyond its first (a `\uXXXX` above U+007F), packed. */
  q: number;
  qn: number;
  /** Malformed escapes met so far (each read as a literal backslash). */
  bad: number;
}

export const BACKSLASH = 0x5c;
export const NEWLINE = 0x0a;
/** An inner unit that is a raw byte >= 0x80 (a UTF-8 byte passed through), told apart from a code unit. */
const RAW = 0x10000;

export function cursorOf(t: EscapedText, from = t.start): Cursor {
  return { buf: t.buf, end: t.end, depth: t.depth, pos: from, q: 0, qn: 0, bad: 0 };
}

/** A sub-range of `t` (raw indices on token boundaries) as a text of the same depth. */
export function subText(t: EscapedText, start: number, end: number): EscapedText {
  return { buf: t.buf, start, end, depth: t.depth };
}

/** The next logical byte, or -1 at the end. */
export function nextByte(c: Cursor): number {
  if (c.qn > 0) return dequeue(c);
  if (c.pos >= c.end) return -1;
  const b = c.buf[c.pos] as number;
  if (b !== BACKSLASH) {
    c.pos++;
    return b;
  }
  return decodeToken(c);
}

function dequeue(c: Cursor): number {
  const b = c.q & 0xff;
  c.q >>>= 8;
  c.qn--;
  return b;
}

/**
 * The common escape tokens read without a cursor: a one-letter escape of the innermost string
 * (depth 1 `\n`; depth 2 `\\n`, `\\\"`, `\\\\`: a code line's newlines, quotes and
 * backslashes), as `byte | length << 8`; -1 for any other token (a `\u` escape at either level, a
 * malformed escape, one cut by `end`), which the caller reads with `decodeToken` (same result: a
 * property test, test/scan/lines.test.ts). `buf[pos]` is a backslash on a token boundary.
 */
export function simpleToken(buf: Uint8Array, pos: number, end: number, depth: 1 | 2): number {
  if (depth === 1) {
    if (pos + 1 >= end) return -1;
    const s = simpleEscape(buf[pos + 1] as number);
    return s < 0 ? -1 : s | (2 << 8);
  }
  // Depth 2: the outer `\\` is the inner escape's backslash; its letter is a raw byte or an outer escape.
  if (pos + 2 >= end || buf[pos + 1] !== BACKSLASH) return -1;
  const e = buf[pos + 2] as number;
  if (e !== BACKSLASH) {
    const s = simpleEscape(e);
    return s < 0 ? -1 : s | (3 << 8);
  }
  if (pos + 3 >= end) return -1;
  const u = simpleEscape(buf[pos + 3] as number);
  if (u < 0) return -1;
  const s = simpleEscape(u);
  return s < 0 ? -1 : s | (4 << 8);
}

/**
 * Decodes the escape token at `c.pos` (a raw backslash), moves past it and returns its first logical
 * byte (the others, if any, are queued). A malformed escape is a literal backslash (counted in `bad`).
 */
export function decodeToken(c: Cursor): number {
  const u = innerUnit(c);
  if (u === BACKSLASH) return innerEscape(c);
  return unitToBytes(c, u);
}

/**
 * The next unit of the INNERMOST string's raw content: at depth 1 a raw byte; at depth 2 one outer
 * token decoded (a raw byte, or what an outer escape stands for). A value < 0x80 is an ASCII byte
 * (0x5c: the innermost level's escape character), 0x80-0xFFFF a UTF-16 code unit from a `\uXXXX`,
 * RAW|b a raw UTF-8 byte, -1 the end.
 */
function innerUnit(c: Cursor): number {
  if (c.pos >= c.end) return -1;
  const b = c.buf[c.pos] as number;
  if (b !== BACKSLASH || c.depth === 1) {
    c.pos++;
    return b < 0x80 ? b : RAW | b;
  }
  // Depth 2: an outer escape.
  const e = c.pos + 1 < c.end ? (c.buf[c.pos + 1] as number) : -1;
  if (e === 0x75) {
    const cu = readHex4(c.buf, c.pos + 1, c.end);
    if (cu >= 0) {
      c.pos += 6;
      return cu;
    }
  } else if (e >= 0) {
    const s = simpleEscape(e);
    if (s >= 0) {
      c.pos += 2;
      return s;
    }
  }
  c.bad++;
  c.pos++;
  return RAW | BACKSLASH; // a literal backslash, never an escape start
}

/** After an innermost backslash: the escape it starts, decoded. */
function innerEscape(c: Cursor): number {
  const after = c.pos;
  const e = innerUnit(c);
  if (e === 0x75) {
    const cu = innerHex4(c);
    if (cu >= 0) return codeUnitToBytes(c, cu, true);
  } else if (e >= 0 && e < 0x80) {
    const s = simpleEscape(e);
    if (s >= 0) return s;
  }
  c.bad++;
  c.pos = after;
  return BACKSLASH;
}

/** Four hex digits read as inner units (at depth 2 each may itself be an outer escape), or -1. */
function innerHex4(c: Cursor): number {
  let v = 0;
  for (let i = 0; i < 4; i++) {
    const d = hexVal(innerUnit(c));
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

function hexVal(u: number): number {
  if (u >= 0x30 && u <= 0x39) return u - 0x30;
  const l = u | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** An inner unit that is not an innermost escape start, as logical bytes. */
function unitToBytes(c: Cursor, u: number): number {
  if (u < 0) return -1;
  if (u & RAW) return u & 0xff;
  if (u < 0x80) return u;
  return codeUnitToBytes(c, u, false); // a `\uXXXX` of the outer level (depth 2)
}

/**
 * A UTF-16 code unit as UTF-8: a high surrogate followed by a low one (read at the same level:
 * `inner` for an innermost escape) combines into one code point; a lone surrogate is its 3-byte
 * (WTF-8) form, so it stays distinct and never ends a line.
 */
function codeUnitToBytes(c: Cursor, cu: number, inner: boolean): number {
  let cp = cu;
  if (cu >= 0xd800 && cu <= 0xdbff) {
    const back = c.pos;
    const lo = inner
      ? innerUnit(c) === BACKSLASH && innerUnit(c) === 0x75
        ? innerHex4(c)
        : -1
      : innerUnit(c);
    if (lo >= 0xdc00 && lo <= 0xdfff) cp = 0x10000 + ((cu - 0xd800) << 10) + (lo - 0xdc00);
    else c.pos = back;
  }
  if (cp < 0x80) return cp;
  if (cp < 0x800) return queue(c, 0xc0 | (cp >> 6), 0x80 | (cp & 0x3f), 1);
  if (cp < 0x10000) {
    return queue(c, 0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f) | ((0x80 | (cp & 0x3f)) << 8), 2);
  }
  const rest = 0x80 | ((cp >> 12) & 0x3f) | ((0x80 | ((cp >> 6) & 0x3f)) << 8) | ((0x80 | (cp & 0x3f)) << 16);
  return queue(c, 0xf0 | (cp >> 18), rest, 3);
}

function queue(c: Cursor, first: number, rest: number, n: number): number {
  c.q = rest;
  c.qn = n;
  return first;
}

/**
 * Moves `c` (on a token boundary, nothing queued) to the first token boundary at or after raw index
 * `target` and returns it: `target` itself when it is a boundary, more when it falls inside an escape.
 */
export function boundaryAtOrAfter(c: Cursor, target: number): number {
  while (c.pos < target) {
    const bs = indexOfByte(c.buf, BACKSLASH, c.pos, target);
    if (bs < 0) {
      c.pos = target;
      break;
    }
    c.pos = bs;
    decodeToken(c);
    c.q = 0;
    c.qn = 0;
  }
  return c.pos;
}

/** `buf.indexOf(byte, from)` bounded by `to` (an unbounded search would scan the rest of a document). */
export function indexOfByte(buf: Uint8Array, byte: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (buf[i] === byte) return i;
  return -1;
}
