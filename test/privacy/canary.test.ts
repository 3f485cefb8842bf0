import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectCanaryAbsent, runCanaryChild } from "../helpers/canary.ts";
import { makeTree } from "../helpers/cline-tree.ts";

const ID = "1796000000000_canry";
let dir: string;
let home: string;
let canary: string;

/** A document where every field outside the allow-list holds a canary. */
function poisonedDoc(c: (field: string) => string): object {
  return {
    version: 1,
    updated_at: c("updated_at"),
    agent: "lead",
    sessionId: ID,
    taskType: c("taskType"),
    origin: { source: c("origin"), mode: "user", sessionId: ID, version: c("version") },
    messages: [
      { id: "u1", role: "user", ts: 1, content: [{ type: "text", text: c("user_text") }] },
      {
        id: "msg_1",
        role: "assistant",
        ts: 1796018200592,
        content: [
          { type: "thinking", thinking: c("thinking"), signature: c("signature") },
          { type: "text", text: c("assistant_text") },
          {
            type: "tool_use",
            id: "toolu_1",
            name: "run_commands",
            input: { [c("input_key")]: [c("input_value")] },
          },
          { type: "tool_use", id: "toolu_2", name: "editor", input: c("input_string") },
          // Command lines read as bytes for commits and pull requests (a commit counted, nothing decoded).
          {
            type: "tool_use",
            id: "toolu_3",
            name: "run_commands",
            input: {
              commands: [`git commit -m '${c("commit_message")}'`, `gh pr create --title ${c("pr_title")}`],
            },
          },
          { type: "image", source: { data: c("image") } },
        ],
        modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic", family: c("family") },
        metrics: {
          inputTokens: 840,
          outputTokens: 313,
          cacheReadTokens: 0,
          cacheWriteTokens: 719,
          cost: 0.00775425,
        },
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
            name: "run_commands",
            is_error: true,
            content: [{ query: c("query"), result: c("result"), success: true }],
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_2",
            name: "editor",
            // A flag of the wrong type: skipped as bytes, outcome unknown.
            is_error: c("is_error"),
            content: JSON.stringify({ text: c("json_string_result") }),
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_3",
            name: "run_commands",
            content: [
              { query: c("commit_query"), result: c("commit_result"), success: true },
              { query: c("pr_query"), result: c("pr_result"), success: true },
            ],
          },
        ],
      },
      // Edits (issue 29): every text of an edit, a patch, a command and a result holds a canary; the
      // scan copies them as raw bytes and counts lines, and only a path's extension is decoded.
      {
        id: "msg_3",
        role: "assistant",
        ts: 5,
        content: [
          {
            type: "tool_use",
            id: "toolu_e3",
            name: "editor",
            input: {
              path: `/work/${c("path")}/a.ts`,
              old_text: `${c("old_text")}\nkeep`,
              new_text: `${c("new_text")}\nkeep\n${c("new_text2")}`,
            },
          },
          {
            type: "tool_use",
            id: "toolu_4",
            name: "editor",
            input: { path: `${c("create_path")}.py`, new_text: c("create_text"), insert_line: 2 },
          },
          {
            type: "tool_use",
            id: "toolu_5",
            name: "apply_patch",
            input: {
              input: [
                "*** Begin Patch",
                `*** Add File: ${c("patch_add")}.md`,
                `+${c("patch_line")}`,
                `*** Update File: src/${c("patch_update")}`,
                "@@",
                ` ${c("patch_context")}`,
                `-${c("patch_minus")}`,
                `+${c("patch_plus")}`,
                `*** Delete File: ${c("patch_delete")}.txt`,
                "*** End Patch",
              ].join("\n"),
            },
          },
          {
            type: "tool_use",
            id: "toolu_6",
            name: "run_commands",
            input: { commands: [`git commit -m "${c("commit_message")}"`] },
          },
        ],
        modelInfo: { id: "gpt-5", provider: "openai" },
        metrics: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
      {
        id: "msg_4",
        role: "user",
        ts: 6,
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_e3",
            name: "editor",
            content: JSON.stringify({
              query: c("edit_query"),
              result: `Edited ${c("edit_result")}`,
              success: true,
            }),
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_4",
            name: "editor",
            is_error: true,
            content: JSON.stringify({ error: `This tool call was rejected by the user ${c("denial")}` }),
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_5",
            name: "apply_patch",
            content: JSON.stringify({
              query: "apply_patch",
              result: "",
              error: c("patch_error"),
              success: false,
            }),
          },
          {
            type: "tool_result",
            tool_use_id: "toolu_6",
            name: "run_commands",
            content: [
              {
                query: c("command_query"),
                result: c("command_output"),
                error: c("command_error"),
                success: false,
              },
            ],
          },
        ],
      },
      {
        id: "error_1",
        role: "assistant",
        ts: 4,
        content: [{ type: "text", text: c("error_text") }],
        modelInfo: { id: "claude-sonnet-4-5-20250929", provider: "anthropic" },
        metadata: { displayOnly: true, displayRole: "error" },
      },
    ],
    system_prompt: c("system_prompt"),
  };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "canary-"));
  // Built at run time from random bytes: no source file or module holds it.
  canary = `CNRY${randomBytes(8).toString("hex")}`;
  const c = (field: string) => `${canary}_${field}`;
  const tree = makeTree(join(dir, "home"), [{ id: ID, cwd: "/work/ws", messages: [] }]);
  home = tree.home;
  writeFileSync(join(tree.sessionsDir, ID, `${ID}.messages.json`), JSON.stringify(poisonedDoc(c), null, 2));
  writeFileSync(
    join(tree.sessionsDir, ID, `${ID}.json`),
    JSON.stringify({
      version: 1,
      session_id: ID,
      cwd: "/work/ws",
      prompt: c("sidecar_prompt"),
      metadata: { title: c("title") },
    }),
  );
  const db = new Database(join(tree.dbDir, "sessions.db"));
  db.prepare("UPDATE sessions SET prompt = ?, metadata_json = ?").run(
    c("index_prompt"),
    JSON.stringify({ title: c("index_title") }),
  );
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runChild(name: string, control: boolean) {
  return runCanaryChild("test/privacy/canary-child.ts", dir, name, [home], control);
}

describe("privacy by construction", () => {
  it("no skipped field becomes a string: absent from the heap, the ledger and all output", () => {
    const { snapshot, state, out } = runChild("collect", false);
    expectCanaryAbsent({ snapshot, state, out }, canary);
    // ...while the allow-listed facts made it through.
    expect(out).toContain("run_commands");
    expect(out).toContain("claude-sonnet-4-5-20250929");
    // The edits were read (lines counted from the poisoned texts): accepted, rejected and failed.
    expect(out).toMatch(/edits accepted=1 rejected=1 failed=3 added=2 removed=1/);
    // The commit and the pull request of toolu_3 were counted from the command bytes.
    const db = new Database(join(state, "ledger.sqlite"), { readonly: true });
    expect(db.prepare("SELECT kind FROM activity WHERE kind != 'active_time' ORDER BY id").all()).toEqual([
      { kind: "commit" },
      { kind: "pull_request" },
      { kind: "session" },
    ]);
    db.close();
  });

  it("events, spans and metrics (http/json and http/protobuf) carry no skipped field, in the payloads or the heap", () => {
    const run = runCanaryChild("test/privacy/signals-canary-child.ts", dir, "signals", [home], false);
    expectCanaryAbsent(run, canary);
    // ...while the allow-listed facts went out in all three signals: ids, names, times, outcome.
    expect(run.out).toMatch(/received [1-9]\d* records, [1-9]\d* spans, [1-9]\d* points/);
    expect(run.out).toContain('"cline.api_request"');
    expect(run.out).toContain('"gen_ai.tool.call.id":"toolu_1"');
    expect(run.out).toContain('"cline.tool.outcome":"failure"');
    expect(run.out).toContain('"cline.tool.outcome":"rejected"');
    expect(run.out).toContain('"execute_tool editor"');
    expect(run.out).toContain("gen_ai.client.token.usage");
    expect(run.out).not.toContain('"ok":false');
  });

  it("control: decoding the document the ordinary way puts the canary in the heap", () => {
    const { snapshot } = runChild("control", true);
    expect(snapshot.includes(Buffer.from(canary))).toBe(true);
  });
});
