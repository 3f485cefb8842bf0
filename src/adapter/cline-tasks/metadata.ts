/**
 * A task's `task_metadata.json`, read for `environment_history[].ts` and `.host_name` only
 * (docs/cline-format.md §15.10): which host ran the task from when. The file is rewritten in
 * place (§15.7), so a read can race a write; what is torn is said so, and the caller decides.
 * `files_in_context`, `model_usage` and every other field are crossed as bytes.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { type FileStat, ScanError, scanFile, toFileStat } from "../../scan/scanner.ts";
import { isWrongType, wrongTypeShown } from "../../scan/schema.ts";
import { readWhole } from "../fingerprint.ts";
import { clientOfHostName, type HostOf } from "./host.ts";
import { taskMetadataSchema } from "./schema.ts";
import type { TaskRoot } from "./types.ts";

export const TASK_METADATA = "task_metadata.json";

/** `cline.client` of a host name outside the table on a root more than one client writes. */
export const UNKNOWN_TASK_CLIENT = "unknown";

export interface HostEntry {
  readonly ts: number;
  readonly host: HostOf;
}

export type MetadataRead =
  | { readonly status: "absent" }
  | { readonly status: "read"; readonly entries: readonly HostEntry[] }
  /** Torn or unparsable now; `stat` identifies that state of the file (undefined: it raced). */
  | { readonly status: "torn"; readonly detail: string; readonly stat?: FileStat }
  /** No write can be under way: not a file (a directory, a symlink loop) or a whole non-object. */
  | { readonly status: "unreadable"; readonly detail: string };

/**
 * What a failed scan of the file says: gone (absent); a state an in-place write passes through
 * (truncated, empty, unparsable: torn, read again); or a path no write of Cline's makes (a
 * directory, a FIFO, a symlink loop: unreadable at once). A symlink loop cannot be stat'ed, so
 * as torn it would have no stat to be recognised by and would fail the task's every read.
 */
export function metadataScanFailure(e: ScanError): "absent" | "torn" | "unreadable" {
  if (e.code === "not-a-file") return "unreadable";
  if (e.code !== "io") return "torn";
  if (/ENOENT/.test(e.message)) return "absent";
  return /ELOOP|ENOTDIR|EISDIR/.test(e.message) ? "unreadable" : "torn";
}

/** The file's stat now, or undefined when it cannot be taken (it is changing: a race). */
function statNow(path: string): FileStat | undefined {
  try {
    return toFileStat(statSync(path, { bigint: true }));
  } catch {
    // Undefined is the answer: the caller retries a torn read without a stat next pass.
    return undefined;
  }
}

/** The host entries of the task folder `taskDir`, in file order. */
export async function readTaskHosts(taskDir: string): Promise<MetadataRead> {
  const path = join(taskDir, TASK_METADATA);
  let r: Awaited<ReturnType<typeof scanFile<typeof taskMetadataSchema>>>;
  try {
    r = await scanFile(path, taskMetadataSchema);
  } catch (e) {
    if (!(e instanceof ScanError)) throw e;
    const kind = metadataScanFailure(e);
    if (kind === "absent") return { status: "absent" };
    if (kind === "unreadable") return { status: "unreadable", detail: e.message };
    // A truncated or empty file is the state between an in-place write's truncate and its end.
    const stat = statNow(path);
    return { status: "torn", detail: e.message, ...(stat === undefined ? {} : { stat }) };
  }
  if (!readWhole(r)) return { status: "torn", detail: "rewritten while being read" };
  const v = r.value;
  // A whole document (it scanned to its end) that is not an object: no write is under way.
  if (v === undefined || isWrongType(v))
    return {
      status: "unreadable",
      detail: `top-level value is ${v === undefined ? "nothing" : wrongTypeShown(v)}, not an object`,
    };
  const history = v.environment_history;
  const entries: HostEntry[] = [];
  if (history !== undefined && !isWrongType(history)) {
    for (const e of history) {
      if (isWrongType(e)) continue;
      const ts = typeof e.ts === "number" && Number.isFinite(e.ts) ? e.ts : 0;
      const name = typeof e.host_name === "string" ? e.host_name : undefined;
      entries.push({ ts, host: clientOfHostName(name) });
    }
  }
  return { status: "read", entries };
}

/** `cline.client` of a host name outside the table: see clientTimeline. */
export function unexpectedHostClient(root: TaskRoot): string {
  return root.client === "vscode" ? "vscode" : UNKNOWN_TASK_CLIENT;
}

export interface ClientAt {
  /** `cline.client` of a message at `ts`. */
  of(ts: number): string;
  /** The unexpected host names met (sanitized), for a problem line. */
  readonly unexpected: readonly string[];
}

/**
 * Which client wrote the messages of a task from when: each message belongs to the latest host
 * entry at or before its `ts` (the first entry for a message before all of them: the entry is
 * recorded as the task starts). A host that says nothing leaves the root's client; a host outside
 * the table is `vscode` on an editor's storage folder (only a VS Code-family editor writes there)
 * and `unknown` on the roots the CLI and JetBrains share.
 */
export function clientTimeline(entries: readonly HostEntry[], root: TaskRoot): ClientAt {
  const unexpected: string[] = [];
  const steps = entries
    .map((e) => {
      if (e.host.kind === "known") return { ts: e.ts, client: e.host.client as string };
      if (e.host.kind === "absent") return { ts: e.ts, client: root.client as string };
      if (!unexpected.includes(e.host.shown)) unexpected.push(e.host.shown);
      return { ts: e.ts, client: unexpectedHostClient(root) };
    })
    .sort((a, b) => a.ts - b.ts);
  return {
    of(ts) {
      let client = steps[0]?.client ?? root.client;
      for (const s of steps) if (s.ts <= ts) client = s.client;
      return client;
    },
    unexpected,
  };
}
