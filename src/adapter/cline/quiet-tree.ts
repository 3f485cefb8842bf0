/**
 * The quiet-tree snapshot (issue 30): an idle `report` over a sessions tree that did not change
 * since the last one proves it with one stored entry and a stat of each folder and document, and
 * builds nothing else: no stored listing, no checkpoint, no Source is loaded or made. It hands the
 * pass a count of unchanged sources instead (DiscoverResult.unchangedUnlisted).
 *
 * What it is: one entry per sessions dir (listing scope QUIET_TREE_SCOPE), written by a quiet
 * discovery (quiet.ts) that succeeded, i.e. whose walk held every listing and whose every document
 * had a checkpoint its stat matched. It holds, in walk order, the stat numbers of the sessions dir
 * and of each session folder (dev, ino, mtimeMs, ctimeMs: the mark of src/adapter/listings.ts) and
 * of each document (size, ino, mtimeMs: what the gate compares, fingerprint.ts), the names, the
 * index marks and problems of the quiet entry it relied on, and the checkpoints' token
 * (KnownCheckpoints.token) of the checkpoints those documents matched.
 *
 * Why equal numbers are enough, each as its existing check: a folder whose mark is unchanged has
 * the entries its confirmed listing had (listings.ts: an entry added, removed or renamed changes
 * its mtime and ctime); a document whose size, inode and mtime are unchanged passes the gate
 * (fingerprint.ts, the same trust and the same limit); `sessions.db` and its WAL with the same
 * marks give the same index (index-cache.ts); and an unchanged token says the checkpoints are the
 * ones the documents matched when the entry was written (a put or a delete by any process, any
 * build, changes it; Checkpoints.token says its limit). The entry vouches only for checkpoints
 * committed before it was written (they were loaded from the ledger), so a kill at any point
 * leaves either no entry or one that is still true. Anything that differs takes the quiet or the
 * full discovery, which drops the entry (the quiet one writes it again).
 */
import type { Stats } from "node:fs";
import { dirPrefix } from "../../util/dir-prefix.ts";
import { type ListingStore, loadListing } from "../listings.ts";
import { statNow } from "../stat-now.ts";
import type { Problem } from "../types.ts";
import { MESSAGES_SUFFIX } from "./compaction/files.ts";
import type { WalkFacts } from "./discover.ts";
import { indexMarks, storedProblems } from "./quiet.ts";

/** Listing scope of the snapshot: one entry per sessions dir. */
export const QUIET_TREE_SCOPE = "cline.quiet-tree";

/** The stored form's version (the first line of `entries`); another is no snapshot. */
const FORMAT = "1";
/** The first number: a value whose bytes tell a snapshot written with another byte order. */
const MAGIC = 1.5;
const HEADER = 3;
const MARK = 4;
const DOC = 3;

/**
 * The snapshot of a quiet discovery's tree, or undefined when there is none to take (no sessions
 * dir, a symlinked folder, no document). `docs`: the walk's document paths; `docStats`: size, ino
 * and mtimeMs of each, as the quiet discovery's stat found them (equal to its checkpoint).
 */
export function encodeQuietTree(
  sessionsDir: string,
  facts: WalkFacts,
  docs: readonly { readonly path: string }[],
  docStats: readonly number[],
  quiet: { readonly indexMark: string; readonly problems: readonly Problem[]; readonly token: string },
): string | undefined {
  const folders = facts.folders.length;
  if (facts.linked || docs.length === 0 || facts.marks.length !== MARK * (folders + 1)) return undefined;
  if (docStats.length !== DOC * docs.length) return undefined;
  const under = dirPrefix(sessionsDir);
  const numbers = new Float64Array(HEADER + MARK + folders * (1 + MARK) + docs.length * DOC);
  numbers[0] = MAGIC;
  numbers[1] = folders;
  numbers[2] = docs.length;
  numbers.set(facts.marks.slice(0, MARK), HEADER);
  let k = HEADER + MARK;
  const names: string[] = [];
  for (let f = 0; f < folders; f++) {
    const name = facts.folders[f] as string;
    const first = facts.firstDoc[f] as number;
    const end = f + 1 < folders ? (facts.firstDoc[f + 1] as number) : docs.length;
    numbers[k++] = end - first;
    for (let m = 0; m < MARK; m++) numbers[k++] = facts.marks[MARK * (f + 1) + m] as number;
    names.push(name);
    const prefix = `${under}${name}/`;
    for (let d = first; d < end; d++) {
      const path = (docs[d] as { readonly path: string }).path;
      // The walk builds every path so; anything else is not a tree this can describe.
      if (!path.startsWith(prefix)) return undefined;
      const file = path.slice(prefix.length);
      if (file === "") return undefined;
      // The lead document's usual name (`<folder>.messages.json`) as "" (no document is named
      // just the suffix): half the names' bytes at 10,000 sessions.
      names.push(file === name + MESSAGES_SUFFIX ? "" : file);
      for (let m = 0; m < DOC; m++) numbers[k++] = docStats[DOC * d + m] as number;
    }
  }
  if (facts.folders.some((n) => n.includes("/") || n === "")) return undefined;
  if (names.some((n) => n.includes("/"))) return undefined;
  const bytes = Buffer.from(numbers.buffer, numbers.byteOffset, numbers.byteLength).toString("base64");
  // Every line but the last is free of "\n" (JSON escapes it; base64 has none); names may hold one.
  return [FORMAT, quiet.token, JSON.stringify(quiet.problems), quiet.indexMark, bytes, names.join("/")].join(
    "\n",
  );
}

/** The lines of a stored snapshot, or undefined when it is not one this version wrote. */
function decode(entries: string):
  | {
      readonly token: string;
      readonly problems: Problem[];
      readonly indexMark: string;
      readonly numbers: Float64Array;
      readonly names: string;
    }
  | undefined {
  const lines: string[] = [];
  let at = 0;
  for (let i = 0; i < 5; i++) {
    const nl = entries.indexOf("\n", at);
    if (nl < 0) return undefined;
    lines.push(entries.slice(at, nl));
    at = nl + 1;
  }
  const [format, token, problemsJson, indexMark, bytes] = lines as [string, string, string, string, string];
  if (format !== FORMAT) return undefined;
  const problems = storedProblems(problemsJson);
  if (problems === undefined) return undefined;
  const raw = Buffer.from(bytes, "base64");
  if (raw.byteLength % 8 !== 0 || raw.byteLength < 8 * (HEADER + MARK)) return undefined;
  // A copy into its own buffer: a Float64Array needs an 8-byte-aligned offset.
  const numbers = new Float64Array(raw.byteLength / 8);
  new Uint8Array(numbers.buffer).set(raw);
  if (numbers[0] !== MAGIC) return undefined;
  const folders = numbers[1] as number;
  const docs = numbers[2] as number;
  if (numbers.length !== HEADER + MARK + folders * (1 + MARK) + docs * DOC) return undefined;
  return { token, problems, indexMark, numbers, names: entries.slice(at) };
}

const sameMarkAt = (n: Float64Array, k: number, s: Stats): boolean =>
  n[k] === s.dev && n[k + 1] === s.ino && n[k + 2] === s.mtimeMs && n[k + 3] === s.ctimeMs;

/** What a snapshot that holds answers: how many documents are unchanged, and the stored problems. */
export interface QuietTree {
  readonly unchanged: number;
  readonly problems: readonly Problem[];
}

/**
 * Whether the stored snapshot of `sessionsDir` still holds: the tree, the index and the
 * checkpoints (`token`, asked only once the index marks held) are those it was taken with.
 * `stored` tells the caller an entry existed (to drop it when it did not hold).
 */
export function quietTreeHolds(
  store: ListingStore,
  sessionsDir: string,
  dbDir: string,
  token: () => string,
  now: () => number,
): { readonly tree?: QuietTree; readonly stored: boolean } {
  const entry = loadListing(store, QUIET_TREE_SCOPE, sessionsDir);
  if (entry === undefined) return { stored: false };
  const snap = decode(entry.entries);
  if (snap === undefined || snap.indexMark !== indexMarks(dbDir, now).mark || snap.token !== token())
    return { stored: true };
  const n = snap.numbers;
  const root = statNow(sessionsDir);
  if (root === undefined || !sameMarkAt(n, HEADER, root)) return { stored: true };
  const under = dirPrefix(sessionsDir);
  const names = snap.names;
  const folders = n[1] as number;
  // Where each folder's numbers and name begin, found without a stat: the folders are then
  // checked newest first (last in walk order, as Cline's time-prefixed ids sort), where a change
  // usually is, so a report after new activity stops at the first stats instead of the last.
  const numAt = new Int32Array(folders);
  const nameAt = new Int32Array(folders);
  let k = HEADER + MARK;
  let at = 0;
  let docs = 0;
  for (let f = 0; f < folders; f++) {
    const docCount = n[k] as number;
    if (!Number.isInteger(docCount) || docCount < 0) return { stored: true };
    numAt[f] = k;
    nameAt[f] = at;
    k += 1 + MARK + docCount * DOC;
    docs += docCount;
    for (let d = 0; d <= docCount; d++) {
      if (at > names.length) return { stored: true };
      const end = names.indexOf("/", at);
      at = end < 0 ? names.length + 1 : end + 1;
    }
  }
  if (k !== n.length || docs !== n[2] || at !== names.length + 1) return { stored: true };
  // Names are read in place, one slice each: a path lives only for its stat (young garbage).
  const nameFrom = (from: number): string => {
    const end = names.indexOf("/", from);
    return names.slice(from, end < 0 ? names.length : end);
  };
  for (let f = folders - 1; f >= 0; f--) {
    k = numAt[f] as number;
    at = nameAt[f] as number;
    const docCount = n[k] as number;
    const name = nameFrom(at);
    at += name.length + 1;
    const dir = under + name;
    const s = statNow(dir);
    if (s === undefined || !sameMarkAt(n, k + 1, s)) return { stored: true };
    k += 1 + MARK;
    const prefix = `${dir}/`;
    for (let d = 0; d < docCount; d++) {
      const file = nameFrom(at);
      at += file.length + 1;
      const ds = statNow(file === "" ? prefix + name + MESSAGES_SUFFIX : prefix + file);
      if (ds === undefined || n[k] !== ds.size || n[k + 1] !== ds.ino || n[k + 2] !== ds.mtimeMs)
        return { stored: true };
      k += DOC;
    }
  }
  return { tree: { unchanged: docs, problems: snap.problems }, stored: true };
}
