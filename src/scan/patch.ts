/**
 * apply_patch texts (the Codex patch format Cline CLI 3.x gives `gpt` models; docs/cline-format.md,
 * "Counting lines from bytes"), read from the escaped text in place:
 *
 *   *** Begin Patch
 *   *** Add File: <path>        then `+` lines: the new file
 *   *** Delete File: <path>     nothing follows: its lines are in no file (exact = false)
 *   *** Update File: <path>     optionally `*** Move to: <path>`, then hunks: `@@ ...` headers,
 *                               ` ` context, `-` removed and `+` added lines, `*** End of File`
 *   *** End Patch
 *
 * An Update counts each run of `-`/`+` lines between context lines as the numstat of its `-` lines
 * against its `+` lines (a `-x` then `+x` changes nothing and counts nothing, as git would count the
 * applied patch). Header prefixes are plain ASCII no writer escapes, so they are matched on the raw
 * bytes at a line's start; the path after them is never decoded, only its extension.
 */
import { type EscapedText, subText } from "./escaped-text.ts";
import { extensionOf } from "./extension.ts";
import { forEachLine, hashLine } from "./lines.ts";
import { numstatOf } from "./numstat.ts";
import { CountingScratch } from "./scratch.ts";

export interface PatchFile {
  readonly op: "create" | "modify" | "delete";
  readonly added: number;
  readonly removed: number;
  /** False for a Delete File (its removed lines are in no file) or a diff cut by its budget. */
  readonly exact: boolean;
  /** The extension of the file's path (of the `Move to:` path when moved), as extensionOf. */
  readonly extension: string;
  readonly moved: boolean;
}

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (ch) => ch.charCodeAt(0));
const BEGIN = ascii("*** Begin Patch");
const END = ascii("*** End Patch");
const ADD = ascii("*** Add File: ");
const DELETE = ascii("*** Delete File: ");
const UPDATE = ascii("*** Update File: ");
const MOVE = ascii("*** Move to: ");
const END_OF_FILE = ascii("*** End of File");
const PLUS = 0x2b;
const MINUS = 0x2d;
const SPACE = 0x20;

function startsWith(buf: Uint8Array, s: number, e: number, prefix: Uint8Array): boolean {
  if (e - s < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (buf[s + i] !== prefix[i]) return false;
  return true;
}

/** A whole-line marker: the prefix, then only spaces or tabs. */
function isLine(buf: Uint8Array, s: number, e: number, marker: Uint8Array): boolean {
  if (!startsWith(buf, s, e, marker)) return false;
  for (let i = s + marker.length; i < e; i++) if (buf[i] !== SPACE && buf[i] !== 0x09) return false;
  return true;
}

/** A path's raw range without trailing blanks. */
function trimEnd(buf: Uint8Array, s: number, e: number): number {
  let k = e;
  while (k > s && (buf[k - 1] === SPACE || buf[k - 1] === 0x09)) k--;
  return k;
}

interface Open {
  op: PatchFile["op"];
  added: number;
  removed: number;
  exact: boolean;
  extension: string;
  moved: boolean;
}

/**
 * The files of an apply_patch text, or null when it is not a well-formed patch. A run's `-` and `+`
 * lines are hashed into `scratch`'s two builders (emptied after each run).
 */
export function patchFiles(t: EscapedText, scratch = new CountingScratch()): readonly PatchFile[] | null {
  const buf = t.buf;
  const files: PatchFile[] = [];
  let begun = false;
  let ended = false;
  let malformed = false;
  let cur: Open | null = null;
  const minus = scratch.a;
  const plus = scratch.b;
  minus.reset();
  plus.reset();

  const flushRun = (f: Open): void => {
    if (minus.count === 0 && plus.count === 0) return;
    const n = numstatOf(minus.data, 0, minus.count, plus.data, 0, plus.count, scratch.diff);
    f.added += n.added;
    f.removed += n.removed;
    if (!n.exact) f.exact = false;
    minus.reset();
    plus.reset();
  };
  const close = (): void => {
    if (!cur) return;
    flushRun(cur);
    const { op, added, removed, exact, extension, moved } = cur;
    files.push({ op, added, removed, exact, extension, moved });
    cur = null;
  };
  const open = (op: PatchFile["op"], s: number, e: number): Open => ({
    op,
    added: 0,
    removed: 0,
    exact: op !== "delete",
    extension: extensionOf(subText(t, s, trimEnd(buf, s, e))),
    moved: false,
  });

  forEachLine(t, (s, e) => {
    if (!begun) {
      if (isLine(buf, s, e, BEGIN)) begun = true;
      return true;
    }
    if (isLine(buf, s, e, END)) {
      close();
      ended = true;
      return false;
    }
    if (startsWith(buf, s, e, ADD)) {
      close();
      cur = open("create", s + ADD.length, e);
    } else if (startsWith(buf, s, e, DELETE)) {
      close();
      cur = open("delete", s + DELETE.length, e);
    } else if (startsWith(buf, s, e, UPDATE)) {
      close();
      cur = open("modify", s + UPDATE.length, e);
    } else if (cur === null) {
      malformed = s < e; // only blank lines may come before the first file
    } else if (startsWith(buf, s, e, MOVE) && cur.op === "modify" && !cur.moved) {
      cur.moved = true;
      cur.extension = extensionOf(subText(t, s + MOVE.length, trimEnd(buf, s + MOVE.length, e)));
    } else if (cur.op === "create") {
      if (buf[s] === PLUS) cur.added++;
      else malformed = s < e;
    } else if (cur.op === "delete") {
      malformed = s < e;
    } else {
      const first = s < e ? buf[s] : SPACE; // an empty line is an empty context line
      if (first === MINUS) hashLine(t, s + 1, e, minus, true);
      else if (first === PLUS) hashLine(t, s + 1, e, plus, true);
      else if (first === SPACE || first === 0x40 || isLine(buf, s, e, END_OF_FILE))
        flushRun(cur); // context, `@@` header
      else malformed = true;
    }
    return !malformed;
  });
  if (!begun || !ended || malformed) return null;
  return files;
}
