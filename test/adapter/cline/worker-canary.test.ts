import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../helpers/cli.ts";
import { makeTree, type Tree } from "../../helpers/cline-tree.ts";

// The background reader's worker runs the same allow-list scan as the main thread: message text,
// tool inputs and results and the system prompt never become strings there either, and what it
// posts back holds none of them. Searched in both threads' heaps, with a control that proves the
// search finds a decoded document.
let dir: string;
let tree: Tree;
let canary: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "worker-canary-"));
  canary = `CNRY${randomBytes(8).toString("hex")}`;
  const c = (f: string) => `${canary}_${f}`;
  const ids = ["1796000000000_wcna", "1796000000001_wcnb"];
  tree = makeTree(
    join(dir, "home"),
    ids.map((id) => ({ id, cwd: "/work/ws", messages: [] })),
  );
  for (const id of ids) {
    const doc = {
      version: 1,
      agent: "lead",
      sessionId: id,
      messages: [
        { id: "u1", role: "user", ts: 1, content: [{ type: "text", text: c("user_text") }] },
        {
          id: "msg_1",
          role: "assistant",
          ts: 1796018200592,
          content: [
            { type: "thinking", thinking: c("thinking"), signature: c("signature") },
            { type: "text", text: c("assistant_text") },
            { type: "tool_use", id: "toolu_1", name: "run_commands", input: { [c("key")]: [c("value")] } },
          ],
          modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic", family: c("family") },
          metrics: { inputTokens: 840, outputTokens: 313, cacheReadTokens: 0, cacheWriteTokens: 719 },
          metadata: { note: c("metadata") },
        },
        {
          id: "msg_2",
          role: "user",
          ts: 3,
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              is_error: false,
              content: [{ result: c("result") }],
            },
          ],
        },
      ],
      system_prompt: c("system_prompt"),
    };
    writeFileSync(join(tree.sessionsDir, id, `${id}.messages.json`), JSON.stringify(doc, null, 2));
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(name: string, control: boolean) {
  const main = join(dir, `${name}-main.heapsnapshot`);
  const worker = join(dir, `${name}-worker.heapsnapshot`);
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      join(ROOT, "test/adapter/cline/worker-canary-child.ts"),
      tree.sessionsDir,
      main,
      worker,
      control ? "control" : "",
    ],
    { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
  );
  expect(r.status, r.stderr).toBe(0);
  return { main: readFileSync(main), worker: readFileSync(worker), out: r.stdout + r.stderr };
}

const has = (b: Buffer, s: string) => b.includes(Buffer.from(s)) || b.includes(Buffer.from(s, "utf16le"));

describe("the background reader's worker and the canary", () => {
  it("never holds the canary, in the worker's heap or in what it sent back", () => {
    const r = run("worker", false);
    const stats = JSON.parse(r.out.trim().split("\n").at(-1) as string);
    // The worker did read the documents (not a fallback on this thread).
    expect(stats).toMatchObject({ inWorker: 2, inThread: 0, started: 1, sources: 2 });
    expect(r.worker.length).toBeGreaterThan(100_000);
    // The snapshots do hold what was read: the allow-listed model id and message id.
    expect(has(r.main, "claude-sonnet-4-5-20250929")).toBe(true);
    expect(has(r.main, "msg_1")).toBe(true);
    expect(has(r.worker, canary)).toBe(false);
    expect(has(r.main, canary)).toBe(false);
    expect(r.out.includes(canary)).toBe(false);
  });

  it("control: a document decoded the ordinary way puts the canary in the heap", () => {
    const r = run("control", true);
    expect(has(r.main, canary)).toBe(true);
  });
});
