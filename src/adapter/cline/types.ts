import type { Scanned } from "../../scan/schema.ts";
import type { DiscoverResult, Source } from "../types.ts";
import type { IndexReadResult } from "./index-db.ts";
import type { messagesDocumentSchema, sidecarSchema } from "./schema.ts";

export type ScannedMessagesDocument = Scanned<typeof messagesDocumentSchema>;
export type ScannedSidecar = Scanned<typeof sidecarSchema>;

/** Adapter id: the first segment of every dedup key. */
export const CLINE_ADAPTER_ID = "cline";

/** A walked document; `plain` when neither its session folder nor the file is a symlink. */
export interface WalkedDocument {
  readonly path: string;
  readonly plain: boolean;
}

/** A discovery of the messages surface, with the index read it used. */
export interface ClineDiscovery extends DiscoverResult {
  readonly sources: Source[];
  readonly index: IndexReadResult;
}
