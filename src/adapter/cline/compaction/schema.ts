import { arr, num, obj, str } from "../../../scan/schema.ts";

/**
 * The allow-list for `<id>.compaction.json` (docs/cline-format.md §14): numbers, the timestamp, and three
 * short enum fields. Everything else, the summary text, `details` (file paths), every message's
 * content and tool inputs, `metrics` and the `usageBefore` running total, is skipped as bytes by
 * the scanner and never becomes a JS value. The enum strings are capped at 32 bytes and mapped to
 * a closed set at once (parser.ts): an unknown value becomes `other`, never a label.
 */
export const compactionDocumentSchema = obj({
  version: num,
  // An ISO timestamp ("2026-12-01T09:08:25.839Z", 24 bytes): the compaction's identity.
  updated_at: str(40),
  source_message_count: num,
  messages: arr(
    obj({
      metadata: obj({
        // "compaction_summary" (agentic) | "compaction" (basic / overflow recovery)
        kind: str(32),
        // "auto_compaction" | "manual_compaction" | "overflow_recovery_compaction" (basic only)
        reason: str(32),
        messagesRemoved: num,
        tokensBefore: num,
      }),
    }),
  ),
});
