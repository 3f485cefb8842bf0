/**
 * CLI 3.x tool outcomes and edit records read through the allow-list scan and the parser, from
 * documents shaped as the real CLI writes them (docs/cline-format.md §16): a denial is `rejected`, any
 * other is_error `failure`, a result JSON with `success: false` or an `error` `failure` (in the array
 * form of run_commands and the JSON-string form of editor), else `success`; edits counted from the
 * call's own bytes, escapes included.
 */
import { describe, expect, it } from "vitest";
import { parseMessagesDocument } from "../../../src/adapter/cline/parser.ts";
import { messagesDocumentSchema } from "../../../src/adapter/cline/schema.ts";
import { scanBuffer } from "../../../src/scan/scanner.ts";

const PATH = "/s/r1/r1.messages.json";

type Block = Record<string, unknown>;
/** One assistant message per call, each followed by its result message. */
function doc(pairs: readonly [Block, Block][]): Buffer {
  const messages: unknown[] = [{ id: "u0", role: "user", ts: 1, content: [{ type: "text", text: "go" }] }];
  pairs.forEach(([use, result], i) => {
    messages.push({
      id: `a${i}`,
      role: "assistant",
      ts: 10 + i * 10,
      content: [{ type: "tool_use", id: `t${i}`, ...use }],
      modelInfo: { id: "m", provider: "p" },
      metrics: { inputTokens: 10, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    });
    messages.push({
      id: `r${i}`,
      role: "user",
      ts: 15 + i * 10,
      content: [{ type: "tool_result", tool_use_id: `t${i}`, name: use.name, ...result }],
    });
  });
  return Buffer.from(JSON.stringify({ version: 1, sessionId: "r1", agent: "lead", messages }, null, 2));
}

const parse = (buf: Buffer) => parseMessagesDocument(scanBuffer(buf, messagesDocumentSchema), PATH, {});
const json = (v: unknown) => JSON.stringify(v);
const sh = { name: "run_commands", input: { commands: ["x"] } };

describe("tool outcomes (CLI 3.x)", () => {
  it.each([
    ["an array result, success", sh, { content: [{ query: "ls", result: "a", success: true }] }, "success"],
    [
      "an array result with success:false and error",
      sh,
      { content: [{ query: "exit 3", result: "", error: "Command exited with code 3", success: false }] },
      "failure",
    ],
    [
      "an array where one of several failed",
      sh,
      { content: [{ success: true }, { success: false }] },
      "failure",
    ],
    [
      "a JSON-string result, success",
      { name: "editor", input: {} },
      { content: json({ query: "q", result: "Edited x", success: true }) },
      "success",
    ],
    [
      "a JSON-string result with error, no is_error (a failed edit)",
      { name: "editor", input: {} },
      {
        content: json({
          query: "q",
          result: "",
          error: "No replacement performed: text not found",
          success: false,
        }),
      },
      "failure",
    ],
    ["an error member alone", { name: "editor", input: {} }, { content: json({ error: "x" }) }, "failure"],
    [
      "is_error, a denial in the TUI",
      { name: "editor", input: {} },
      {
        is_error: true,
        content: json({
          error: "This tool call was rejected by the user and not executed. -- NOT a tool or system failure.",
        }),
      },
      "rejected",
    ],
    [
      "is_error, refused without a TTY",
      { name: "apply_patch", input: {} },
      {
        is_error: true,
        content: json({ error: 'Tool "apply_patch" requires approval in a TTY session -- NOT a tool' }),
      },
      "rejected",
    ],
    [
      "is_error, invalid input",
      { name: "read_files", input: {} },
      { is_error: true, content: json({ error: "✖ Invalid input" }) },
      "failure",
    ],
    [
      "is_error, a result that is no JSON",
      { name: "read_files", input: {} },
      { is_error: true, content: "plain text" },
      "failure",
    ],
    ["is_error not a boolean", sh, { is_error: "yes", content: [] }, "unknown"],
    [
      "the phrase escaped differently (\\u0072ejected) still matches as text",
      { name: "editor", input: {} },
      { is_error: true, content: '{"error":"This tool call was \\u0072ejected by the user"}' },
      "failure",
    ],
    [
      "a denial phrase inside a success's result text is not a denial",
      sh,
      { content: [{ result: "This tool call was rejected by the user", success: true }] },
      "success",
    ],
  ] as const)("%s -> %s", (_n, use, result, want) => {
    const p = parse(doc([[use as Block, result as Block]]));
    expect(p.signals.toolResults.map((r) => r.outcome)).toEqual([want]);
    expect(p.problems).toEqual([]);
  });
});

describe("edit records (CLI 3.x editor and apply_patch)", () => {
  const ok = (result: string) => ({ content: json({ query: "q", result, success: true }) });
  const row = (buf: Buffer) =>
    parse(buf).edits.map((e) => [
      e.operation,
      e.decision,
      e.language,
      e.linesAdded,
      e.linesRemoved,
      e.exact,
      e.source,
    ]);

  it.each([
    [
      "create (the result says so)",
      { path: "src/a.ts", new_text: "a\nb\nc" },
      ok("File created successfully at: /w/src/a.ts"),
      ["create", "accepted", "typescript", 3, 0, true, "unknown"],
    ],
    [
      "create with old_text given, the file missing",
      { path: "a.py", old_text: "x", new_text: "a\n" },
      ok("File created successfully at: /w/a.py"),
      ["create", "accepted", "python", 1, 0, true, "unknown"],
    ],
    [
      "replace: a changed line counts once each side",
      { path: "n.md", old_text: "beta\ngamma", new_text: "BETA\ngamma\ndelta" },
      ok("Edited /w/n.md"),
      ["modify", "accepted", "markdown", 2, 1, true, "unknown"],
    ],
    [
      "replace, texts ending differently: inexact",
      { path: "n.md", old_text: "b\n", new_text: "b\nc" },
      ok("Edited /w/n.md"),
      ["modify", "accepted", "markdown", 1, 0, false, "unknown"],
    ],
    [
      "insert: newlines + 1 lines",
      { path: "n.md", insert_line: 1, new_text: "# A\n" },
      ok("Inserted content at line 1"),
      ["modify", "accepted", "markdown", 2, 0, true, "unknown"],
    ],
    [
      "insert of an empty text: one empty line",
      { path: "n.md", insert_line: 2, new_text: "" },
      ok("Inserted content at line 2"),
      ["modify", "accepted", "markdown", 1, 0, true, "unknown"],
    ],
    [
      "escapes: \\n inside a string literal is not a newline",
      { path: "x.js", old_text: 'a("\\n")', new_text: 'a("\\n")\nb()' },
      ok("Edited"),
      ["modify", "accepted", "javascript", 1, 0, true, "unknown"],
    ],
    [
      "a denial counts the proposed lines",
      { path: "a.py", old_text: "x", new_text: "y\nz" },
      {
        is_error: true,
        content: json({ error: "This tool call was rejected by the user and not executed." }),
      },
      ["modify", "rejected", "python", 2, 1, true, "unknown"],
    ],
    [
      "a failed edit counts no lines",
      { path: "a.py", old_text: "x", new_text: "y\nz" },
      { content: json({ query: "q", result: "", error: "No replacement performed", success: false }) },
      ["modify", "failed", "python", 0, 0, true, "unknown"],
    ],
    [
      "no extension: language other",
      { path: "Makefile", new_text: "all:\n" },
      ok("File created successfully at: /w/Makefile"),
      ["create", "accepted", "other", 1, 0, true, "unknown"],
    ],
  ] as const)("editor: %s", (_n, input, result, want) => {
    expect(row(doc([[{ name: "editor", input }, result as Block]]))).toEqual([want]);
  });

  it("apply_patch: one record per file; Delete File inexact with no lines", () => {
    const text = [
      "*** Begin Patch",
      "*** Add File: docs/g.md",
      "+# G",
      "+",
      "+x",
      "*** Update File: src/u.ts",
      "@@",
      " a",
      "-b",
      "+B",
      "+c",
      "*** Delete File: old.txt",
      "*** End Patch",
    ].join("\n");
    expect(
      row(doc([[{ name: "apply_patch", input: { input: text } }, ok("Successfully applied patch")]])),
    ).toEqual([
      ["create", "accepted", "markdown", 3, 0, true, "unknown"],
      ["modify", "accepted", "typescript", 2, 1, true, "unknown"],
      ["delete", "accepted", "plaintext", 0, 0, false, "unknown"],
    ]);
  });

  it("a call without its result yet, or with an unknown outcome, makes no record; other tools none", () => {
    const buf = doc([
      [
        { name: "editor", input: { path: "a.ts", new_text: "x" } },
        { is_error: 7, content: "{}" },
      ],
      [{ name: "run_commands", input: { commands: ["git commit -m x"] } }, { content: [{ success: true }] }],
    ]);
    expect(parse(buf).edits).toEqual([]);
    const noResult = JSON.parse(
      doc([[{ name: "editor", input: { path: "a.ts", new_text: "x" } }, {}]]).toString(),
    );
    noResult.messages.pop();
    expect(parse(Buffer.from(JSON.stringify(noResult))).edits).toEqual([]);
  });

  it("keys and joins: editKey = callKey|n, the call's usage key, session, agent, model, ts", () => {
    const [e] = parse(
      doc([[{ name: "editor", input: { path: "a.ts", new_text: "x" } }, ok("File created successfully")]]),
    ).edits;
    expect(e).toMatchObject({
      editKey: "cline|r1|lead|t0|0",
      callKey: "cline|r1|lead|t0",
      usageKey: "cline|r1|lead|a0",
      sessionId: "r1",
      agent: "lead",
      toolName: "editor",
      model: "m",
      provider: "p",
      timestampMs: 10,
      sourcePath: PATH,
    });
  });
});
