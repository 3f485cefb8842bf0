/**
 * PRIVACY CANARY for the task format: the request text inside `api_req_started` (a string inside a
 * string; with tool results whose phrases are matched in its bytes), tool JSON bodies (edits'
 * `content` and paths, counted in place), asked commands, failed replaces' paths, command lines, prose, a sub-agent call's status (prompts, results),
 * the task history's prompt, task_metadata.json's paths and versions and secrets.json all hold a
 * canary; after a real pass and report, it is in none of the heap, the ledger, the output.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCanaryAbsent, runCanaryChild } from "../helpers/canary.ts";

let dir: string;
let home: string;
let canary: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tasks-canary-"));
  home = join(dir, "home");
  canary = `CNRY${randomBytes(8).toString("hex")}`;
  const c = (f: string) => `${canary}_${f}`;
  const data = join(home, ".cline", "data");
  const task = join(data, "tasks", "1796000000000");
  mkdirSync(task, { recursive: true });
  mkdirSync(join(data, "state"), { recursive: true });
  const mi = { providerId: "anthropic", modelId: "claude-sonnet-4-5-20250929", mode: "act" };
  const req = `<task>\n${c("request")} "quoted" \\ é😀\n</task>`;
  const msgs = [
    { ts: 1796000000001, type: "say", say: "task", text: c("task"), modelInfo: mi },
    {
      ts: 1796000000002,
      type: "say",
      say: "api_req_started",
      text: JSON.stringify({
        request: req,
        tokensIn: 10,
        tokensOut: 20,
        cacheReads: 30,
        cacheWrites: 40,
        cost: 0.01,
      }),
      modelInfo: mi,
    },
    { ts: 1796000000003, type: "say", say: "text", text: c("text"), modelInfo: mi },
    {
      ts: 1796000000004,
      type: "say",
      say: "tool",
      text: JSON.stringify({ tool: "readFile", path: c("path"), content: c("content") }),
    },
    { ts: 1796000000005, type: "say", say: "tool", text: JSON.stringify({ tool: c("toolname"), path: "x" }) },
    { ts: 1796000000006, type: "say", say: "command", text: `echo ${c("command")}` },
    {
      ts: 1796000000007,
      type: "say",
      say: "subagent",
      text: JSON.stringify({
        status: "completed",
        inputTokens: 1,
        items: [{ index: 1, prompt: c("subprompt"), result: c("subresult"), latestToolCall: c("subtool") }],
      }),
      modelInfo: mi,
    },
    {
      ts: 1796000000008,
      type: "say",
      say: "subagent_usage",
      text: JSON.stringify({
        source: "subagents",
        tokensIn: 1,
        tokensOut: 2,
        cacheReads: 3,
        cacheWrites: 4,
        cost: 0,
      }),
      modelInfo: mi,
    },
    // Edits and asked calls (docs/cline-format.md §16): their bytes are counted, never decoded.
    {
      ts: 1796000000011,
      type: "ask",
      ask: "tool",
      text: JSON.stringify({
        tool: "editedExistingFile",
        path: `src/${c("editpath")}.ts`,
        content: `------- SEARCH\n${c("search")}\n=======\n${c("replace")} "q" \\ é😀\n+++++++ REPLACE`,
      }),
    },
    { ts: 1796000000012, type: "say", say: "diff_error", text: c("diffpath"), partial: true },
    { ts: 1796000000013, type: "ask", ask: "command", text: `git commit -m ${c("askcommand")}REQ_APP` },
    {
      ts: 1796000000014,
      type: "say",
      say: "tool",
      text: JSON.stringify({ tool: "newFileCreated", path: c("newpath"), content: `${c("newcontent")}\n` }),
    },
    {
      ts: 1796000000009,
      type: "say",
      say: "api_req_started",
      // The next request answers the calls: the first denied, the rest with results of their own.
      text: JSON.stringify({
        request:
          `[replace_in_file for '${c("resultpath")}'] Result:\nThe user denied this operation. ${c("denied")}\n\n` +
          `[replace_in_file for 'x'] Result:\nThe tool execution failed with the following error:\n<error>${c("error")}</error>` +
          `\n\n[execute_command for '${c("resultcommand")}'] Result:\n${c("output")}\n\n${c("inflight")}`,
      }),
    },
    { ts: 1796000000010, type: "ask", ask: "completion_result", text: c("completion") },
  ];
  writeFileSync(join(task, "ui_messages.json"), JSON.stringify(msgs));
  // Only environment_history[].ts and .host_name are read: the paths and versions next to them are not.
  writeFileSync(
    join(task, "task_metadata.json"),
    JSON.stringify({
      files_in_context: [{ path: c("contextpath"), record_state: "active", record_source: "read_tool" }],
      model_usage: [{ ts: 1796000000002, model_id: c("modelusage"), model_provider_id: "anthropic" }],
      environment_history: [
        {
          ts: 1796000000000,
          os_name: "linux",
          os_version: c("osversion"),
          os_arch: "x64",
          host_name: "PyCharm",
          host_version: c("hostversion"),
          cline_version: c("clineversion"),
        },
      ],
    }),
  );
  writeFileSync(
    join(task, "api_conversation_history.json"),
    JSON.stringify([{ role: "user", content: c("history") }]),
  );
  writeFileSync(
    join(data, "state", "taskHistory.json"),
    JSON.stringify([
      {
        id: "1796000000000",
        task: c("prompt"),
        tokensIn: 10,
        tokensOut: 20,
        cacheReads: 30,
        cacheWrites: 40,
      },
    ]),
  );
  writeFileSync(join(data, "secrets.json"), JSON.stringify({ apiKey: c("secret") }));
  writeFileSync(join(data, "globalState.json"), JSON.stringify({ x: c("global") }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("task format privacy by construction", () => {
  it("no request text, tool body, command or prompt becomes a string, while the counts go through", () => {
    const run = runCanaryChild("test/privacy/tasks-canary-child.ts", dir, "tasks", [home], false);
    expectCanaryAbsent(run, canary);
    expect(run.out).toContain("readFile");
    expect(run.out).toContain("execute_command");
    expect(run.out).toContain("claude-sonnet-4-5-20250929");
    expect(run.out).toContain("use_subagents");
    // The lead's request and the sub-agents' sums: two events; the use_subagents call a fourth
    // call, then the asked edit, the failed replace, the asked command and the new file.
    expect(run.out).toContain(`"cacheRead":33,"cacheWrite":44,"events":2,"toolCalls":8`);
  });

  it("events, spans and metrics carry no request text, edit, command or result, while outcomes go out", () => {
    const run = runCanaryChild(
      "test/privacy/signals-canary-child.ts",
      dir,
      "tasks-signals",
      [home, "tasks"],
      false,
    );
    expectCanaryAbsent(run, canary);
    expect(run.out).toMatch(/received [1-9]\d* records, [1-9]\d* spans, [1-9]\d* points/);
    // The asked edit was denied in the next request's text: read from its bytes, exported by name.
    expect(run.out).toContain('"cline.tool.outcome":"rejected"');
    expect(run.out).toContain('"execute_tool editedExistingFile"');
    expect(run.out).not.toContain('"ok":false');
  });

  it("control: decoding the document the ordinary way puts the canary in the heap", () => {
    const { snapshot } = runCanaryChild("test/privacy/tasks-canary-child.ts", dir, "control", [home], true);
    expect(snapshot.includes(Buffer.from(`${canary}_request`))).toBe(true);
  });
});
