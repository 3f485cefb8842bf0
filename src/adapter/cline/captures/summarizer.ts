/**
 * Captures of Cline's agentic compaction summarizer (docs/cline-format.md §14). Cline 3.0.65 calls the model
 * once per agentic compaction with ONE user message (the transcript to summarize) and no tools,
 * and captures that request with a correlation holding only provider and model: no sessionId,
 * runId or iteration. Its captureId is therefore `cap_` + a hash of provider and model alone, the
 * same for every summary of every session on that model, and a process's successive summaries are
 * attempts 1, 2, 3 of that one captureId. Those attempts are separate summaries, not retries.
 * With `CLINE_CAPTURE_WIRE=true` the same request is captured again at `wire_request`, under the
 * same captureId, n and attempt; there the HTTP body carries the system prompt as a message too
 * (docs/cline-format.md §7.4), so that record counts a system message beside the user one.
 *
 * No field of such a record joins it to a session: the hash covers provider and model only, and
 * time proximity is not exact (a hub runs several sessions in one process). So these captures are
 * reported as compaction summarizer requests of no known session, never guessed into one.
 */

/** The fields the rule looks at, as both the adapter's capture and the ledger's row carry them. */
export interface SummarizerCaptureShape {
  readonly captureId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly iteration: number | null;
  readonly messageCount: number;
  readonly userMessages: number;
  readonly systemMessages: number;
}

/** `cap_<16 hex>`: a captureId hashed from a correlation without run and iteration (docs/cline-format.md §7.2). */
const RUNLESS_CAPTURE_ID = /^cap_[0-9a-f]{16}$/;

/**
 * Whether a capture is a compaction summarizer request: no session, run or iteration in its
 * correlation, a run-less captureId, and one user message, beside at most one system message (the
 * system prompt, a message in the wire body) and nothing else. A main-loop request always carries
 * session, run and iteration, so it never matches, at any stage.
 */
export function isCompactionSummarizerCapture(c: SummarizerCaptureShape): boolean {
  return (
    c.sessionId === "" &&
    c.runId === "" &&
    c.iteration === null &&
    RUNLESS_CAPTURE_ID.test(c.captureId) &&
    c.userMessages === 1 &&
    c.systemMessages <= 1 &&
    c.messageCount === c.userMessages + c.systemMessages
  );
}

/** What a capture is for: the main loop's request, or a compaction summary. */
export type CapturePurpose = "request" | "compaction-summarizer";

export function capturePurpose(c: SummarizerCaptureShape): CapturePurpose {
  return isCompactionSummarizerCapture(c) ? "compaction-summarizer" : "request";
}

/**
 * Whether a record counts as a retry: the same request captured again (attempt > 1). A
 * summarizer's attempts are successive summaries, never retries.
 */
export function isCaptureRetry(c: SummarizerCaptureShape & { readonly attempt: number }): boolean {
  return c.attempt > 1 && !isCompactionSummarizerCapture(c);
}
