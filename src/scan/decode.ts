/**
 * Decoding of the few strings the schema allow-lists, from raw bytes between the quotes.
 * Only called for allow-listed values and for keys of allow-listed objects that are short
 * enough to possibly match a field name; skipped strings never reach this file.
 */
import { ScanError } from "./errors.ts";

const BACKSLASH = 0x5c;

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** Reads the 4 hex digits of a `\uXXXX` escape whose `u` is at `k`; -1 when malformed or cut short. */
export function readHex4(src: Uint8Array, k: number, end: number): number {
  if (k + 4 >= end) return -1;
  const a = hexVal(src[k + 1] as number);
  const b = hexVal(src[k + 2] as number);
  const c = hexVal(src[k + 3] as number);
  const d = hexVal(src[k + 4] as number);
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/** The byte a one-letter escape (`\n`, `\"`, ...) stands for, or -1. */
export function simpleEscape(e: number): number {
  switch (e) {
    case 0x22:
      return 0x22;
    case 0x5c:
      return 0x5c;
    case 0x2f:
      return 0x2f;
    case 0x62:
      return 0x08;
    case 0x66:
      return 0x0c;
    case 0x6e:
      return 0x0a;
    case 0x72:
      return 0x0d;
    case 0x74:
      return 0x09;
    default:
      return -1;
  }
}

function syntax(base: number, k: number, path: string, what: string): ScanError {
  return new ScanError("syntax", base + k, path, what);
}

/**
 * Decodes the raw content of a JSON string, `src[a..b)`, with JSON.parse semantics:
 * all escapes (surrogate pairs combine, lone surrogates stay), invalid UTF-8 -> U+FFFD.
 * `base` is the absolute offset of `src[0]`, for error positions.
 */
export function decodeJsonString(src: Buffer, a: number, b: number, base: number, path: string): string {
  let out = "";
  let seg = a;
  let k = a;
  while (k < b) {
    const c = src[k] as number;
    if (c === BACKSLASH) {
      // Segments between escapes are whole UTF-8 runs: an escape is ASCII, so it can
      // never split a multi-byte sequence that the whole-document decode would have kept.
      if (k > seg) out += src.toString("utf8", seg, k);
      if (k + 1 >= b) throw syntax(base, k, path, "escape cut short");
      const e = src[k + 1] as number;
      if (e === 0x75) {
        const cu = readHex4(src, k + 1, b);
        if (cu < 0) throw syntax(base, k, path, "bad \\u escape");
        out += String.fromCharCode(cu);
        k += 6;
      } else {
        const ch = simpleEscape(e);
        if (ch < 0) throw syntax(base, k, path, "bad escape");
        out += String.fromCharCode(ch);
        k += 2;
      }
      seg = k;
    } else if (c < 0x20) {
      throw syntax(base, k, path, "raw control character in string");
    } else {
      k++;
    }
  }
  if (b > seg) out += src.toString("utf8", seg, b);
  return out;
}

/**
 * Unescapes a key's raw bytes `src[a..b)` into `out` as UTF-8 so it can be compared
 * byte-for-byte with pre-encoded field names. Returns the byte length written.
 * A lone surrogate is written as 0xFF, a byte no valid UTF-8 name contains, so it can
 * never match. `out` must hold at least `b - a` bytes (unescaping never grows).
 */
export function unescapeKey(
  src: Uint8Array,
  a: number,
  b: number,
  out: Uint8Array,
  base: number,
  path: string,
): number {
  let o = 0;
  let k = a;
  while (k < b) {
    const c = src[k] as number;
    if (c !== BACKSLASH) {
      if (c < 0x20) throw syntax(base, k, path, "raw control character in key");
      out[o++] = c;
      k++;
      continue;
    }
    if (k + 1 >= b) throw syntax(base, k, path, "escape cut short");
    const e = src[k + 1] as number;
    if (e !== 0x75) {
      const ch = simpleEscape(e);
      if (ch < 0) throw syntax(base, k, path, "bad escape");
      out[o++] = ch;
      k += 2;
      continue;
    }
    let cp = readHex4(src, k + 1, b);
    if (cp < 0) throw syntax(base, k, path, "bad \\u escape");
    k += 6;
    if (cp >= 0xd800 && cp <= 0xdbff && k + 1 < b && src[k] === BACKSLASH && src[k + 1] === 0x75) {
      const lo = readHex4(src, k + 1, b);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        k += 6;
      }
    }
    if (cp < 0x80) {
      out[o++] = cp;
    } else if (cp < 0x800) {
      out[o++] = 0xc0 | (cp >> 6);
      out[o++] = 0x80 | (cp & 0x3f);
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
      out[o++] = 0xff;
    } else if (cp < 0x10000) {
      out[o++] = 0xe0 | (cp >> 12);
      out[o++] = 0x80 | ((cp >> 6) & 0x3f);
      out[o++] = 0x80 | (cp & 0x3f);
    } else {
      out[o++] = 0xf0 | (cp >> 18);
      out[o++] = 0x80 | ((cp >> 12) & 0x3f);
      out[o++] = 0x80 | ((cp >> 6) & 0x3f);
      out[o++] = 0x80 | (cp & 0x3f);
    }
  }
  return o;
}
