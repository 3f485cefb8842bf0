/**
 * The file edits of the task format (docs/cline-format.md §15.14): a tool message whose JSON text has
 * `tool: "newFileCreated" | "editedExistingFile" | "fileDeleted"`, counted from its own `content`
 * bytes (never decoded: src/scan/ reads them in place) once its decision is known. Only the
 * path's extension is decoded.
 */
import type { EscapedText } from "../../scan/escaped-text.ts";
import { extensionOf } from "../../scan/extension.ts";
import { languageOf } from "../../scan/language.ts";
import { lineCount } from "../../scan/lines.ts";
import { isWrongType, type RawBytes } from "../../scan/schema.ts";
import { CountingScratch } from "../../scan/scratch.ts";
import { searchReplaceNumstat } from "../../scan/search-replace.ts";
import type { ToolOutcome } from "../timing.ts";
import type { EditRecord, EditSource, ToolCall } from "../types.ts";

const OPERATIONS = {
  newFileCreated: "create",
  editedExistingFile: "modify",
  fileDeleted: "delete",
} as const satisfies Record<string, EditRecord["operation"]>;

type EditTool = keyof typeof OPERATIONS;

/** A scanned tool JSON that is a file edit. */
export function isEditBody(body: Record<string, unknown> | undefined): boolean {
  return typeof body?.tool === "string" && Object.hasOwn(OPERATIONS, body.tool);
}

/** The decision an edit's call outcome means; unknown: not decided yet (no record). */
export function editDecision(outcome: ToolOutcome): EditRecord["decision"] | undefined {
  if (outcome === "success") return "accepted";
  if (outcome === "rejected") return "rejected";
  if (outcome === "failure") return "failed";
  return undefined;
}

/**
 * The scanned `raw` bytes of a field as an escaped text: the message text's own raw bytes (depth 2,
 * the schema's `outer` fields), or undefined (absent, too long, not a string).
 */
function rawField(body: Record<string, unknown> | undefined, name: string): EscapedText | undefined {
  const v = body?.[name];
  if (v === undefined || isWrongType(v)) return undefined;
  const r = v as RawBytes;
  return r.truncated ? undefined : { buf: r.buf, start: r.start, end: r.end, depth: r.depth ?? 1 };
}

export interface EditLines {
  readonly tool: string;
  readonly linesAdded: number;
  readonly linesRemoved: number;
  readonly exact: boolean;
}

/**
 * Lines of an edit as `git diff --numstat` would count them: a new file adds its lines;
 * replace_in_file's SEARCH/REPLACE blocks add and remove the line diff of each block's two sides;
 * a write_to_file over an existing file (an `editedExistingFile` without markers) adds the whole
 * text and removed what no file holds (inexact); a deleted file's lines are in no file (inexact).
 */
export function editLines(
  tool: EditTool,
  content: EscapedText | undefined,
  scratch = new CountingScratch(),
): EditLines {
  if (tool === "fileDeleted") return { tool: "fileDeleted", linesAdded: 0, linesRemoved: 0, exact: false };
  if (content === undefined) {
    // Too long to copy, or absent: nothing is counted, and that is said.
    const name = tool === "newFileCreated" ? "write_to_file" : "replace_in_file";
    return { tool: name, linesAdded: 0, linesRemoved: 0, exact: false };
  }
  if (tool === "newFileCreated")
    return { tool: "write_to_file", linesAdded: lineCount(content), linesRemoved: 0, exact: true };
  const n = searchReplaceNumstat(content, scratch);
  if (n === null) return { tool: "replace_in_file", linesAdded: 0, linesRemoved: 0, exact: false };
  if (n.blocks === 0)
    return { tool: "write_to_file", linesAdded: lineCount(content), linesRemoved: 0, exact: false };
  return { tool: "replace_in_file", linesAdded: n.added, linesRemoved: n.removed, exact: n.exact };
}

/**
 * The record of one edit call once its outcome is known (undefined: not an edit, or not decided).
 * `how`: `say` = auto-approved, `ask` = the user answered, `diff_error` = a replace that failed
 * before anyone was asked (no lines, source unknown).
 */
export function taskEditRecord(
  call: ToolCall,
  how: "say" | "ask" | "diff_error",
  body: Record<string, unknown> | undefined,
  outcome: ToolOutcome,
  scratch = new CountingScratch(),
): EditRecord | undefined {
  const decision = how === "diff_error" ? "failed" : editDecision(outcome);
  if (decision === undefined) return undefined;
  const name = how === "diff_error" ? "editedExistingFile" : body?.tool;
  if (typeof name !== "string" || !Object.hasOwn(OPERATIONS, name)) return undefined;
  const tool = name as EditTool;
  const path = rawField(body, "path");
  const source: EditSource = how === "say" ? "auto" : how === "ask" ? "user" : "unknown";
  const failed = decision === "failed";
  const lines: EditLines = failed
    ? { tool: "replace_in_file", linesAdded: 0, linesRemoved: 0, exact: true }
    : editLines(tool, rawField(body, "content"), scratch);
  return {
    editKey: `${call.callKey}|0`,
    callKey: call.callKey,
    usageKey: call.usageKey,
    sessionId: call.sessionId,
    agent: call.agent,
    toolName: lines.tool,
    operation: OPERATIONS[tool],
    decision,
    source,
    // A diff_error's text is the path itself, never decoded: its language is not known.
    language: path === undefined ? "" : languageOf(extensionOf(path)),
    linesAdded: lines.linesAdded,
    linesRemoved: lines.linesRemoved,
    exact: lines.exact,
    timestampMs: call.timestampMs,
    model: call.model,
    provider: call.provider,
    project: call.project,
    sourcePath: call.sourcePath,
    ...(call.client === undefined ? {} : { client: call.client }),
  };
}
