/**
 * Edit records of the task format (src/adapter/cline-tasks/edits.ts, docs/cline-format.md §16):
 * one per edit tool message once its decision is known, counted from its `content` bytes.
 */
import { describe, expect, it } from "vitest";
import { ask, recorded as c, parse, request, say, type UiMessage } from "./helpers.ts";

const edit = (how: "say" | "ask", ts: number, tool: string, path: string, content?: string): UiMessage => {
  const text = JSON.stringify({ tool, path, ...(content === undefined ? {} : { content }) });
  return how === "say" ? say(ts, "tool", text) : ask(ts, "tool", text);
};
const next = (ts: number, result: string) =>
  request(ts, c(10 + ts, 1), undefined, `[x for 'p'] Result:\n${result}\n\n<environment_details>`);
const OK = "The content was successfully saved.";
const DENIED = "The user denied this operation. The file was not updated.";

const BLOCKS =
  "------- SEARCH\na\nb\n=======\na\nB\nc\n+++++++ REPLACE\n\n------- SEARCH\nx\n=======\n+++++++ REPLACE";

describe("task format edit records", () => {
  it("counts a new file, SEARCH/REPLACE blocks, a whole-file rewrite and a deletion as git would", () => {
    const p = parse([
      request(10, c(100, 1)),
      edit("say", 11, "newFileCreated", "src/app.ts", "one\ntwo\nthree"),
      next(20, OK),
      edit("say", 21, "editedExistingFile", "lib/util.py", BLOCKS),
      next(30, OK),
      edit("ask", 31, "editedExistingFile", "README.md", "whole\nnew\ntext\n"),
      next(40, OK),
      edit("say", 41, "fileDeleted", "old.go"),
      next(50, OK),
      say(51, "text", "done"),
    ]);
    expect(
      p.edits.map((e) => [
        e.operation,
        e.toolName,
        e.language,
        e.linesAdded,
        e.linesRemoved,
        e.exact,
        e.source,
      ]),
    ).toEqual([
      ["create", "write_to_file", "typescript", 3, 0, true, "auto"],
      // Block 1: b -> B, + c (2 added, 1 removed); block 2: x removed.
      ["modify", "replace_in_file", "python", 2, 2, true, "auto"],
      // The old text of a rewritten file is on no file: added its lines, removed unknown.
      ["modify", "write_to_file", "markdown", 3, 0, false, "user"],
      ["delete", "fileDeleted", "go", 0, 0, false, "auto"],
    ]);
    expect(p.edits.every((e) => e.decision === "accepted")).toBe(true);
    expect(p.edits.map((e) => e.callKey)).toEqual(p.toolCalls.map((t) => t.callKey));
    expect(p.edits.map((e) => e.usageKey)).toEqual(p.events.slice(0, 4).map((e) => e.dedupKey));
  });

  it("a denied edit keeps its counts as rejected; a failed replace counts none; an unanswered one waits", () => {
    const p = parse([
      request(10, c(100, 1)),
      edit("ask", 11, "editedExistingFile", "a.rs", "------- SEARCH\nold\n=======\nnew\n+++++++ REPLACE"),
      next(20, DENIED),
      { ...say(21, "diff_error", "b.rs"), partial: true },
      next(30, "The tool execution failed with the following error:\n<error>"),
      edit("ask", 31, "newFileCreated", "c.rs", "x"),
      ask(32, "completion_result"),
    ]);
    expect(p.edits.map((e) => [e.decision, e.source, e.linesAdded, e.linesRemoved, e.language])).toEqual([
      ["rejected", "user", 1, 1, "rust"],
      ["failed", "unknown", 0, 0, ""],
    ]);
    expect(p.toolCalls).toHaveLength(3);
  });

  it("re-reading the same document gives the same edit keys (one record per edit)", () => {
    const msgs = [request(10, c(100, 1)), edit("say", 11, "newFileCreated", "a.ts", "x"), next(20, OK)];
    expect(parse(msgs).edits.map((e) => e.editKey)).toEqual(parse(msgs).edits.map((e) => e.editKey));
    expect(parse(msgs).edits).toHaveLength(1);
  });
});
