/**
 * `state/taskHistory.json` of a root: per task its cwd (the project) and Cline's lifetime totals.
 * The totals are never added to anything: they only check the per-request sums (a mismatch is
 * reported). Re-read only when its fingerprint changes; a failed read keeps the last good one.
 */

import { statSync } from "node:fs";
import { join } from "node:path";
import type { FileStat } from "../../scan/scanner.ts";
import { ScanError, scanFile, toFileStat } from "../../scan/scanner.ts";
import { isWrongType } from "../../scan/schema.ts";
import { readWhole, sameStat } from "../fingerprint.ts";
import type { Problem } from "../types.ts";
import type { RecordedTokens } from "./provider-rule.ts";
import { taskHistorySchema } from "./schema.ts";

export interface HistoryEntry {
  readonly project: string;
  /** Undefined when the entry's totals are not all counts. */
  readonly totals?: RecordedTokens;
}

export const HISTORY_FILE = join("state", "taskHistory.json");

interface Loaded {
  readonly stat: FileStat;
  readonly entries: ReadonlyMap<string, HistoryEntry>;
}

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** One HistoryCache per adapter: the last good read of each root's history. */
export class HistoryCache {
  private readonly loaded = new Map<string, Loaded>();

  /** The root's entries now (an empty map when it has no history file). */
  async read(root: string, problems: Problem[]): Promise<ReadonlyMap<string, HistoryEntry>> {
    const path = join(root, HISTORY_FILE);
    const prev = this.loaded.get(root);
    let now: FileStat;
    try {
      now = toFileStat(statSync(path, { bigint: true }));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        this.loaded.delete(root);
        return new Map();
      }
      problems.push({ path, code: "history-unreadable", detail: `stat failed: ${code}` });
      return prev?.entries ?? new Map();
    }
    if (prev !== undefined && sameStat(prev.stat, now)) return prev.entries;
    try {
      const r = await scanFile(path, taskHistorySchema);
      // Rewritten through a temp file and a rename: a read that raced one is retried next pass.
      if (!readWhole(r)) return prev?.entries ?? new Map();
      const entries = toEntries(r.value);
      this.loaded.set(root, { stat: r.statBefore, entries });
      return entries;
    } catch (e) {
      if (!(e instanceof ScanError)) throw e;
      problems.push({ path, code: "history-unreadable", detail: e.message });
      return prev?.entries ?? new Map();
    }
  }
}

function toEntries(v: unknown): Map<string, HistoryEntry> {
  const out = new Map<string, HistoryEntry>();
  if (!Array.isArray(v)) return out;
  for (const e of v as Record<string, unknown>[]) {
    if (isWrongType(e) || typeof e.id !== "string") continue;
    const tokensIn = count(e.tokensIn);
    const tokensOut = count(e.tokensOut);
    const cacheReads = count(e.cacheReads ?? 0);
    const cacheWrites = count(e.cacheWrites ?? 0);
    const totals =
      tokensIn !== undefined &&
      tokensOut !== undefined &&
      cacheReads !== undefined &&
      cacheWrites !== undefined
        ? { tokensIn, tokensOut, cacheReads, cacheWrites }
        : undefined;
    out.set(e.id, {
      project: typeof e.cwdOnTaskInitialization === "string" ? e.cwdOnTaskInitialization : "",
      ...(totals === undefined ? {} : { totals }),
    });
  }
  return out;
}

/** Cline's lifetime totals above the sums of the per-request entries (tokens we would miss), or undefined. */
export function historyMismatch(sums: RecordedTokens, h: HistoryEntry | undefined): string | undefined {
  if (h?.totals === undefined) return undefined;
  const t = h.totals;
  const names = ["tokensIn", "tokensOut", "cacheReads", "cacheWrites"] as const;
  // Only a history ABOVE the requests' sums says tokens were missed. taskHistory.json is rewritten
  // after ui_messages.json (docs/cline-format.md §15.6), so while a task runs it lags behind by the
  // newest request: a history below the sums is that lag, not a mismatch.
  const off = names.filter((n) => t[n] > sums[n]);
  if (off.length === 0) return undefined;
  return off.map((n) => `${n}: requests ${sums[n]}, taskHistory ${t[n]}`).join("; ");
}
