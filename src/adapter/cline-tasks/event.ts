/**
 * The usage event of one record of the task format: a final `api_req_started` entry (one
 * request) or a `subagent_usage` message (one use_subagents call's sub-agents). Both hold the
 * same counts, `tokensIn` following the provider's rule (docs/cline-format.md §15.5, §15.12).
 */
import type { UsageEvent } from "../types.ts";
import { type RecordedTokens, recordsDollarCost, taskComponents } from "./provider-rule.ts";

/** What the event takes of its task (the parser's TaskContext has it). */
export interface TaskEventContext {
  readonly taskId: string;
  readonly path: string;
  readonly project: string;
}

export interface TaskRecordFacts {
  readonly key: string;
  readonly agent: string;
  readonly ts: number;
  readonly startMs: number;
  /** True when the record says only when it started (a request entry). */
  readonly endApproximate: boolean;
  readonly model: string;
  readonly provider: string;
  readonly turnId: string;
  /** `cline.client` of the task. */
  readonly client: string;
  readonly counts: RecordedTokens;
  /** The record's `cost` as scanned (checked here). */
  readonly cost: unknown;
}

/** The event, and the provider rule's anomaly (`unknown-provider`, ...) when there is one. */
export function taskUsageEvent(
  ctx: TaskEventContext,
  f: TaskRecordFacts,
): { readonly event: UsageEvent; readonly anomaly?: string } {
  // The four components, their total and the cache branch, as the provider's rule gives them.
  const { anomaly, ...components } = taskComponents(f.provider, f.counts);
  const cost = f.cost;
  const event: UsageEvent = {
    dedupKey: f.key,
    sessionId: ctx.taskId,
    agent: f.agent,
    messageId: String(f.ts),
    timestampMs: f.ts,
    model: f.model,
    provider: f.provider,
    project: ctx.project,
    ...components,
    // Cline's recorded cost, kept only to verify ours: 0 is "no price known", not a price; some
    // providers record another unit there (recordsDollarCost, docs/cline-format.md §15.5).
    recordedCost:
      recordsDollarCost(f.provider) && typeof cost === "number" && Number.isFinite(cost) && cost > 0
        ? cost
        : null,
    // The calls recorded so far; the calls themselves carry the final divisor.
    toolCallCount: 0,
    sourcePath: ctx.path,
    startMs: f.startMs,
    turnId: f.turnId,
    client: f.client,
    endApproximate: f.endApproximate,
  };
  return anomaly === undefined ? { event } : { event, anomaly };
}
