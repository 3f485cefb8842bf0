/**
 * File fingerprints (fileconsumer's vocabulary): a source's size, nanosecond mtime, inode and
 * device, kept as its checkpoint. The one place that turns a stat into a checkpoint and decides
 * whether a file changed, for every surface of every adapter.
 */
import { type Stats, statSync } from "node:fs";
import { type FileStat, toFileStat } from "../scan/scanner.ts";
import { statNow } from "./stat-now.ts";
import type { Observation, Source, SourceCheckpoint } from "./types.ts";

/** The fingerprint of `path` now (throws the stat's error: ENOENT for a vanished file). */
export function statFile(path: string): FileStat {
  return toFileStat(statSync(path, { bigint: true }));
}

export function checkpointOf(path: string, s: FileStat): SourceCheckpoint {
  return { path, size: s.size, mtimeNs: s.mtimeNs.toString(), ino: s.ino, dev: s.dev };
}

/**
 * The gate: a file whose size, mtime and inode match its checkpoint is not opened. There is no
 * tail read to be had for a document rewritten whole in place: any change means a full re-read,
 * collapsed by the persisted ids.
 */
export function unchangedSince(cp: SourceCheckpoint | undefined, s: FileStat): boolean {
  return cp !== undefined && cp.size === s.size && cp.mtimeNs === s.mtimeNs.toString() && cp.ino === s.ino;
}

const NS_PER_S = 1_000_000_000n;

/**
 * A checkpoint's nanosecond mtime as a plain (non-bigint) stat reports it: `mtimeMs`, computed as
 * Node computes it from the kernel's seconds and nanoseconds (`sec * 1e3 + nsec / 1e6`, the same
 * operations in the same order, so an unchanged file compares equal bit for bit;
 * test/adapter/fingerprint.test.ts checks it against this Node). Should a Node ever round
 * differently, every file would look changed and be read again: slower, never wrong.
 */
export function mtimeMsOfNs(mtimeNs: string): number {
  const cut = mtimeNs.length - 9;
  if (cut > 0 && cut <= 12 && mtimeNs.charCodeAt(0) !== 45 /* "-" */) {
    // Digits read in place (no substrings: this runs once per document per pass); both parts
    // are integers far below 2^53, so exact. A non-digit gives NaN: "changed", read again.
    let sec = 0;
    let nsec = 0;
    for (let i = 0; i < mtimeNs.length; i++) {
      const d = mtimeNs.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return Number.NaN;
      if (i < cut) sec = sec * 10 + d;
      else nsec = nsec * 10 + d;
    }
    return sec * 1e3 + nsec / 1e6;
  }
  // Before 2001-09-09 or before 1970: the kernel's seconds are floored, its nanoseconds >= 0.
  if (!/^-?\d+$/.test(mtimeNs)) return Number.NaN;
  const ns = BigInt(mtimeNs);
  let sec = ns / NS_PER_S;
  if (ns < 0n && sec * NS_PER_S !== ns) sec -= 1n;
  return Number(sec) * 1e3 + Number(ns - sec * NS_PER_S) / 1e6;
}

/**
 * The gate on a plain stat (half the work of a bigint one, and no BigInt per file): the size and
 * inode as in `unchangedSince`, the mtime to the resolution of a double's milliseconds (2^-12 ms,
 * 0.24 µs, until 2039; 0.49 µs after). What that can miss and the nanosecond gate would see: a
 * rewrite of the same size whose mtime is less than 0.5 µs from the checkpoint's, and no such
 * rewrite is seen after a read: the checkpoint is the stat before a whole read, and the read ends
 * with a second stat that matched it, so a later write is stamped later by at least the read's
 * own duration (well over a microsecond) on a fine-grained clock, or, on the usual coarse clock
 * (a kernel tick), either in the same tick (the same nanoseconds: no gate sees it; see
 * docs/design.md, known limits) or at least a tick (>= 1 ms) later.
 */
export function unchangedSinceStat(
  cp: SourceCheckpoint | undefined,
  s: Pick<Stats, "size" | "ino" | "mtimeMs">,
): boolean {
  return cp !== undefined && cp.size === s.size && cp.ino === s.ino && mtimeMsOfNs(cp.mtimeNs) === s.mtimeMs;
}

/**
 * Whether the file is certainly unchanged since `cp`, by a stat now (Adapter.unchangedNow): false
 * when it changed, vanished or cannot be stat-ed, which collectIfChanged then reports.
 */
export function unchangedNow(path: string, cp: SourceCheckpoint): boolean {
  // Not skipped when it cannot be stat-ed: "unsure" sends the source to collectIfChanged, which
  // reports the failure.
  const s = statNow(path);
  return s !== undefined && unchangedSinceStat(cp, s);
}

/**
 * The incremental read of one source, for every surface: an unchanged file is not opened; one
 * that vanished or cannot be stat-ed fails (retried next pass); any other is `read` in full (the
 * read takes its own nanosecond stats, from which the next checkpoint comes).
 */
export async function collectIfChanged(
  source: Source,
  checkpoint: SourceCheckpoint | undefined,
  read: (source: Source) => Promise<Observation>,
): Promise<Observation> {
  let s: Stats | undefined;
  try {
    s = statSync(source.path, { throwIfNoEntry: false });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      status: "failed",
      source,
      problem: { path: source.path, code: "unreadable", detail: `stat failed: ${code}` },
    };
  }
  if (s === undefined) {
    return {
      status: "failed",
      source,
      problem: { path: source.path, code: "vanished", detail: "stat failed: ENOENT" },
    };
  }
  if (checkpoint !== undefined && unchangedSinceStat(checkpoint, s)) {
    return { status: "unchanged", source, checkpoint };
  }
  return read(source);
}

export function sameStat(a: FileStat, b: FileStat): boolean {
  return a.size === b.size && a.mtimeNs === b.mtimeNs && a.ino === b.ino;
}

/**
 * Whether a scan read one version of the file, whole: the same fingerprint before and after,
 * and every byte of it. False for a read that raced a rewrite (retried) or a replacement.
 */
export function readWhole(r: {
  readonly statBefore: FileStat;
  readonly statAfter: FileStat;
  readonly bytesRead: number;
}): boolean {
  return sameStat(r.statBefore, r.statAfter) && r.bytesRead === r.statAfter.size;
}
