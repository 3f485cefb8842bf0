/**
 * Reading one messages document: the allow-list scan (src/scan) and the parser, nothing else.
 * Its own module so the background reader's worker (document-worker.ts) loads only this, the
 * scanner and the parser, not discovery or the index reader.
 */
import { ScanError, scanFile } from "../../scan/scanner.ts";
import { checkpointOf, readWhole } from "../fingerprint.ts";
import { failedObservation, scanFailed } from "../scan-failure.ts";
import type { Observation, Source } from "../types.ts";
import { isUsageSource } from "./compaction/files.ts";
import { parseMessagesDocument } from "./parser.ts";
import { messagesDocumentSchema } from "./schema.ts";

const failed = failedObservation;

/** Read one document in full. Torn, vanished or unreadable documents fail (retried next pass). */
export async function collectDocument(source: Source): Promise<Observation> {
  // Defence in depth behind discovery: a compaction file (or anything else) is never parsed for usage.
  if (!isUsageSource(source.path)) {
    return failed(source, "not-a-usage-source", "only *.messages.json documents carry usage events");
  }
  let result: Awaited<ReturnType<typeof scanFile<typeof messagesDocumentSchema>>>;
  try {
    result = await scanFile(source.path, messagesDocumentSchema);
  } catch (e) {
    if (e instanceof ScanError) return scanFailed(source, e);
    throw e;
  }
  // Cline writes in place (truncate + write): a read that raced a rewrite is retried.
  if (!readWhole(result)) {
    return failed(source, "changed-during-read", "the document was rewritten while being read");
  }
  const parsed = parseMessagesDocument(result.value, source.path, source.hint);
  return {
    status: "read",
    source,
    checkpoint: checkpointOf(source.path, result.statBefore),
    events: parsed.events,
    toolCalls: parsed.toolCalls,
    ...(parsed.edits.length > 0 ? { edits: parsed.edits } : {}),
    ...(parsed.activeTime.length > 0 ? { activeTime: parsed.activeTime } : {}),
    ...(parsed.deliveries.length > 0 ? { deliveries: parsed.deliveries } : {}),
    ...(parsed.sessionStarts.length > 0 ? { sessionStarts: parsed.sessionStarts } : {}),
    problems: parsed.problems,
    signals: parsed.signals,
  };
}
