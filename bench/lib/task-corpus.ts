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
import { codeLine, codeLines, editPair, searchReplace } from "./edit-shapes.ts";
import { prng } from "./messages-doc.ts";

export const TASK_REQUESTS = 12;
export const FIRST_TASK_ID = 1_796_000_000_000;

function requestText(i: number): string {
  const lines = Array.from({ length: 40 }, (_, k) => `line ${k} of the "environment" \\ details ${i} é`);
  return `<task>\nDo the thing ${i}\n</task>\n<environment_details>\n${lines.join("\n")}\n</environment_details>`;
}

/** The result text the legacy core sends back for a saved file (then the file as saved, as here). */
function savedResult(tool: string, path: string, lines: readonly string[]): string {
  return (
    `[${tool} for '${path}'] Result:\nThe content was successfully saved to ${path}.\n\n` +
    `Here is the full, updated content of the file that was saved:\n\n<final_file_content path="${path}">\n` +
    `${lines.join("\n")}\n\n</final_file_content>\n\nIMPORTANT: For any future changes to this file, use the ` +
    "final_file_content shown above as your reference.\n\n"
  );
}

const DENIED =
  "The user denied this operation. The file was not updated, and maintains its original contents.";

/**
 * Request `r`'s file edit, as fixtures/cline-tasks/edits and approvals show them: a `say: "tool"`
 * (auto-approved) or `ask: "tool"` (asked) message `{tool, path, content}` whose content is
 * replace_in_file's SEARCH/REPLACE blocks (`editedExistingFile`) or the whole new file
 * (`newFileCreated`), and the text the next request answers it with (saved, or denied: 15 % of the
 * asked ones). Requests 3, 7, 11, ... edit nothing. Deterministic per (t, r).
 */
interface RequestEdit {
  readonly type: "say" | "ask";
  readonly tool: "newFileCreated" | "editedExistingFile";
  readonly path: string;
  readonly content: string;
  readonly answer: string;
}

function requestEdit(t: number, r: number): RequestEdit | undefined {
  if (r % 4 === 3) return undefined;
  const rand = prng(t * 7919 + r * 104_729 + 1);
  const ext = ["ts", "ts", "py", "md"][r % 4] as string;
  const path = `src/mod${r}/file${t}.${ext}`;
  const type: RequestEdit["type"] = r % 4 === 0 ? "say" : "ask";
  let lines = 0;
  const pick = (): string => codeLine(rand, lines++);
  if (r % 4 === 1) {
    const body = codeLines(rand, 10 + Math.floor(rand() * 50));
    const denied = rand() < 0.15;
    return {
      type,
      tool: "newFileCreated",
      path,
      content: body.join("\n"),
      answer: denied
        ? `[write_to_file for '${path}'] Result:\n${DENIED}\n\n`
        : savedResult("write_to_file", path, body),
    };
  }
  const blocks = Array.from({ length: 1 + Math.floor(rand() * 2) }, () =>
    editPair(codeLines(rand, 2 + Math.floor(rand() * 12)), rand, pick),
  );
  const denied = type === "ask" && rand() < 0.15;
  const saved = blocks.flatMap((b) => b.newLines);
  return {
    type,
    tool: "editedExistingFile",
    path,
    content: searchReplace(blocks),
    answer: denied
      ? `[replace_in_file for '${path}'] Result:\n${DENIED}\n\n`
      : savedResult("replace_in_file", path, saved),
  };
}

/** Tasks that commit (`ask: "command"` with REQ_APP appended, as the approvals fixture shows). */
const COMMIT_EVERY = 5;

/**
 * Task `t`'s ui_messages.json with `requests` settled requests, all distinct by `ts`. Each request
 * answers the calls of the one before (`[<tool> for '...'] Result:`, answers.ts), reads a file, edits
 * one (requestEdit) and runs the tests; every COMMIT_EVERY-th task commits in its request before the last.
 * The task ends with a completion ask: by default at a `ts` far in the future (2033: a task no
 * quiet time has ended, whose last calls stay open), with `quiet` right after its last request
 * (a history: every task over long ago, as a user's finished tasks are).
 */
export function taskDoc(t: number, requests = TASK_REQUESTS, quiet = false): string {
  const mi = { providerId: "anthropic", modelId: "claude-sonnet-4-5", mode: "act" };
  const msgs: object[] = [{ ts: 1, type: "say", say: "task", text: `task ${t}`, modelInfo: mi }];
  let answers = "";
  for (let r = 0; r < requests; r++) {
    const ts = FIRST_TASK_ID + t * 1000 + r * 10;
    const counts = { tokensIn: 100 + r, tokensOut: 10, cacheReads: 1000, cacheWrites: 50, cost: 0.01 };
    msgs.push({
      ts,
      type: "say",
      say: "api_req_started",
      text: JSON.stringify({ request: answers + requestText(r), ...counts }),
      modelInfo: mi,
    });
    msgs.push({
      ts: ts + 1,
      type: "say",
      say: "text",
      text: "I will read the file and then run the tests.",
      modelInfo: mi,
    });
    const read = "x".repeat(500);
    msgs.push({
      ts: ts + 2,
      type: "say",
      say: "tool",
      text: JSON.stringify({ tool: "readFile", path: "src/a.ts", content: read }),
    });
    answers = `[read_file for 'src/a.ts'] Result:\n${read}\n\n`;
    const edit = requestEdit(t, r);
    if (edit !== undefined) {
      const { type, tool, path, content } = edit;
      const text = JSON.stringify({
        tool,
        path,
        content,
        operationIsLocatedInWorkspace: true,
        startLineNumbers: [],
      });
      msgs.push({ ts: ts + 3, type, [type]: "tool", text });
      answers += edit.answer;
    }
    msgs.push({ ts: ts + 4, type: "say", say: "command", text: "npm test" });
    answers += "[execute_command for 'npm test'] Result:\nCommand executed successfully (exit code 0).\n\n";
    // The request before the last: the last one's calls are answered by no request.
    if (r === requests - 2 && t % COMMIT_EVERY === 0) {
      const line = `git add -A && git commit -q -m 'task ${t}'`;
      msgs.push({ ts: ts + 5, type: "ask", ask: "command", text: `${line}REQ_APP` });
      answers += `[execute_command for '${line}'] Result:\nCommand executed successfully (exit code 0).\n\n`;
    }
  }
  const end = quiet ? FIRST_TASK_ID + t * 1000 + (requests - 1) * 10 + 6 : 2_000_000_000_000;
  msgs.push({ ts: end, type: "ask", ask: "completion_result", text: "done" });
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
 * `quiet`: every task ended right after its last request (taskDoc).
 */
export function writeTaskCorpus(
  home: string,
  tasks: number,
  requests = TASK_REQUESTS,
  opts: { readonly quiet?: boolean } = {},
): TaskCorpus {
  const tasksDir = join(home, ".cline", "data", "tasks");
  let bytes = 0;
  const files: string[] = [];
  for (let t = 0; t < tasks; t++) {
    const dir = taskDir({ tasksDir }, t);
    mkdirSync(dir, { recursive: true });
    const doc = taskDoc(t, requests, opts.quiet === true);
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
