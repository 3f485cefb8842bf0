/**
 * The lines of an escaped text as hashes (docs/cline-format.md, "Counting lines from bytes"): a line
 * is the logical bytes up to and excluding a newline; a text has as many lines as newlines, plus one
 * when it is non-empty and does not end in a newline (`git diff --numstat`'s and `wc -l`-plus-one's
 * rule). A line is kept as two independent 32-bit hashes of its logical bytes (never the bytes), so
 * two lines compare equal by their pair: 64 bits, a false "same line" about once in 2^64 pairs.
 * The bytes are taken four at a time (a word per 4 bytes: murmur3's body for the first hash,
 * xxHash32's round for the second, then the length and murmur3's finalizer), not one multiply per
 * byte and hash: the per-byte multiply chain was most of the walk of an edit's text.
 * The last line of a text without a final newline hashes differently from the same line with one,
 * as git counts `a` -> `a\n` as a changed line.
 */
import {
  BACKSLASH,
  type Cursor,
  cursorOf,
  decodeToken,
  type EscapedText,
  NEWLINE,
  nextByte,
  simpleToken,
} from "./escaped-text.ts";

/** Per-line hashes of a text: line i is `hashes[2i], hashes[2i+1]`. */
export interface Lines {
  readonly hashes: Uint32Array;
  readonly count: number;
}

const H1_SEED = 0x811c9dc5;
const H2_SEED = 0x9747b28c;
const NO_EOL = 0x5bd1e995;

/** A full word (4 bytes of a line, the first in the top byte) into the first hash: murmur3's body. */
function mix1(h: number, w: number): number {
  let k = Math.imul(w, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  const x = h ^ Math.imul(k, 0x1b873593);
  return (Math.imul((x << 13) | (x >>> 19), 5) + 0xe6546b64) | 0;
}

/** A full word into the second hash: xxHash32's round. */
function mix2(h: number, w: number): number {
  const x = (h + Math.imul(w, 0x85ebca77)) | 0;
  return Math.imul((x << 13) | (x >>> 19), 0x9e3779b1);
}

/**
 * The 4 raw bytes at `pos` as a big-endian word (the first byte on top, as the hashes pack them), or
 * -1 when one of them is a backslash or a raw newline. A run of other bytes is its own logical bytes
 * (no escape starts in it and none ends a line), so the hottest walks (forEachHashedLine, the newline
 * count) take such a run a word at a time: one load and two zero-byte tests (SWAR) instead of four byte
 * steps. Written here: no library walks escaped JSON bytes.
 */
function plainWord(dv: DataView, pos: number): number {
  const w = dv.getUint32(pos);
  const b = w ^ 0x5c5c5c5c;
  const n = w ^ 0x0a0a0a0a;
  return ((b - 0x01010101) & ~b & 0x80808080) | ((n - 0x01010101) & ~n & 0x80808080) ? -1 : w;
}

/** A DataView of the bytes of `buf` (the word loads of `plainWord`). */
const wordsOf = (buf: Uint8Array): DataView => new DataView(buf.buffer, buf.byteOffset, buf.byteLength);

/** Appends line hashes; grows by doubling; reusable (`reset`). */
export class LinesBuilder {
  private hashes = new Uint32Array(32);
  private n = 0;
  /** The running hash of the last line when `hashLines` pushed it without a newline, else len -1. */
  private openH1 = 0;
  private openH2 = 0;
  private openW = 0;
  private openLen = -1;

  push(h1: number, h2: number): void {
    if (2 * this.n + 2 > this.hashes.length) {
      const next = new Uint32Array(this.hashes.length * 2);
      next.set(this.hashes);
      this.hashes = next;
    }
    this.hashes[2 * this.n] = h1 >>> 0;
    this.hashes[2 * this.n + 1] = h2 >>> 0;
    this.n++;
    this.openLen = -1;
  }

  /** `hashLines`: the line just pushed ended the text without a newline; its running hash. */
  opened(h1: number, h2: number, w: number, len: number): void {
    this.openH1 = h1;
    this.openH2 = h2;
    this.openW = w;
    this.openLen = len;
  }

  /** Whether the last line pushed (by `hashLines`) ended its text without a newline. */
  get lastOpen(): boolean {
    return this.openLen >= 0;
  }

  /**
   * Hashes that last line again as one ending in a newline (what `hashLines` with `lastEol` would
   * have pushed): for two texts that both end mid-line, so the text is walked once.
   */
  closeLast(): void {
    if (this.openLen < 0) return;
    this.n--;
    finish(this, this.openH1, this.openH2, this.openW, this.openLen, true);
  }

  get count(): number {
    return this.n;
  }

  /** The hashes pushed so far (line i at 2i, 2i+1, i < count): the builder's own array, no copy. */
  get data(): Uint32Array {
    return this.hashes;
  }

  /** Empties the builder, keeping its array for the next text. */
  reset(): void {
    this.n = 0;
    this.openLen = -1;
  }

  build(): Lines {
    return { hashes: this.hashes.slice(0, 2 * this.n), count: this.n };
  }
}

function fmix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * The hash pair of one line from its running state (`w`: the last `len & 3` bytes, not yet mixed);
 * `eol`: the line ended in a newline.
 */
function finish(out: LinesBuilder, h1: number, h2: number, w: number, len: number, eol: boolean): void {
  const flag = eol ? 0 : NO_EOL;
  out.push(final1(h1, w, len, flag), final2(h2, w, len, flag));
}

function final1(h1: number, w: number, len: number, flag: number): number {
  return fmix(mix1(h1, w) ^ len ^ flag);
}

function final2(h2: number, w: number, len: number, flag: number): number {
  return fmix(mix2(h2, w) ^ Math.imul(len, 0x27d4eb2d) ^ flag);
}

/**
 * Hashes the lines of `t`'s raw range [from, to) (token boundaries) into `out`; `lastEol`: how the
 * range's last line counts when it has no newline of its own (a block line whose newline was the
 * range's end). Returns the number of lines pushed.
 */
export function hashLines(
  t: EscapedText,
  from: number,
  to: number,
  out: LinesBuilder,
  lastEol = false,
): number {
  // The hot loop keeps its position in a local and calls the cursor only for an escape (the
  // cursor's fields would be loads and stores per byte); queued bytes (>= 0x80) are never a newline.
  const c: Cursor = cursorOf({ buf: t.buf, start: from, end: to, depth: t.depth });
  const buf = t.buf;
  const depth = t.depth;
  let h1 = H1_SEED;
  let h2 = H2_SEED;
  let w = 0;
  let len = 0;
  let n = 0;
  let pos = from;
  while (pos < to) {
    let b = buf[pos] as number;
    if (b !== BACKSLASH) pos++;
    else {
      const f = simpleToken(buf, pos, to, depth);
      if (f >= 0) {
        pos += f >>> 8;
        b = f & 0xff;
      } else {
        c.pos = pos;
        b = decodeToken(c);
        pos = c.pos;
        while (c.qn > 0) {
          w = (w << 8) | b;
          if ((++len & 3) === 0) {
            h1 = mix1(h1, w);
            h2 = mix2(h2, w);
            w = 0;
          }
          b = c.q & 0xff;
          c.q >>>= 8;
          c.qn--;
        }
      }
    }
    if (b === NEWLINE) {
      finish(out, h1, h2, w, len, true);
      n++;
      h1 = H1_SEED;
      h2 = H2_SEED;
      w = 0;
      len = 0;
    } else {
      w = (w << 8) | b;
      if ((++len & 3) === 0) {
        h1 = mix1(h1, w);
        h2 = mix2(h2, w);
        w = 0;
      }
    }
  }
  if (len > 0) {
    finish(out, h1, h2, w, len, lastEol);
    if (!lastEol) out.opened(h1, h2, w, len);
    n++;
  }
  return n;
}

/**
 * One walk over `t`'s lines (the lines `forEachLine` visits) that also hashes them: `visit(start,
 * end, escaped, h1, h2)` gets each line's raw range without its newline, whether that range holds a
 * raw backslash, and the line's hash pair as a line ending in a newline (what `hashLine(t, start,
 * end, out, true)` pushes). For readers that pick lines by their raw bytes and keep the hashes of
 * most (SEARCH/REPLACE blocks): the text is walked once, not once to split and again to hash.
 */
export function forEachHashedLine(
  t: EscapedText,
  visit: (start: number, end: number, escaped: boolean, h1: number, h2: number) => boolean | undefined,
): void {
  const c = cursorOf(t);
  const buf = t.buf;
  const dv = wordsOf(buf);
  const to = t.end;
  const depth = t.depth;
  let h1 = H1_SEED;
  let h2 = H2_SEED;
  let w = 0;
  let len = 0;
  let escaped = false;
  let lineStart = t.start;
  let pos = t.start;
  while (pos < to) {
    if ((len & 3) === 0) {
      // Whole plain words on the line's word boundary: what four byte steps below would mix. (The
      // SEARCH/REPLACE walk only: hashLines, CLI 3.x's old/new texts, keeps the byte steps.)
      for (let word = pos + 4 <= to ? plainWord(dv, pos) : -1; word >= 0; ) {
        h1 = mix1(h1, word);
        h2 = mix2(h2, word);
        len += 4;
        pos += 4;
        word = pos + 4 <= to ? plainWord(dv, pos) : -1;
      }
      if (pos >= to) break;
    }
    const tokenStart = pos;
    let b = buf[pos] as number;
    const esc = b === BACKSLASH;
    if (!esc) pos++;
    else {
      const f = simpleToken(buf, pos, to, depth);
      if (f >= 0) {
        pos += f >>> 8;
        b = f & 0xff;
      } else {
        c.pos = pos;
        b = decodeToken(c);
        pos = c.pos;
        while (c.qn > 0) {
          w = (w << 8) | b;
          if ((++len & 3) === 0) {
            h1 = mix1(h1, w);
            h2 = mix2(h2, w);
            w = 0;
          }
          b = c.q & 0xff;
          c.q >>>= 8;
          c.qn--;
        }
      }
    }
    if (b === NEWLINE) {
      if (visit(lineStart, tokenStart, escaped, final1(h1, w, len, 0), final2(h2, w, len, 0)) === false)
        return;
      lineStart = pos;
      h1 = H1_SEED;
      h2 = H2_SEED;
      w = 0;
      len = 0;
      escaped = false;
    } else {
      // Any escape but the newline's own (a newline is always one) keeps the line from being a marker.
      if (esc) escaped = true;
      w = (w << 8) | b;
      if ((++len & 3) === 0) {
        h1 = mix1(h1, w);
        h2 = mix2(h2, w);
        w = 0;
      }
    }
  }
  if (lineStart < to) visit(lineStart, to, escaped, final1(h1, w, len, 0), final2(h2, w, len, 0));
}

/** Hashes raw [from, to) (token boundaries, no newline inside) as ONE line, even an empty one. */
export function hashLine(t: EscapedText, from: number, to: number, out: LinesBuilder, eol: boolean): void {
  const c: Cursor = cursorOf({ buf: t.buf, start: from, end: to, depth: t.depth });
  let h1 = H1_SEED;
  let h2 = H2_SEED;
  let w = 0;
  let len = 0;
  for (let b = nextByte(c); b >= 0; b = nextByte(c)) {
    w = (w << 8) | b;
    if ((++len & 3) === 0) {
      h1 = mix1(h1, w);
      h2 = mix2(h2, w);
      w = 0;
    }
  }
  finish(out, h1, h2, w, len, eol);
}

/** Per-line hashes of a text. */
export function textLines(t: EscapedText): Lines {
  const out = new LinesBuilder();
  hashLines(t, t.start, t.end, out);
  return out.build();
}

/** The number of lines of a text: its newlines, plus one when it is non-empty and does not end in one. */
export function lineCount(t: EscapedText): number {
  const w = newlinesAndTail(t);
  return (w >>> 1) + (w & 1);
}

/** The newlines of a text (its lines, less a last line without one). */
export function newlineCount(t: EscapedText): number {
  return newlinesAndTail(t) >>> 1;
}

/** One walk: the text's newlines * 2, plus 1 when bytes follow the last newline. */
function newlinesAndTail(t: EscapedText): number {
  const c = cursorOf(t);
  const buf = t.buf;
  const dv = wordsOf(buf);
  const end = t.end;
  const depth = t.depth;
  let n = 0;
  let tail = false; // bytes after the last newline
  let pos = t.start;
  while (pos < end) {
    if (pos + 4 <= end && plainWord(dv, pos) >= 0) {
      // A plain word holds no newline: it only makes the tail non-empty.
      pos += 4;
      tail = true;
      continue;
    }
    let b = buf[pos] as number;
    if (b !== BACKSLASH) pos++;
    else {
      const f = simpleToken(buf, pos, end, depth);
      if (f >= 0) {
        pos += f >>> 8;
        b = f & 0xff;
      } else {
        c.pos = pos;
        b = decodeToken(c);
        pos = c.pos;
        c.qn = 0; // the rest of a multi-byte character: never a newline
      }
    }
    if (b === NEWLINE) {
      n++;
      tail = false;
    } else {
      tail = true;
    }
  }
  return 2 * n + (tail ? 1 : 0);
}

/**
 * Calls `visit(start, end, next)` for each line of `t`: raw [start, end) is the line without its
 * newline, `next` the raw index after the newline (`end` itself for a last line without one). Every
 * index is a token boundary, so `subText(t, start, end)` is again a well-formed text.
 */
export function forEachLine(
  t: EscapedText,
  visit: (start: number, end: number, next: number) => boolean | undefined,
): void {
  const c = cursorOf(t);
  const buf = t.buf;
  let lineStart = t.start;
  let pos = t.start;
  while (pos < t.end) {
    const tokenStart = pos;
    let b = buf[pos] as number;
    if (b !== BACKSLASH) pos++;
    else {
      const f = simpleToken(buf, pos, t.end, t.depth);
      if (f >= 0) {
        pos += f >>> 8;
        b = f & 0xff;
      } else {
        c.pos = pos;
        b = decodeToken(c);
        pos = c.pos;
        c.qn = 0;
      }
    }
    if (b === NEWLINE) {
      if (visit(lineStart, tokenStart, pos) === false) return;
      lineStart = pos;
    }
  }
  if (lineStart < t.end) visit(lineStart, t.end, t.end);
}
