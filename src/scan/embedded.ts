/**
 * The nested scan of an `embedded` string (a JSON document stored as a JSON string, such as
 * Cline's `api_req_started` text): the outer string's raw bytes are unescaped into a byte
 * buffer, piece by piece as the outer scan crosses them, and fed to an inner ScanMachine with
 * the inner schema (made by the outer one). A string the inner schema skips (the request text,
 * most of the bytes) is not unescaped: its end is found in the raw bytes (embedded-skip.ts). No JS string is ever made of the content; only what the inner schema
 * allow-lists is decoded, as in any scan.
 */
import { readHex4, simpleEscape } from "./decode.ts";
import { BadEscape, crossInnerString, type InnerSkip } from "./embedded-skip.ts";
import { ScanError } from "./errors.ts";
import type { PhraseScan } from "./phrases.ts";
import { type RawBytes, WRONG, type WrongType } from "./schema.ts";
import type { Scratch } from "./scratch.ts";

const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const QUOTE = 0x22;
/** What the inner scan is fed for the closing quote of a string crossed raw (it keeps no reference). */
const CLOSING_QUOTE = Buffer.from([QUOTE]);
/** Runs between escapes up to this long are copied by a loop: Buffer#copy costs a native call. */
const SHORT_COPY = 32;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The inner scan: a ScanMachine over the inner schema, made by the outer machine (machine.ts
 * imports this module; taking the machine as an argument keeps the two out of an import circle).
 */
export interface InnerScan {
  /** `buf[from..to)` (`addr` -1: no wasm arena). */
  feed(buf: Buffer, addr: number, from: number, to: number): void;
  end(): unknown;
  /** Just after the opening quote of a string the inner schema skips (machine.ts). */
  inSkippedString(): boolean;
  /** That skipped string's phrase search, when the inner schema asks for one. */
  skippedPhrases(): PhraseScan | null;
  /** Just after the opening quote of a `raw({outer: true})` string: its byte limit, else -1. */
  outerRawLimit(): number;
  /** That string's value (its outer bytes, or too-long): the machine was not fed them. */
  endOuterRaw(v: RawBytes | WrongType): void;
}

/**
 * The outer raw bytes of a `raw({outer: true})` inner string, copied as they are crossed (memcpy
 * of each piece; no unescaping), up to the schema's limit; or, when the outer document is kept
 * (`MachineOptions.views`) and the string lies in one piece of it, a view of those bytes.
 */
class OuterRaw {
  private buf: Buffer = EMPTY;
  private start = 0;
  private len = 0;
  private over = false;
  /** `buf` is a view of the document (nothing copied yet). */
  private viewing = false;
  private readonly limit: number;
  private readonly views: boolean;

  constructor(limit: number, views: boolean) {
    this.limit = limit;
    this.views = views;
  }

  /** `src` is the document itself (not a carried escape joined to the next piece). */
  add(src: Buffer, a: number, b: number, inDocument: boolean): void {
    if (this.over || b <= a) return;
    const need = this.len + (b - a);
    if (need > this.limit) {
      this.over = true;
      return;
    }
    if (this.len === 0 && this.views && inDocument) {
      this.buf = src;
      this.start = a;
      this.len = need;
      this.viewing = true;
      return;
    }
    if (this.viewing || need > this.buf.length) {
      // A second piece after a view, or more room: copied from here on.
      const grown = Buffer.allocUnsafe(Math.max(need, this.viewing ? 0 : this.buf.length * 2, 256));
      this.buf.copy(grown, 0, this.start, this.start + this.len);
      this.buf = grown;
      this.start = 0;
      this.viewing = false;
    }
    src.copy(this.buf, this.len, a, b);
    this.len = need;
  }

  value(): RawBytes | WrongType {
    if (this.over) return WRONG["too-long"];
    return { buf: this.buf, start: this.start, end: this.start + this.len, truncated: false, depth: 2 };
  }
}

const EMPTY = Buffer.alloc(0);

export class EmbeddedScan {
  /** The inner content is not one JSON value: the rest is only crossed, never unescaped. */
  private failed = false;
  private fed = false;
  /** The start of an escape cut by a chunk boundary (at most `\uXXXX\uXXXX`). */
  private pending: Buffer | null = null;
  /** Inside a skipped inner string (the request text): crossed raw, never unescaped. */
  private skipping = false;
  private readonly skip: InnerSkip = { odd: false, cut: -1, suspect: -1, suspectIn: null, suspectTo: -1 };
  /** The phrase search of the skipped inner string being crossed, if any: fed its raw bytes. */
  private phrases: PhraseScan | null = null;
  /** The outer bytes of the `raw({outer: true})` inner string being crossed, if it is one. */
  private outerRaw: OuterRaw | null = null;

  // A plain field, not a parameter property: the document worker runs this file with Node's type
  // stripping, which does not support them.
  private readonly inner: InnerScan;
  /** Shared with the other nested scans of this depth (`out`, the unescaped bytes). */
  private readonly scratch: Scratch;
  /** The outer document is kept: an `outer` raw value may be a view of it. */
  private readonly views: boolean;

  constructor(inner: InnerScan, scratch: Scratch, views = false) {
    this.inner = inner;
    this.scratch = scratch;
    this.views = views;
  }

  /** The outer string's raw (still escaped) bytes `buf[a..b)`; `last`: the closing quote follows. */
  feed(buf: Buffer, a: number, b: number, last: boolean): void {
    if (this.failed || a === b) {
      if (last && this.pending !== null && !this.failed) this.fail();
      return;
    }
    let src = buf;
    let from = a;
    let to = b;
    const inDocument = this.pending === null;
    if (this.pending !== null) {
      src = Buffer.concat([this.pending, buf.subarray(a, b)]);
      from = 0;
      to = src.length;
      this.pending = null;
    }
    // The `\u00` search of crossInnerString is valid for this piece only.
    this.skip.suspectIn = null;
    try {
      let p = from;
      while (p < to && !this.failed) {
        if (!this.skipping) {
          p = this.unescapeRun(src, p, to, last);
          continue;
        }
        const q = crossInnerString(src, p, to, last, this.skip);
        if (q < 0) {
          // A cut escape is fed again with the next piece: searched once, there.
          const end = this.skip.cut >= 0 ? this.skip.cut : to;
          this.phrases?.feed(src, p, end);
          this.outerRaw?.add(src, p, end, inDocument);
          if (this.skip.cut >= 0) this.pending = Buffer.from(src.subarray(this.skip.cut, to));
          return;
        }
        // The closing escape (`\"`) holds no phrase byte: fed along.
        this.phrases?.feed(src, p, q, true);
        this.phrases = null;
        this.skipping = false;
        const raw = this.outerRaw;
        if (raw !== null) {
          // The content ends where the closing token starts: `\"` (2 bytes) or `\u0022` (6).
          raw.add(src, p, src[q - 1] === QUOTE ? q - 2 : q - 6, inDocument);
          this.outerRaw = null;
          this.inner.endOuterRaw(raw.value());
        } else this.push(CLOSING_QUOTE, 0, 1);
        p = q;
      }
    } catch (e) {
      if (!(e instanceof BadEscape)) throw e;
      // Skipped strings tolerate bad escapes (machine.ts); here they only end the nested scan.
      this.fail();
    }
  }

  /**
   * Unescapes `src[p..to)` into the inner scan up to the first quote that opens a skipped inner
   * string (then crossed raw by `crossInnerString`); returns where it stopped.
   */
  private unescapeRun(src: Buffer, p: number, to: number, last: boolean): number {
    // Fast path: no escape in the piece, fed as it is (the machine keeps no reference to it).
    let bs = src.indexOf(BACKSLASH, p);
    if (bs < 0 || bs >= to) {
      this.push(src, p, to);
      return to;
    }
    const sc = this.scratch;
    if (sc.out.length < to - p) sc.out = Buffer.allocUnsafe(Math.max(to - p, sc.out.length * 2));
    const out = sc.out;
    let n = 0;
    for (;;) {
      const end = bs < 0 || bs >= to ? to : bs;
      const len = end - p;
      if (len <= SHORT_COPY) for (let j = 0; j < len; j++) out[n + j] = src[p + j] as number;
      else src.copy(out, n, p, end);
      n += len;
      if (end === to) break;
      if (!this.unescapeAt(src, bs, to, out, n, last)) {
        // The escape goes on in the next piece.
        this.pending = Buffer.from(src.subarray(bs, to));
        break;
      }
      p = this.read;
      const quote = this.written === n + 1 && out[n] === QUOTE;
      n = this.written;
      if (quote) {
        // Every quote of the inner document is an escape of the outer string: feed up to it and
        // ask whether it opened a string the inner schema skips.
        this.push(out, 0, n);
        n = 0;
        if (this.failed) return to;
        if (this.inner.inSkippedString()) {
          this.skipping = true;
          this.phrases = this.inner.skippedPhrases();
          this.skip.odd = false;
          return p;
        }
        const limit = this.inner.outerRawLimit();
        if (limit >= 0) {
          this.skipping = true;
          this.outerRaw = new OuterRaw(limit, this.views);
          this.skip.odd = false;
          return p;
        }
      }
      bs = src.indexOf(BACKSLASH, p);
    }
    this.push(out, 0, n);
    return to;
  }

  /** Where unescapeAt stopped reading `src` and writing `out`. */
  private read = 0;
  private written = 0;

  /**
   * Decodes the escape at `src[bs]` into `out[n..]`, setting `read` and `written`. False when it
   * is cut by the end of a piece that is not the last.
   */
  private unescapeAt(src: Buffer, bs: number, to: number, out: Buffer, n: number, last: boolean): boolean {
    if (bs + 1 >= to) {
      if (last) throw new BadEscape("string ends in a backslash");
      return false;
    }
    const e = src[bs + 1] as number;
    if (e !== 0x75) {
      const v = simpleEscape(e);
      if (v < 0) throw new BadEscape("invalid escape");
      out[n] = v;
      this.read = bs + 2;
      this.written = n + 1;
      return true;
    }
    if (bs + 6 > to) {
      if (last) throw new BadEscape("cut \\u escape");
      return false;
    }
    let cp = readHex4(src, bs + 1, to);
    if (cp < 0) throw new BadEscape("bad \\u escape");
    let read = bs + 6;
    if (cp >= 0xd800 && cp <= 0xdbff) {
      // A high surrogate: a low one may follow (possibly in the next piece).
      if (read + 6 > to && !last && (read === to || src[read] === BACKSLASH)) return false;
      if (read + 6 <= to && src[read] === BACKSLASH && src[read + 1] === 0x75) {
        const lo = readHex4(src, read + 1, to);
        if (lo >= 0xdc00 && lo <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          read += 6;
        }
      }
    }
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; // a lone surrogate: as UTF-8 would show it
    this.read = read;
    this.written = n + utf8(cp, out, n);
    return true;
  }

  /** `bytes[a..b)` to the inner scan. */
  private push(bytes: Buffer, a: number, b: number): void {
    if (b <= a) return;
    if (!this.fed) {
      // Most texts are prose or command lines: decided by their first byte, without the inner
      // scan's exception (a ScanError's stack trace costs more than the whole scan of a text).
      let i = a;
      while (i < b && isSpace(bytes[i] as number)) i++;
      if (i === b) return;
      if (bytes[i] !== OPEN_BRACE) {
        this.fail();
        return;
      }
    }
    this.fed = true;
    try {
      this.inner.feed(bytes, -1, a, b);
    } catch (e) {
      if (!(e instanceof ScanError)) throw e;
      // Not JSON (a command line, prose): the outcome is `not-json`, not an error of the document.
      this.fail();
    }
  }

  private fail(): void {
    this.failed = true;
    this.pending = null;
    this.phrases = null;
    this.outerRaw = null;
  }

  /** The decoded inner value, or `not-json`. */
  end(): unknown {
    if (this.failed || !this.fed) return WRONG["not-json"];
    try {
      return this.inner.end();
    } catch (e) {
      if (!(e instanceof ScanError)) throw e;
      return WRONG["not-json"];
    }
  }
}

function utf8(cp: number, out: Buffer, n: number): number {
  if (cp < 0x80) {
    out[n] = cp;
    return 1;
  }
  if (cp < 0x800) {
    out[n] = 0xc0 | (cp >> 6);
    out[n + 1] = 0x80 | (cp & 0x3f);
    return 2;
  }
  if (cp < 0x10000) {
    out[n] = 0xe0 | (cp >> 12);
    out[n + 1] = 0x80 | ((cp >> 6) & 0x3f);
    out[n + 2] = 0x80 | (cp & 0x3f);
    return 3;
  }
  out[n] = 0xf0 | (cp >> 18);
  out[n + 1] = 0x80 | ((cp >> 12) & 0x3f);
  out[n + 2] = 0x80 | ((cp >> 6) & 0x3f);
  out[n + 3] = 0x80 | (cp & 0x3f);
  return 4;
}
