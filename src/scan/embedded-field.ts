/**
 * A field of a JSON object held in a JSON string, found in place (docs/cline-format.md, "Counting lines
 * from bytes"): the task format's `text` `{"tool": ..., "path": ..., "content": ...}`, a CLI 3.x
 * tool result `{"query": ..., "result": ..., "success": false}`. The object is walked as the string's
 * logical bytes (escaped-text.ts); a string value comes back as the raw range of its content, one
 * escaping level deeper (depth 2), ready for the counting functions; other values as their kind. Keys are
 * compared byte by byte with an ASCII name: nothing is decoded.
 */
import { type Cursor, cursorOf, type EscapedText, nextByte } from "./escaped-text.ts";

export type EmbeddedValue =
  | { readonly kind: "string"; readonly text: EscapedText }
  | { readonly kind: "true" | "false" | "null" | "number" | "object" | "array" };

const QUOTE = 0x22;
const BS = 0x5c;

/** The next logical byte that is not JSON whitespace, and the raw index where its token starts. */
function nextNonSpace(c: Cursor): [number, number] {
  for (;;) {
    const at = c.pos;
    const b = nextByte(c);
    if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return [b, at];
  }
}

/**
 * Walks a logical string whose opening quote was just read, to just past its closing quote; returns the
 * raw index where the closing quote's token starts (-1 when the text ends first). With `name`, also
 * whether the string's logical bytes are exactly `name` (in `match[0]`).
 */
function crossString(c: Cursor, name?: string, match?: boolean[]): number {
  let i = 0;
  let same = name !== undefined;
  for (;;) {
    const at = c.qn > 0 ? -1 : c.pos;
    const b = nextByte(c);
    if (b < 0) return -1;
    if (b === QUOTE && at >= 0) {
      if (match && name !== undefined) match[0] = same && i === name.length;
      return at;
    }
    let v = b;
    if (b === BS) {
      // A logical escape of the embedded document: only a key's simple escapes matter for the match.
      const e = nextByte(c);
      if (e < 0) return -1;
      v = e === 0x6e ? 0x0a : e === 0x74 ? 0x09 : e === 0x72 ? 0x0d : e === 0x75 ? -1 : e;
      if (e === 0x75) for (let k = 0; k < 4; k++) nextByte(c);
    }
    if (same && name !== undefined && (i >= name.length || name.charCodeAt(i) !== v)) same = false;
    i++;
  }
}

/** Skips the rest of a nested object or array whose opening byte was just read; false when cut short. */
function crossNested(c: Cursor): boolean {
  let depth = 1;
  while (depth > 0) {
    const b = nextByte(c);
    if (b < 0) return false;
    if (b === QUOTE) {
      if (crossString(c) < 0) return false;
    } else if (b === 0x7b || b === 0x5b) depth++;
    else if (b === 0x7d || b === 0x5d) depth--;
  }
  return true;
}

/**
 * The top-level field `key` (ASCII) of the JSON object that is the logical content of `t` (depth 1), or
 * null when the object has no such field or is not a well-formed object up to it. The first occurrence
 * wins (a duplicate key is not looked for).
 */
export function embeddedField(t: EscapedText, key: string): EmbeddedValue | null {
  if (t.depth !== 1) return null; // a string value would be escaped three times
  const c = cursorOf(t);
  if (nextNonSpace(c)[0] !== 0x7b) return null;
  const match = [false];
  for (;;) {
    let [b] = nextNonSpace(c);
    if (b === 0x7d) return null;
    if (b !== QUOTE || crossString(c, key, match) < 0) return null;
    if (nextNonSpace(c)[0] !== 0x3a) return null;
    const wanted = match[0] === true;
    [b] = nextNonSpace(c);
    if (b === QUOTE) {
      const start = c.pos;
      const end = crossString(c);
      if (end < 0) return null;
      if (wanted) return { kind: "string", text: { buf: t.buf, start, end, depth: 2 } };
    } else if (b === 0x7b || b === 0x5b) {
      if (wanted) return { kind: b === 0x7b ? "object" : "array" };
      if (!crossNested(c)) return null;
    } else {
      const kind = b === 0x74 ? "true" : b === 0x66 ? "false" : b === 0x6e ? "null" : "number";
      if (b < 0 || (kind === "number" && b !== 0x2d && (b < 0x30 || b > 0x39))) return null;
      if (wanted) return { kind };
      // the scalar's remaining bytes, up to the separator
      do [b] = nextNonSpace(c);
      while (b >= 0 && b !== 0x2c && b !== 0x7d);
      if (b === 0x7d) return null;
      continue;
    }
    [b] = nextNonSpace(c);
    if (b !== 0x2c) return null;
  }
}

/** Whether `t`'s logical text is exactly `ascii` (a tool name, an enum value), compared byte by byte. */
export function textEquals(t: EscapedText, ascii: string): boolean {
  const c = cursorOf(t);
  for (let i = 0; i < ascii.length; i++) if (nextByte(c) !== ascii.charCodeAt(i)) return false;
  return nextByte(c) < 0;
}
