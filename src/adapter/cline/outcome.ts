/**
 * A CLI 3.x tool result's outcome (docs/cline-format.md §16), from its `is_error` flag and its JSON
 * (`{query, result, success}` / `{query, result: "", error}`), the error text matched against fixed
 * phrases as raw bytes, in place: no text of a result becomes a string.
 */
import { containsPhrase } from "../../scan/phrase.ts";
import { isWrongType, type RawBytes } from "../../scan/schema.ts";
import type { ToolOutcome } from "../timing.ts";

/** What the allow-list decodes of a result's JSON (schema.ts `toolResultJson`). */
export interface ScannedResultJson {
  readonly success?: unknown;
  readonly error?: unknown;
  readonly result?: unknown;
}

/**
 * The phrases of a denial, as Cline 3.0.65 writes them (its `USER_REJECTED_TOOL_REASON` when the user
 * answers "Deny" in the TUI; its non-interactive refusal `Tool "<name>" requires approval in a TTY
 * session` with `--auto-approve false`). Plain ASCII without a quote or backslash: their raw bytes
 * in a JSON string are their text, so a raw match is exact.
 */
export const DENIAL_PHRASES: readonly string[] = [
  "This tool call was rejected by the user",
  "requires approval in a TTY session",
];

/** The raw bytes (a depth-1 text: a string of the result's JSON) hold one of `phrases`. */
export function holdsPhrase(bytes: RawBytes, phrases: readonly string[]): boolean {
  const text = { buf: bytes.buf, start: bytes.start, end: bytes.end, depth: 1 as const };
  return phrases.some((p) => containsPhrase(text, p));
}

function isRaw(v: unknown): v is RawBytes {
  return typeof v === "object" && v !== null && !isWrongType(v) && Buffer.isBuffer((v as RawBytes).buf);
}

/** Each JSON object of a result's content: one (a JSON string) or an array of them; none when neither. */
export function resultObjects(content: unknown): readonly ScannedResultJson[] {
  if (content === undefined || isWrongType(content)) return [];
  if (Array.isArray(content))
    return content.filter((e) => typeof e === "object" && e !== null && !isWrongType(e));
  return typeof content === "object" && content !== null ? [content as ScannedResultJson] : [];
}

/** An object says the tool failed: `success` false, or an `error` member (whatever its length or type). */
function saysFailure(o: ScannedResultJson): boolean {
  return o.success === false || o.error !== undefined;
}

/**
 * The outcome of one tool_result block:
 * - `is_error: true` whose error is a denial -> `rejected`; any other `is_error: true` -> `failure`;
 * - `is_error` not a boolean -> `unknown`;
 * - otherwise a JSON that says `"success":false` or has an `error` (a failed edit or command is stored
 *   without `is_error`) -> `failure`; else `success`.
 */
export function resultOutcome(isError: unknown, content: unknown): ToolOutcome {
  const objects = resultObjects(content);
  if (isError === true) {
    for (const o of objects) if (isRaw(o.error) && holdsPhrase(o.error, DENIAL_PHRASES)) return "rejected";
    return "failure";
  }
  if (isError !== undefined && isError !== false) return "unknown";
  return objects.some(saysFailure) ? "failure" : "success";
}

/** The result text starts with `phrase` (raw bytes, e.g. "File created successfully"). */
export function resultStartsWith(o: ScannedResultJson | undefined, phrase: Buffer): boolean {
  const r = o?.result;
  if (!isRaw(r) || r.end - r.start < phrase.length) return false;
  return r.buf.subarray(r.start, r.start + phrase.length).equals(phrase);
}
