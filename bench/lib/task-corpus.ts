/**
 * Task-format corpora for the benchmarks (bench/tasks.ts, bench/rename.ts): N task folders
 * `<home>/.cline/data/tasks/<id>/ui_messages.json` as the legacy core writes them (12 requests
 * by default, each with a realistic request text inside its api_req_started, tool and command
 * messages between them), and the operations the benches time on them.
 */
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { taskRootCandidates } from "../../src/adapter/cline-tasks/paths.ts";
import type { TaskRoot } from "../../src/adapter/cline-tasks/types.ts";
import { checkpointOf, statFile } from "../../src/adapter/fingerprint.ts";
import type { Adapter, Observation } from "../../src/adapter/types.ts";
import type { Ledger } from "../../src/ledger/ledger.ts";

export const TASK_REQUESTS = 12;
export const FIRST_TASK_ID = 1_796_000_000_000;

function requestText(i: number): string {
  const lines = Array.from({ length: 40 }, (_, k) => `line ${k} of the "environment" \\ details ${i} é`);
  return `<task>\nDo the thing ${i}\n</task>\n<environment_details>\n${lines.join("\n")}\n</environment_details>`;
}

/** Task `t`'s ui_messages.json with `requests` settled requests, all distinct by `ts`. */
export function taskDoc(t: number, requests = TASK_REQUESTS): string {
  const mi = { providerId: "anthropic", modelId: "claude-sonnet-4-5", mode: "act" };
  const msgs: object[] = [{ ts: 1, type: "say", say: "task", text: `task ${t}`, modelInfo: mi }];
  for (let r = 0; r < requests; r++) {
    const ts = FIRST_TASK_ID + t * 1000 + r * 10;
    const counts = { tokensIn: 100 + r, tokensOut: 10, cacheReads: 1000, cacheWrites: 50, cost: 0.01 };
    msgs.push({
      ts,
      type: "say",
      say: "api_req_started",
      text: JSON.stringify({ request: requestText(r), ...counts }),
      modelInfo: mi,
    });
    msgs.push({
      ts: ts + 1,
      type: "say",
      say: "text",
      text: "I will read the file and then run the tests.",
      modelInfo: mi,
    });
    msgs.push({
      ts: ts + 2,
      type: "say",
      say: "tool",
      text: JSON.stringify({ tool: "readFile", path: "src/a.ts", content: "x".repeat(500) }),
    });
    msgs.push({ ts: ts + 3, type: "say", say: "command", text: "npm test" });
  }
  msgs.push({ ts: 2_000_000_000_000, type: "ask", ask: "completion_result", text: "done" });
  return JSON.stringify(msgs);
}

export interface TaskCorpus {
  readonly home: string;
  readonly tasksDir: string;
  readonly files: readonly string[];
  readonly bytes: number;
  readonly events: number;
  /** The task-format roots of `home`, as the daemon resolves them. */
  readonly roots: readonly TaskRoot[];
}

export function taskDir(c: Pick<TaskCorpus, "tasksDir">, t: number): string {
  return join(c.tasksDir, String(FIRST_TASK_ID + t));
}

/** A task's task_metadata.json: 20 files in context and one host entry (cline.client, §15.10). */
export function metadataDoc(t: number): string {
  return JSON.stringify({
    files_in_context: Array.from({ length: 20 }, (_, k) => ({
      path: `src/module${k}/file${t}.ts`,
      record_state: "active",
      record_source: "read_tool",
      cline_read_date: 1_796_000_000_000 + k,
      cline_edit_date: null,
      user_edit_date: null,
    })),
    model_usage: [{ ts: 1, model_id: "claude-sonnet-4-5", model_provider_id: "anthropic", mode: "act" }],
    environment_history: [
      { ts: 1, os_name: "linux", os_arch: "x64", host_name: "Cline CLI - Node.js", host_version: "2.18.0" },
    ],
  });
}

/**
 * Writes `tasks` task folders under `<home>/.cline/data/tasks`: `ui_messages.json` (in `files`,
 * what the raw and naive baselines read) and `task_metadata.json` (which the backfill reads too).
 */
export function writeTaskCorpus(home: string, tasks: number, requests = TASK_REQUESTS): TaskCorpus {
  const tasksDir = join(home, ".cline", "data", "tasks");
  let bytes = 0;
  const files: string[] = [];
  for (let t = 0; t < tasks; t++) {
    const dir = taskDir({ tasksDir }, t);
    mkdirSync(dir, { recursive: true });
    const doc = taskDoc(t, requests);
    bytes += Buffer.byteLength(doc);
    const file = join(dir, "ui_messages.json");
    writeFileSync(file, doc);
    writeFileSync(join(dir, "task_metadata.json"), metadataDoc(t));
    files.push(file);
  }
  writeTaskHistory(home, tasks);
  const roots = taskRootCandidates({ home, platform: "linux", env: {}, cwd: home });
  return { home, tasksDir, files, bytes, events: tasks * requests, roots };
}

/**
 * `state/taskHistory.json` with an entry per task (its cwd; no totals, so no mismatch check),
 * written as the legacy core does, through a temp file and a rename (2-4 times per request).
 */
export function writeTaskHistory(home: string, tasks: number): void {
  const state = join(home, ".cline", "data", "state");
  mkdirSync(state, { recursive: true });
  const entries = Array.from({ length: tasks }, (_, t) => ({
    id: String(FIRST_TASK_ID + t),
    ts: FIRST_TASK_ID + t * 1000,
    task: `task ${t}`,
    cwdOnTaskInitialization: `/home/dev/src/project-${t % 50}`,
  }));
  const tmp = join(state, `taskHistory.json.tmp.${Date.now()}.b3nch.json`);
  writeFileSync(tmp, JSON.stringify(entries));
  renameSync(tmp, join(state, "taskHistory.json"));
}

/**
 * Task `t` rewritten as the legacy core does it: the whole file to a temp name, renamed onto
 * ui_messages.json (a new inode), with `requests` requests. Returns its path.
 */
export function renameOntoTask(c: Pick<TaskCorpus, "tasksDir">, t: number, requests: number): string {
  const dir = taskDir(c, t);
  const path = join(dir, "ui_messages.json");
  const tmp = join(dir, `ui_messages.json.tmp.${Date.now()}.b3nch.json`);
  writeFileSync(tmp, taskDoc(t, requests));
  renameSync(tmp, path);
  return path;
}

/** The floor of an idle pass: a readdir of the tasks dir and a stat of each task's document. */
export function taskStatWalk(tasksDir: string): number {
  let n = 0;
  for (const id of readdirSync(tasksDir)) if (statSync(join(tasksDir, id, "ui_messages.json")).size > 0) n++;
  return n;
}

/**
 * Records every discovered document as collected (its checkpoint, no events) without reading
 * it, in batches: the state of a ledger that has collected them, in a fraction of the time.
 */
export async function seedTaskCheckpoints(adapter: Adapter, ledger: Ledger): Promise<number> {
  const { sources } = await adapter.discover();
  const obs: Observation[] = sources.map((source) => ({
    status: "read",
    source,
    checkpoint: checkpointOf(source.path, statFile(source.path)),
    events: [],
    toolCalls: [],
    problems: [],
  }));
  for (let i = 0; i < obs.length; i += 512)
    ledger.commitAll(obs.slice(i, i + 512) as Extract<Observation, { status: "read" }>[]);
  return sources.length;
}
