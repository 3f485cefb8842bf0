/**
 * The background reader's worker thread (background-reader.ts). It reads the messages documents
 * it is sent exactly as the main thread would, with the same function (collectIfChanged over
 * collectDocument: the allow-list scan, so message text never becomes a string here either), and
 * posts back what the main thread would have got. The source itself is not sent back: the main
 * thread keeps its own.
 */
import { parentPort } from "node:worker_threads";
import { collectIfChanged } from "../fingerprint.ts";
import type { ReadReply, ReadRequest } from "./background-reader.ts";
import { collectDocument } from "./document.ts";

const port = parentPort;
if (port === null) throw new Error("document-worker runs as a worker thread (background-reader.ts) only");
/** Replies sent together: a message costs both threads more than cloning a few documents' rows. */
const REPLY_BATCH = 16;

/** Reads one after the other, answered in groups of REPLY_BATCH (and the last group at once). */
async function readAll(
  batch: readonly ReadRequest[],
  post: (r: readonly ReadReply[]) => void,
): Promise<void> {
  let replies: ReadReply[] = [];
  for (const req of batch) {
    try {
      const { source: _, ...obs } = await collectIfChanged(req.source, req.checkpoint, collectDocument);
      replies.push({ id: req.id, obs });
    } catch (e) {
      // Rejected in the main thread as the same call there would have been (the pass counts it).
      replies.push({ id: req.id, error: String(e) });
    }
    if (replies.length >= REPLY_BATCH) {
      post(replies);
      replies = [];
    }
  }
  if (replies.length > 0) post(replies);
}

port.on("message", (batch: readonly ReadRequest[]) => {
  void readAll(batch, (r) => port.postMessage(r));
});
