import type { Scanned } from "../../scan/schema.ts";
import type { messagesDocumentSchema, sidecarSchema } from "./schema.ts";

export type ScannedMessagesDocument = Scanned<typeof messagesDocumentSchema>;
export type ScannedSidecar = Scanned<typeof sidecarSchema>;

/** Adapter id: the first segment of every dedup key. */
export const CLINE_ADAPTER_ID = "cline";
