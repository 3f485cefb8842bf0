/**
 * One measurement in a fresh process, so its peak RSS (`process.resourceUsage().maxRSS`) is
 * its own: `node --import tsx bench/lib/child.ts '<json task>'` prints one JSON line.
 *   {"mode":"pass","clineDir":D,"stateDir":S}  a full collection (runPass) into the ledger in S
 *   {"mode":"raw","sessionsDir":D}              the floor: walk the tree, read every document raw
 *   {"mode":"tasks-pass","home":H,"stateDir":S} a full collection of the task-format roots of H
 *   {"mode":"tasks-raw","tasksDir":D}           the floor: every task's ui_messages.json read raw
 */
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createClineAdapter } from "../../src/adapter/cline/adapter.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import type { Adapter } from "../../src/adapter/types.ts";
import { runPass } from "../../src/collector/pass.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { applyHeapPolicy } from "../../src/util/heap.ts";

export type ChildTask =
  | { readonly mode: "pass"; readonly clineDir: string; readonly stateDir: string }
  | { readonly mode: "raw"; readonly sessionsDir: string }
  | { readonly mode: "tasks-pass"; readonly home: string; readonly stateDir: string }
  | { readonly mode: "tasks-raw"; readonly tasksDir: string };

export interface ChildResult {
  readonly ms: number;
  /** RSS peak over the whole child (KB), and its RSS peak before the timed work began. */
  readonly maxRssKB: number;
  readonly startRssKB: number;
  readonly documents: number;
  readonly bytes: number;
  readonly events: number;
  readonly calls: number;
  readonly failed: number;
  readonly problems: number;
}

const SUFFIX = ".messages.json";
const CHUNK = 2 * 1024 * 1024;

/** Every document of a sessions tree, `<root>/<file>.messages.json`. */
export function listDocuments(sessionsDir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(sessionsDir, { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    const dir = join(sessionsDir, d.name);
    for (const f of readdirSync(dir)) if (f.endsWith(SUFFIX)) out.push(join(dir, f));
  }
  return out;
}

/** Reads every document in 2 MiB chunks into one reused buffer: what any reader must at least do. */
export function readAllRaw(sessionsDir: string): { documents: number; bytes: number } {
  return readFilesRaw(listDocuments(sessionsDir));
}

/** Every task folder's ui_messages.json of a tasks dir. */
export function listTaskDocuments(tasksDir: string): string[] {
  return readdirSync(tasksDir).map((id) => join(tasksDir, id, "ui_messages.json"));
}

/** Reads the files in 2 MiB chunks into one reused buffer. */
export function readFilesRaw(docs: readonly string[]): { documents: number; bytes: number } {
  const buf = Buffer.allocUnsafe(CHUNK);
  let bytes = 0;
  for (const p of docs) {
    const fd = openSync(p, "r");
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, null);
        if (n === 0) break;
        bytes += n;
      }
    } finally {
      closeSync(fd);
    }
  }
  return { documents: docs.length, bytes };
}

async function measure(task: ChildTask): Promise<ChildResult> {
  const startRssKB = process.resourceUsage().maxRSS;
  if (task.mode === "raw" || task.mode === "tasks-raw") {
    const t = performance.now();
    const r =
      task.mode === "raw" ? readAllRaw(task.sessionsDir) : readFilesRaw(listTaskDocuments(task.tasksDir));
    const ms = performance.now() - t;
    return {
      ms,
      maxRssKB: process.resourceUsage().maxRSS,
      startRssKB,
      documents: r.documents,
      bytes: r.bytes,
      events: 0,
      calls: 0,
      failed: 0,
      problems: 0,
    };
  }
  const ledger = Ledger.open(task.stateDir);
  try {
    const adapter: Adapter =
      task.mode === "pass"
        ? createClineAdapter(resolveClinePaths({ clineDir: task.clineDir }, {}, task.clineDir, task.clineDir))
        : createClineTasksAdapter(
            taskRootCandidates({ home: task.home, platform: "linux", env: {}, cwd: task.home }),
          );
    const t = performance.now();
    const r = await runPass(adapter, ledger);
    const ms = performance.now() - t;
    return {
      ms,
      maxRssKB: process.resourceUsage().maxRSS,
      startRssKB,
      documents: r.read,
      bytes: 0,
      events: r.eventsAdded,
      calls: r.callsAdded,
      failed: r.failed,
      problems: r.problems.length,
    };
  } finally {
    ledger.close();
  }
}

const SELF = fileURLToPath(import.meta.url);

/** Runs `task` in a fresh Node process (with tsx) and returns its measurement. */
export function runChild(task: ChildTask, nodeFlags: readonly string[] = []): ChildResult {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const r = spawnSync(process.execPath, [...nodeFlags, "--import", tsx, SELF, JSON.stringify(task)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`bench child ${task.mode} failed (${r.status}): ${r.stderr}`);
  const last = r.stdout.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as ChildResult;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const task = JSON.parse(process.argv[2] as string) as ChildTask;
  // The task bench measures what `cline-otel run` does, which applies the heap policy first
  // (src/cli/main.ts); the older CLI cases keep the numbers docs/performance.md records for them.
  if (task.mode === "tasks-pass") applyHeapPolicy();
  process.stdout.write(`${JSON.stringify(await measure(task))}\n`);
}
