import type { Scanned } from "../../scan/schema.ts";
import type { DiscoverResult, Source } from "../types.ts";
import type { IndexStatus } from "./index-db.ts";
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

/**
 * What a discovery keeps of the index read it used: its outcome, and whether every row's document
 * path is one the walk would list (quiet.ts's entry needs no more). Not the rows: a daemon holds
 * its last discovery between sweeps, and 30,000 rows are ~10 MB (docs/performance.md).
 */
export interface IndexFacts {
  readonly status: IndexStatus;
  readonly cacheProblem?: string;
  readonly rowsWalkShaped: boolean;
}

/** A discovery of the messages surface, with what it used of the index. */
export interface ClineDiscovery extends DiscoverResult {
  readonly sources: Source[];
  readonly index: IndexFacts;
}
