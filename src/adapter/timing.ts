/**
 * The timing rules of the events and spans, as small pure functions. Verified against the real
 * Cline CLI (docs/traces.md, "Timing"): an assistant message's `ts` is taken when its response has
 * completed; the next request starts right after the latest `ts` before it in the document (the
 * prompt, or the last of the tool results it answers, which arrive in completion order, not array
 * order); a tool result's `ts` is when the tool finished.
 */

/**
 * The latest time a JS Date can hold (ECMA-262 §21.4.1.22: 8.64e15 ms, year 275760): past it a
 * `ts` (a hostile `1e300`) is no time, and not a safe integer for the ledger's INTEGER columns.
 */
export const MAX_TS_MS = 8.64e15;

/** A message `ts` as a time: a positive number of ms up to MAX_TS_MS (truncated), else 0 (= unknown). */
export function validTs(v: unknown): number {
  return typeof v === "number" && v > 0 && v <= MAX_TS_MS ? Math.trunc(v) : 0;
}

/** The running fold of `chatStartMs`: the latest known time seen so far. */
export function latestTs(latest: number, ts: number): number {
  return ts > latest ? ts : latest;
}

/**
 * Start of a chat request: the latest `ts` among the messages before it in its document, whatever
 * their array order; 0 when none of them has a time (the span then has no start and is not timed).
 */
export function chatStartMs(earlierTs: readonly number[]): number {
  let latest = 0;
  for (const ts of earlierTs) latest = latestTs(latest, ts);
  return latest;
}

/** A duration in ms from two times, or undefined when either is unknown or they are out of order. */
export function durationMs(startMs: number, endMs: number): number | undefined {
  if (startMs <= 0 || endMs <= 0 || endMs < startMs) return undefined;
  return endMs - startMs;
}

/**
 * How a tool call ended. `rejected`: the user denied it (it never ran); `failure`: it ran and
 * failed. Which one an adapter can tell from its files: docs/cline-format.md.
 */
export type ToolOutcome = "success" | "failure" | "rejected" | "unknown";

/** A tool result's `is_error`: true is a failure, false or absent a success, anything else unknown. */
export function toolOutcome(isError: boolean | null): ToolOutcome {
  if (isError === null) return "unknown";
  return isError ? "failure" : "success";
}

/** When a call's result has not appeared (yet). */
export interface OpenCall {
  /** The calling message's `ts`. */
  readonly startMs: number;
  /** The latest `ts` of the call's document. */
  readonly documentLastTsMs: number;
}

export type CallEnd =
  | { readonly final: false }
  | {
      readonly final: true;
      readonly endMs: number;
      readonly outcome: ToolOutcome;
      /** The result never appeared: the call ends at its document's last `ts`. */
      readonly cancelled: boolean;
    };

/**
 * End of a tool call. With its result: that message's `ts`, outcome from `is_error`. Without:
 * still running until its document has been quiet (no later `ts`) for `quietMs`; then it is
 * final as cancelled, ending at the document's last `ts`, outcome unknown.
 */
export function toolCallEnd(
  call: OpenCall,
  result:
    | { readonly timestampMs: number; readonly isError: boolean | null; readonly outcome?: ToolOutcome }
    | undefined,
  nowMs: number,
  quietMs: number,
): CallEnd {
  if (result !== undefined) {
    return {
      final: true,
      endMs: result.timestampMs,
      outcome: result.outcome ?? toolOutcome(result.isError),
      cancelled: false,
    };
  }
  if (!documentQuiet(call.documentLastTsMs, nowMs, quietMs)) return { final: false };
  return {
    final: true,
    endMs: Math.max(call.startMs, call.documentLastTsMs),
    outcome: "unknown",
    cancelled: true,
  };
}

/**
 * Whether a document is quiet: nothing in it newer than `quietMs` ago. A document without any
 * time is quiet (nothing will ever end it otherwise).
 */
export function documentQuiet(lastTsMs: number, nowMs: number, quietMs: number): boolean {
  return lastTsMs <= 0 || nowMs - lastTsMs >= quietMs;
}

/** A turn is over when a later prompt exists in its document, or when the document is quiet. */
export function turnClosed(
  closedByNextPrompt: boolean,
  documentLastTsMs: number,
  nowMs: number,
  quietMs: number,
) {
  return closedByNextPrompt || documentQuiet(documentLastTsMs, nowMs, quietMs);
}
