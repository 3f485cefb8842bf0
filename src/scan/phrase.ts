/**
 * Whether a fixed phrase is in a text, matched in its raw bytes (docs/cline-format.md, "Counting lines
 * from bytes"): "The user denied this operation." in a result, without decoding the result.
 *
 * A phrase of printable ASCII without `"` and `\` is written as-is by every canonical JSON writer at
 * any depth, so it occurs in the logical text exactly where its bytes occur in the raw bytes AT A TOKEN
 * BOUNDARY (a raw `n` just after an escaping backslash is part of `\n`, not the letter). Candidates come
 * from a native search of the raw range; each is checked by tokenizing forward from the last known
 * boundary, so the whole text is tokenized at most once. Any other phrase is matched on the logical
 * bytes (a KMP automaton over the walk).
 */
import { boundaryAtOrAfter, cursorOf, type EscapedText, nextByte } from "./escaped-text.ts";

function isPlain(phrase: string): boolean {
  for (let i = 0; i < phrase.length; i++) {
    const ch = phrase.charCodeAt(i);
    if (ch < 0x20 || ch > 0x7e || ch === 0x22 || ch === 0x5c) return false;
  }
  return phrase.length > 0;
}

/** `phrase` (ASCII) occurs in `t`'s logical text. */
export function containsPhrase(t: EscapedText, phrase: string): boolean {
  if (phrase.length === 0) return true;
  const needle = Buffer.from(phrase, "latin1");
  return isPlain(phrase) ? rawSearch(t, needle) : logicalSearch(t, needle);
}

function rawSearch(t: EscapedText, needle: Buffer): boolean {
  const view = Buffer.from(t.buf.buffer, t.buf.byteOffset + t.start, t.end - t.start);
  const c = cursorOf(t);
  for (let i = view.indexOf(needle); i >= 0; i = view.indexOf(needle, i + 1)) {
    const at = t.start + i;
    if (boundaryAtOrAfter(c, at) === at) return true;
  }
  return false;
}

function logicalSearch(t: EscapedText, needle: Buffer): boolean {
  const fail = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = fail[k - 1] as number;
    if (needle[i] === needle[k]) k++;
    fail[i] = k;
  }
  const c = cursorOf(t);
  let k = 0;
  for (let b = nextByte(c); b >= 0; b = nextByte(c)) {
    while (k > 0 && b !== needle[k]) k = fail[k - 1] as number;
    if (b === needle[k]) k++;
    if (k === needle.length) return true;
  }
  return false;
}
