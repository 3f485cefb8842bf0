import type { Scanned } from "../../../scan/schema.ts";
import { num, obj, str } from "../../../scan/schema.ts";

/**
 * The allow-list of a capture record (docs/cline-format.md §7.3): the ONLY fields ever decoded. The
 * full-mode `payload` (the prompt itself), the `wire_request` body, every sha256, the
 * `largestMessages` / `messages` lists and the rest of `correlation` (device id, client
 * names) are skipped as bytes and never become strings.
 * `roleCounts` is a map; the four roles Cline's providers use are named here, and whatever
 * else a record counts is derived as `messageCount` minus these.
 */
export const captureRecordSchema = obj({
  timestamp: str(64),
  captureStage: str(64),
  attempt: num,
  mode: str(16),
  correlation: obj({
    sessionId: str(512),
    agentId: str(512),
    conversationId: str(512),
    runId: str(512),
    iteration: num,
    providerId: str(256),
    modelId: str(512),
  }),
  summary: obj({
    payloadBytes: num,
    estimatedTokens: num,
    messages: obj({
      messageCount: num,
      roleCounts: obj({ system: num, user: num, assistant: num, tool: num }),
      totalBytes: num,
      estimatedTokens: num,
      reasoningBlockCount: num,
      toolResultCount: num,
    }),
  }),
});

export type ScannedCaptureRecord = Scanned<typeof captureRecordSchema>;

/** Cline adapter id of the captures surface: the adapter column of its checkpoints. */
export const CLINE_CAPTURES_ADAPTER_ID = "cline-capture";
