/**
 * The one part of a path that may be decoded: its extension (docs/cline-format.md, "Counting lines
 * from bytes"). The path's escaped bytes are walked as logical bytes to find its last segment (after
 * the last `/` or `\`) and that segment's last `.`; only the bytes after that dot are turned into a
 * string, and only when they are a short run of ASCII letters, digits, `_`, `+` or `-` (else ""), so
 * no other byte of the path can reach a string. As Node's `path.extname`: "" for no dot, a trailing
 * dot, or a segment whose only dot is its first byte (`.gitignore`).
 */
import { type Cursor, cursorOf, type EscapedText, nextByte } from "./escaped-text.ts";

/** The longest extension kept (`.properties`, `.gitattributes`-like names fit; longer is "" ). */
export const MAX_EXTENSION_BYTES = 16;

/** The lower-cased extension of a path, without its dot; "" when there is none. */
export function extensionOf(t: EscapedText): string {
  const c = cursorOf(t);
  let segLen = 0; // logical bytes in the current segment so far
  let dotAfter = -1; // raw index just past the segment's last dot (not its first byte), or -1
  for (;;) {
    const b = nextByte(c);
    if (b < 0) break;
    if (b === 0x2f || b === 0x5c) {
      segLen = 0;
      dotAfter = -1;
      continue;
    }
    if (b === 0x2e && segLen > 0) dotAfter = c.pos; // a dot is one whole token: c.pos is a boundary
    segLen++;
  }
  if (dotAfter < 0) return "";
  return asciiExtension(cursorOf(t, dotAfter));
}

/** The ASCII bytes from `c` to the end, lower-cased, or "" when any is outside the allowed set or too many. */
function asciiExtension(c: Cursor): string {
  const codes: number[] = [];
  for (let b = nextByte(c); b >= 0; b = nextByte(c)) {
    const lower = b | 0x20;
    const ok =
      (lower >= 0x61 && lower <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x5f || b === 0x2b || b === 0x2d;
    if (!ok || codes.length >= MAX_EXTENSION_BYTES) return "";
    codes.push(lower >= 0x61 && lower <= 0x7a ? lower : b);
  }
  return String.fromCharCode(...codes);
}
