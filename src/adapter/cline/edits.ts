/**
 * The file edits of a CLI 3.x document (issue 29; docs/cline-format.md §16): `editor` (`path`,
 * `old_text`, `new_text`, `insert_line`) and `apply_patch` (`input`, a patch text) calls, each
 * counted from the call's own bytes (src/scan's line readers) once its result is in the document.
 * No text becomes a string: only a path's extension is decoded.
 */
import type { EscapedText } from "../../scan/escaped-text.ts";
import { extensionOf } from "../../scan/extension.ts";
import { languageOf } from "../../scan/language.ts";
import { hashLines, lineCount, newlineCount } from "../../scan/lines.ts";
import { numstatOf } from "../../scan/numstat.ts";
import { patchFiles } from "../../scan/patch.ts";
import { isWrongType, type RawBytes } from "../../scan/schema.ts";
import { CountingScratch } from "../../scan/scratch.ts";
import type { ToolOutcome } from "../timing.ts";
import type { EditRecord, ToolCall } from "../types.ts";
import { resultStartsWith, type ScannedResultJson } from "./outcome.ts";

/** The edit tools of CLI 3.x (a model id containing `gpt` gets apply_patch instead of editor). */
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["editor", "apply_patch"]);

/** What the allow-list decodes of an edit call's input (schema.ts). */
export interface ScannedEditInput {
  readonly path?: unknown;
  readonly old_text?: unknown;
  readonly new_text?: unknown;
  readonly insert_line?: unknown;
  readonly input?: unknown;
}

/** A call's result as the parser read it: its outcome and its JSON objects. */
export interface EditResult {
  readonly outcome: ToolOutcome;
  readonly json: readonly ScannedResultJson[];
}

/** A create's result text, as Cline 3.0.65 writes it: "File created successfully at: <path>". */
const CREATED = Buffer.from("File created successfully", "latin1");

type Counted = Pick<EditRecord, "operation" | "linesAdded" | "linesRemoved" | "exact" | "language">;

/** A scanned raw field as a depth-1 escaped text (a plain JSON string field), or undefined. */
function textOf(v: unknown): EscapedText | undefined {
  if (v === undefined || v === null || typeof v !== "object" || isWrongType(v)) return undefined;
  const r = v as RawBytes;
  return Buffer.isBuffer(r.buf) ? { buf: r.buf, start: r.start, end: r.end, depth: 1 } : undefined;
}

/** The field was there but not readable as text (too long for the allow-list, or not a string). */
function unreadable(v: unknown): boolean {
  return v !== undefined && v !== null && textOf(v) === undefined;
}

function languageOfPath(path: EscapedText | undefined): string {
  return path === undefined ? "" : languageOf(extensionOf(path));
}

/**
 * One editor call, as Cline 3.0.65's editor runs it (its @cline/core: `insert_line` set -> insert;
 * the file missing -> create with `new_text`, whatever `old_text` says; else `old_text` required ->
 * replace its one occurrence):
 * - create: adds `new_text`'s lines (a create never overwrites: without `old_text` an existing
 *   file is an error);
 * - replace: the numstat of `old_text` against `new_text`, exact when both end alike (two texts
 *   ending mid-line go on with the same rest of the line: their last lines compare as whole lines);
 * - insert: Cline splits `new_text` at each newline and inserts every piece as a line, so it adds
 *   its newlines + 1 lines (a text ending in a newline also inserts an empty line).
 */
export function countEditor(input: ScannedEditInput, created: boolean, s = new CountingScratch()): Counted {
  const path = textOf(input.path);
  const language = languageOfPath(path);
  const newText = textOf(input.new_text);
  const oldText = textOf(input.old_text);
  const tooLong = unreadable(input.new_text) || unreadable(input.old_text);
  const insert = typeof input.insert_line === "number";
  if (insert) {
    const added = newText === undefined ? 0 : newlineCount(newText) + 1;
    return { operation: "modify", linesAdded: added, linesRemoved: 0, exact: !tooLong, language };
  }
  if (created || oldText === undefined) {
    // No readable new text (a malformed input): nothing is known of its lines, so not exact.
    if (newText === undefined)
      return { operation: "create", linesAdded: 0, linesRemoved: 0, exact: false, language };
    return {
      operation: "create",
      linesAdded: lineCount(newText),
      linesRemoved: 0,
      exact: !tooLong,
      language,
    };
  }
  if (newText === undefined) {
    // Nothing readable to compare against: what the old text says is all that is known.
    return { operation: "modify", linesAdded: 0, linesRemoved: lineCount(oldText), exact: false, language };
  }
  // Each text walked once: its lines hashed, and whether it ends in a newline (a last line open).
  const a = s.a;
  const b = s.b;
  a.reset();
  b.reset();
  hashLines(oldText, oldText.start, oldText.end, a);
  hashLines(newText, newText.start, newText.end, b);
  const oldEol = a.count > 0 && !a.lastOpen;
  const newEol = b.count > 0 && !b.lastOpen;
  // Both ending mid-line: each goes on with the same rest of its line in the file, so their last
  // lines compare as whole lines (as lines with a newline).
  if (!oldEol && !newEol) {
    a.closeLast();
    b.closeLast();
  }
  const n = numstatOf(a.data, 0, a.count, b.data, 0, b.count, s.diff);
  return {
    operation: "modify",
    linesAdded: n.added,
    linesRemoved: n.removed,
    exact: n.exact && oldEol === newEol,
    language,
  };
}

/** One record per file of an apply_patch call; a text that is no patch: one inexact record. */
export function countPatch(input: ScannedEditInput, s = new CountingScratch()): Counted[] {
  const text = textOf(input.input);
  const files = text === undefined ? null : patchFiles(text, s);
  if (files === null || files.length === 0) {
    return [{ operation: "modify", linesAdded: 0, linesRemoved: 0, exact: false, language: "" }];
  }
  return files.map((f) => ({
    operation: f.op,
    linesAdded: f.added,
    linesRemoved: f.removed,
    exact: f.exact,
    language: languageOf(f.extension),
  }));
}

const DECISION: Readonly<Partial<Record<ToolOutcome, EditRecord["decision"]>>> = {
  success: "accepted",
  rejected: "rejected",
  failure: "failed",
};

/**
 * The records of one edit call whose result is known. Decision from the outcome (an `unknown`
 * outcome decides nothing: no record); source always `unknown` (CLI 3.x stores an approved call
 * exactly like an auto-approved one); a failed edit counts no lines.
 */
export function editRecords(
  call: ToolCall,
  input: ScannedEditInput,
  result: EditResult,
  s = new CountingScratch(),
): EditRecord[] {
  const decision = DECISION[result.outcome];
  if (decision === undefined) return [];
  const created = result.outcome === "success" && resultStartsWith(result.json[0], CREATED);
  const counted = call.toolName === "apply_patch" ? countPatch(input, s) : [countEditor(input, created, s)];
  return counted.map((c, n) => ({
    editKey: `${call.callKey}|${n}`,
    callKey: call.callKey,
    usageKey: call.usageKey,
    sessionId: call.sessionId,
    agent: call.agent,
    toolName: call.toolName,
    operation: c.operation,
    decision,
    source: "unknown",
    language: c.language,
    linesAdded: decision === "failed" ? 0 : c.linesAdded,
    linesRemoved: decision === "failed" ? 0 : c.linesRemoved,
    exact: decision === "failed" ? true : c.exact,
    timestampMs: call.timestampMs,
    model: call.model,
    provider: call.provider,
    project: call.project,
    sourcePath: call.sourcePath,
    ...(call.client === undefined ? {} : { client: call.client }),
  }));
}
