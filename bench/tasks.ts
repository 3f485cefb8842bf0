/**
 * Task-format benchmark: `npx tsx bench/tasks.ts [--tasks N]` (not part of npm test).
 *
 * N (default 10,000) task folders of `ui_messages.json` (12 requests each, with a realistic
 * request text inside every api_req_started, tool and command messages between them) and
 * `task_metadata.json` (20 files in context, one host entry), in one run:
 *   backfill: a full collection (runPass of the task adapter into a fresh ledger)
 *     vs raw readFileSync of the same files  vs  readFileSync + JSON.parse + JSON.parse of each text;
 *   the task_metadata.json scans alone (cline.client's share of the backfill);
 *   idle: a pass with nothing changed  vs  a readdir + stat walk of the same folders.
 * Prints ratios measured side by side (absolute times on a shared machine mean little).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClineTasksAdapter } from "../src/adapter/cline-tasks/adapter.ts";
import { readTaskHosts } from "../src/adapter/cline-tasks/metadata.ts";
import { taskRootCandidates } from "../src/adapter/cline-tasks/paths.ts";
import { runPass } from "../src/collector/pass.ts";
import { Ledger } from "../src/ledger/ledger.ts";

const REQUESTS = 12;
const arg = process.argv.indexOf("--tasks");
const TASKS = arg > 0 ? Number(process.argv[arg + 1]) : 10_000;

function requestText(i: number): string {
  const lines = Array.from({ length: 40 }, (_, k) => `line ${k} of the "environment" \\ details ${i} é`);
  return `<task>\nDo the thing ${i}\n</task>\n<environment_details>\n${lines.join("\n")}\n</environment_details>`;
}

function taskDoc(t: number): string {
  const mi = { providerId: "anthropic", modelId: "claude-sonnet-4-5", mode: "act" };
  const msgs: object[] = [{ ts: 1, type: "say", say: "task", text: `task ${t}`, modelInfo: mi }];
  for (let r = 0; r < REQUESTS; r++) {
    const ts = 1_796_000_000_000 + t * 1000 + r * 10;
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

function metadataDoc(t: number): string {
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

function time<T>(f: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}

async function timeAsync<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: performance.now() - t0, value };
}

const work = mkdtempSync(join(tmpdir(), "cline-otel-bench-tasks-"));
try {
  const home = join(work, "home");
  const tasksDir = join(home, ".cline", "data", "tasks");
  let bytes = 0;
  for (let t = 0; t < TASKS; t++) {
    const dir = join(tasksDir, String(1_796_000_000_000 + t));
    mkdirSync(dir, { recursive: true });
    const doc = taskDoc(t);
    bytes += Buffer.byteLength(doc);
    writeFileSync(join(dir, "ui_messages.json"), doc);
    const meta = metadataDoc(t);
    bytes += Buffer.byteLength(meta);
    writeFileSync(join(dir, "task_metadata.json"), meta);
  }
  const ids = readdirSync(tasksDir);
  const files = ids.map((id) => join(tasksDir, id, "ui_messages.json"));
  const metas = ids.map((id) => join(tasksDir, id, "task_metadata.json"));
  const roots = taskRootCandidates({ home, platform: "linux", env: {}, cwd: home });
  const raw = time(() => {
    let n = 0;
    for (const f of [...files, ...metas]) n += readFileSync(f).length;
    return n;
  });
  const naive = time(() => {
    let n = 0;
    for (const f of files)
      for (const m of JSON.parse(readFileSync(f, "utf8")) as { say?: string; text?: string }[])
        if (m.say === "api_req_started" && m.text !== undefined)
          n += (JSON.parse(m.text) as { tokensIn: number }).tokensIn;
    for (const f of metas)
      n += (JSON.parse(readFileSync(f, "utf8")) as { environment_history: { host_name: string }[] })
        .environment_history.length;
    return n;
  });
  const ledger = Ledger.open(join(work, "state"));
  const adapter = createClineTasksAdapter(roots);
  const pass = await timeAsync(() => runPass(adapter, ledger));
  const idle = await timeAsync(() => runPass(adapter, ledger));
  // The share of the backfill that cline.client costs: each task's task_metadata.json scan alone.
  const hosts = await timeAsync(async () => {
    let n = 0;
    for (const id of ids) {
      const m = await readTaskHosts(join(tasksDir, id));
      if (m.status === "read") n += m.entries.length;
    }
    return n;
  });
  if (hosts.value !== TASKS) throw new Error(`read ${hosts.value} host entries, expected ${TASKS}`);
  const walk = time(() => {
    let n = 0;
    for (const id of readdirSync(tasksDir))
      n += statSync(join(tasksDir, id, "ui_messages.json")).size > 0 ? 1 : 0;
    return n;
  });
  ledger.close();
  const events = pass.value.eventsAdded;
  if (events !== TASKS * REQUESTS)
    throw new Error(`collected ${events} events, expected ${TASKS * REQUESTS}`);
  const f = (x: number, d = 0) => x.toFixed(d);
  process.stdout.write(
    [
      `task format: ${TASKS} tasks, ${TASKS * REQUESTS} requests, ${f(bytes / 2 ** 20)} MiB`,
      `backfill pass      ${f(pass.ms)} ms  (${f((TASKS * REQUESTS) / (pass.ms / 1000))} events/s)`,
      `raw readFileSync   ${f(raw.ms)} ms   pass / raw = ${f(pass.ms / raw.ms, 2)}`,
      `JSON.parse twice   ${f(naive.ms)} ms   pass / naive = ${f(pass.ms / naive.ms, 2)}`,
      `task_metadata scan ${f(hosts.ms)} ms   metadata / pass = ${f(hosts.ms / pass.ms, 3)}`,
      `idle pass          ${f(idle.ms)} ms   (${idle.value.eventsAdded} events added)`,
      `readdir+stat walk  ${f(walk.ms)} ms   idle / walk = ${f(idle.ms / walk.ms, 2)}`,
      "",
    ].join("\n"),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
