import { isWrongType, type Scanned } from "../../../scan/schema.ts";
import type { Compaction, Problem } from "../../types.ts";
import { identityFromPath } from "../parser.ts";
import { messagesPathFor } from "./files.ts";
import type { compactionDocumentSchema } from "./schema.ts";

/** `agentic`: a summarizer model call wrote a summary. `basic`: messages were dropped, no model call. */
export type CompactionStrategy = "agentic" | "basic";

/** Cline's recorded reasons (basic compactions only); `unrecorded` where Cline writes none (agentic). */
export const COMPACTION_REASONS = [
  "auto_compaction",
  "manual_compaction",
  "overflow_recovery_compaction",
] as const;
export type CompactionReason = (typeof COMPACTION_REASONS)[number] | "unrecorded" | "other";

/**
 * One compaction as observed in `<id>.compaction.json`. The file holds only the LATEST compaction
 * of its agent's context, so an observation is "the compaction in force when we read": two
 * compactions between two reads are one observation (docs/metrics.md, `cline.compactions`).
 * `project` is filled in by the collector from discovery's hint.
 */
export interface CompactionObservation extends Omit<Compaction, "project" | "strategy" | "reason"> {
  readonly strategy: CompactionStrategy;
  readonly reason: CompactionReason;
}

/**
 * The dedup key of one compaction: its session, agent, `updated_at` (rewritten at every
 * compaction, millisecond resolution) and `source_message_count` (grows with the transcript, so
 * two compactions within one millisecond still differ). Re-reading an unchanged file, a restart
 * or a copy of the same file yields the same key: each compaction is recorded once.
 */
export function compactionKey(
  sessionId: string,
  agent: string,
  updatedAt: string,
  sourceMessageCount: number,
): string {
  return `cline-compaction|${sessionId}|${agent}|${updatedAt}|${sourceMessageCount}`;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function count(v: unknown): number | null {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

/** Map Cline's `metadata.kind` onto the strategy; anything else is not a compaction marker. */
export function strategyOf(kind: unknown): CompactionStrategy | undefined {
  return kind === "compaction_summary" ? "agentic" : kind === "compaction" ? "basic" : undefined;
}

/** Map Cline's `metadata.reason` onto the closed set (never an arbitrary string as a label). */
export function reasonOf(reason: unknown): CompactionReason {
  if (reason === undefined) return "unrecorded";
  return (COMPACTION_REASONS as readonly unknown[]).includes(reason) ? (reason as CompactionReason) : "other";
}

export type ParsedCompaction =
  | { readonly ok: CompactionObservation }
  | { readonly problem: Problem }
  /** A valid file with no compaction marker (none in force): nothing to record. */
  | { readonly none: true };

/** Turn the scanned allow-listed fields into one observation, or say why not. */
export function parseCompactionDocument(
  value: Scanned<typeof compactionDocumentSchema> | undefined,
  path: string,
): ParsedCompaction {
  const bad = (detail: string): ParsedCompaction => ({
    problem: { path, code: "invalid-compaction", detail },
  });
  if (value === undefined || isWrongType(value)) return bad("not a JSON object");
  if (value.version !== 1) return bad("version is not 1 (only Cline 3.0.65's version 1 is known)");
  const updatedAt = value.updated_at;
  if (typeof updatedAt !== "string" || !ISO.test(updatedAt)) return bad("updated_at is not an ISO timestamp");
  const timestampMs = Date.parse(updatedAt);
  if (!Number.isFinite(timestampMs)) return bad("updated_at is not a valid time");
  const sourceMessageCount = count(value.source_message_count);
  if (sourceMessageCount === null) return bad("source_message_count is not a non-negative integer");
  const messages = Array.isArray(value.messages) ? value.messages : [];
  let marker: { strategy: CompactionStrategy; meta: Record<string, unknown> } | undefined;
  for (const m of messages) {
    if (isWrongType(m) || m.metadata === undefined || isWrongType(m.metadata)) continue;
    const strategy = strategyOf(m.metadata.kind);
    if (strategy) {
      marker = { strategy, meta: m.metadata as Record<string, unknown> };
      break;
    }
  }
  if (!marker) return { none: true };
  const id = identityFromPath(messagesPathFor(path));
  return {
    ok: {
      compactionKey: compactionKey(id.sessionId, id.agent, updatedAt, sourceMessageCount),
      sessionId: id.sessionId,
      rootSessionId: id.rootSessionId,
      agent: id.agent,
      strategy: marker.strategy,
      reason: reasonOf(marker.meta.reason),
      timestampMs,
      sourceMessageCount,
      messagesRemoved: count(marker.meta.messagesRemoved),
      tokensBefore: count(marker.meta.tokensBefore),
      sourcePath: path,
    },
  };
}
