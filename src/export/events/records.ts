/**
 * Ledger signal rows -> OTLP log records (events). Pure: no SDK state, no clock beyond the
 * `observedMs` handed in, so the event contract (docs/events.md) is table-tested.
 *
 * The records are handed to the SDK's log exporters directly, as `ReadableLogRecord`s: the
 * Logger API stamps its own time and ids and hands records to processors that drop the export
 * result, while an event here has the message's own `ts`, the ids of its span, and may count as
 * delivered only when its export succeeded (the watermark commit).
 */
import { type Attributes, SeverityNumber, TraceFlags } from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { SignalRow } from "../../ledger/signals.ts";
import {
  type AttributeOptions,
  chatUsage,
  compactionAttributes,
  editAttributes,
  identity,
  recordDurationMs,
  SIG,
  toolCallAttributes,
} from "../signals/attributes.ts";
import { hrTime, spanIdOf, traceIdOf } from "../traces/ids.ts";

export const EVENT_NAMES = {
  apiRequest: "cline.api_request",
  toolCall: "cline.tool_call",
  compaction: "cline.compaction",
  codeEdit: "cline.code_edit",
} as const;

const EVENT_NAME_OF = {
  chat: EVENT_NAMES.apiRequest,
  tool: EVENT_NAMES.toolCall,
  compaction: EVENT_NAMES.compaction,
  edit: EVENT_NAMES.codeEdit,
} as const;

export interface RecordContext extends AttributeOptions {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

export function eventAttributes(row: SignalRow, opts: AttributeOptions): Attributes {
  // A compaction is an instant: no operation of the GenAI conventions, no duration.
  if (row.kind === "compaction") return { ...identity(row, opts), ...compactionAttributes(row) };
  if (row.kind === "edit") return { ...identity(row, opts), ...editAttributes(row) };
  const duration = recordDurationMs(row);
  const own =
    row.kind === "chat"
      ? { [SIG.operation]: "chat", ...chatUsage(row, opts) }
      : { [SIG.operation]: "execute_tool", ...toolCallAttributes(row, opts) };
  return {
    ...identity(row, opts),
    ...own,
    ...(duration === undefined ? {} : { [SIG.durationMs]: duration }),
  };
}

/** One record per request, tool call, compaction and file edit; turns are spans only (undefined). */
export function toLogRecord(
  row: SignalRow,
  ctx: RecordContext,
  observedMs: number,
): ReadableLogRecord | undefined {
  if (row.kind === "turn") return undefined;
  const failed = row.kind === "tool" && row.outcome === "failure";
  return {
    eventName: EVENT_NAME_OF[row.kind],
    hrTime: hrTime(row.tsMs),
    hrTimeObserved: hrTime(observedMs),
    severityNumber: failed ? SeverityNumber.WARN : SeverityNumber.INFO,
    severityText: failed ? "WARN" : "INFO",
    // The record of a request, call or compaction is linked to its span (same deterministic ids),
    // an edit's to its call's execute_tool span.
    spanContext: {
      traceId: traceIdOf(row.rootSessionId),
      spanId: spanIdOf(row.kind === "edit" ? row.callKey : row.refKey),
      traceFlags: TraceFlags.SAMPLED,
    },
    resource: ctx.resource,
    instrumentationScope: ctx.scope,
    attributes: eventAttributes(row, ctx),
    droppedAttributesCount: 0,
  };
}
