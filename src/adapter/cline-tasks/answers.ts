/**
 * How a tool call of the task format ended, read from the NEXT request's text (docs/cline-format.md
 * §16): the legacy core sends each call's result back as a text block `[<tool> for '<path>']
 * Result:` + a newline + the result, in call order; a call queued behind a denied one gets
 * `Skipping tool due to user rejecting a previous tool. [<tool> ...]` instead. XML tools have no
 * id, so a result joins its call by order. The request text is never decoded: the phrases are
 * found in its raw bytes as it is skipped (src/scan/phrases.ts), and only their order and
 * offsets reach this module.
 */
import type { PhraseHits } from "../../scan/schema.ts";
import type { ToolOutcome } from "../timing.ts";

/** The phrases searched in a request text, by index (the order is the code below's). */
export const ANSWER_PHRASES = [
  "] Result:",
  "The user denied this operation",
  "The tool execution failed with the following error",
  // "Skipping tool due to ...", and "Tool was interrupted and not executed due to ..." (a call
  // still streaming when the user denied the one before).
  "due to user rejecting a previous tool",
] as const;

const HEADER = 0;
const DENIED = 1;
const FAILED = 2;
const QUEUED = 3;

/**
 * Raw bytes allowed between a result's header and the phrase that opens its text: the newline
 * that joins them, `\n` in one escaping and `\\n` in two, with room for a `\r\n`. A denial or
 * error phrase further into a result (a file read that quotes one) says nothing of the call.
 */
export const HEADER_GAP_BYTES = 8;

/**
 * The outcome of each answered call, in call order: `success` for a result, `rejected` for a
 * denial or a queued call skipped after one, `failure` for a tool error. A request that answers
 * fewer calls than were made leaves the rest unanswered (they stay open).
 */
export function answerOutcomes(hits: PhraseHits): ToolOutcome[] {
  const out: ToolOutcome[] = [];
  let headerEnd = -1;
  for (let i = 0; i < hits.phrase.length; i++) {
    const phrase = hits.phrase[i] as number;
    const at = hits.at[i] as number;
    if (phrase === HEADER) {
      out.push("success");
      headerEnd = at + ANSWER_PHRASES[HEADER].length;
      continue;
    }
    if (phrase === QUEUED) {
      out.push("rejected");
      headerEnd = -1;
      continue;
    }
    if (headerEnd >= 0 && at >= headerEnd && at - headerEnd <= HEADER_GAP_BYTES)
      out[out.length - 1] = phrase === DENIED ? "rejected" : phrase === FAILED ? "failure" : "success";
    // Only the phrase that opens a result decides it.
    headerEnd = -1;
  }
  return out;
}

/** `is_error` as the CLI format would have it: a denial is an error result there too. */
export function isErrorOf(outcome: ToolOutcome): boolean | null {
  if (outcome === "unknown") return null;
  return outcome !== "success";
}
