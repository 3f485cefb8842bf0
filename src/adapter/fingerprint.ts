/**
 * File fingerprints (fileconsumer's vocabulary): a source's size, nanosecond mtime, inode and
 * device, kept as its checkpoint. The one place that turns a stat into a checkpoint and decides
 * whether a file changed, for every surface of every adapter.
 */
import { statSync } from "node:fs";
import { type FileStat, toFileStat } from "../scan/scanner.ts";
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

/**
 * The incremental read of one source, for every surface: an unchanged file is not opened; one
 * that vanished or cannot be stat-ed fails (retried next pass); any other is `read` in full.
 */
export async function collectIfChanged(
  source: Source,
  checkpoint: SourceCheckpoint | undefined,
  read: (source: Source) => Promise<Observation>,
): Promise<Observation> {
  let s: FileStat;
  try {
    s = statFile(source.path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const problem = {
      path: source.path,
      code: code === "ENOENT" ? "vanished" : "unreadable",
      detail: `stat failed: ${code}`,
    };
    return { status: "failed", source, problem };
  }
  if (checkpoint !== undefined && unchangedSince(checkpoint, s)) {
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
