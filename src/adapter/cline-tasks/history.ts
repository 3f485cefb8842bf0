/**
 * `state/taskHistory.json` of a root: per task its cwd (the project) and Cline's lifetime totals.
 * The totals are never added to anything: they only check the per-request sums (a mismatch is
 * reported). Re-read only when its fingerprint changes; a failed read keeps the last good one.
 */

import { statSync } from "node:fs";
import { join } from "node:path";
import type { FileStat } from "../../scan/scanner.ts";
import { ScanError, scanFile, toFileStat } from "../../scan/scanner.ts";
import { isWrongType, wrongTypeShown } from "../../scan/schema.ts";
import { readWhole, sameStat } from "../fingerprint.ts";
import type { Problem } from "../types.ts";
import type { RecordedTokens } from "./provider-rule.ts";
import { taskHistorySchema } from "./schema.ts";
import type { ScannedTaskHistory } from "./types.ts";

export interface HistoryEntry {
  readonly project: string;
  /** Undefined when the entry's totals are not all counts. */
  readonly totals?: RecordedTokens;
}

export const HISTORY_FILE = join("state", "taskHistory.json");

interface Loaded {
  readonly stat: FileStat;
  readonly entries: ReadonlyMap<string, HistoryEntry>;
  /** What is wrong with that version of the file: reported at every read of it, as a failed read is. */
  readonly problem?: Problem;
}

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** One HistoryCache per adapter: the last good read of each root's history. */
export class HistoryCache {
  private readonly loaded = new Map<string, Loaded>();
  /** A root without a history file: always this one empty map (discovery compares entries by identity). */
  private readonly none: ReadonlyMap<string, HistoryEntry> = new Map();

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
        return this.none;
      }
      problems.push({ path, code: "history-unreadable", detail: `stat failed: ${code}` });
      return prev?.entries ?? new Map();
    }
    if (prev !== undefined && sameStat(prev.stat, now)) {
      if (prev.problem !== undefined) problems.push(prev.problem);
      return prev.entries;
    }
    try {
      const r = await scanFile(path, taskHistorySchema);
      // Rewritten through a temp file and a rename: a read that raced one is retried next pass.
      if (!readWhole(r)) return prev?.entries ?? new Map();
      const { entries, problem } = historyEntries(r.value, path);
      this.loaded.set(root, { stat: r.statBefore, entries, ...(problem === undefined ? {} : { problem }) });
      if (problem !== undefined) problems.push(problem);
      return entries;
    } catch (e) {
      if (!(e instanceof ScanError)) throw e;
      problems.push({ path, code: "history-unreadable", detail: e.message });
      return prev?.entries ?? new Map();
    }
  }
}

/**
 * The entries of a whole taskHistory.json by task id, and what is wrong with it: a document that
 * is not an array (`not-a-task-history`: no entry, so no task has a project or a check) or entries
 * without a string `id` (`invalid-history-entry`: skipped, counted in one problem). Totals that are
 * not counts only drop that entry's check (never added anyway).
 */
export function historyEntries(
  v: ScannedTaskHistory | undefined,
  path: string,
): { readonly entries: Map<string, HistoryEntry>; readonly problem?: Problem } {
  const out = new Map<string, HistoryEntry>();
  if (v === undefined || isWrongType(v)) {
    const shape = v === undefined ? "nothing" : wrongTypeShown(v);
    return {
      entries: out,
      problem: { path, code: "not-a-task-history", detail: `top-level value is ${shape}, not an array` },
    };
  }
  let invalid = 0;
  for (const e of v) {
    if (isWrongType(e) || typeof e.id !== "string") {
      invalid++;
      continue;
    }
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
  if (invalid === 0) return { entries: out };
  const detail = `${invalid} of ${v.length} entries are not an object with a string id: skipped`;
  return { entries: out, problem: { path, code: "invalid-history-entry", detail } };
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
