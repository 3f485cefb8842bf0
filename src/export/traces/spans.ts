/**
 * Ledger signal rows -> spans. Pure, so the trace contract (docs/traces.md) is table-tested.
 *
 * The spans are handed to the SDK's span exporters directly, as `ReadableSpan`s: a Tracer
 * stamps its own clock and random ids, while these spans have Cline's times (explicit start and
 * end), ids derived from Cline's ids (a resend is the same span), and are delivered from the
 * ledger with a watermark. A span is built only once it is final, and never sent again.
 *
 * Shape of a trace (one per root session):
 *   invoke_agent lead            one per user turn of the lead (a root span)
 *     chat {model}               one per request of that turn (CLIENT)
 *     execute_tool {name}        one per tool call of that turn
 *     compaction                 a context compaction observed in that turn (zero duration)
 *     invoke_agent subagent      a sub-agent's or teammate's turn, under the lead turn running
 *       chat / execute_tool        when it began (see Signals.finalTurn)
 */
import {
  type Attributes,
  type HrTime,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
} from "@opentelemetry/api";
import type { InstrumentationScope } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { SignalRow } from "../../ledger/signals.ts";
import {
  type AttributeOptions,
  chatUsage,
  compactionAttributes,
  editAttributes,
  identity,
  SIG,
  spanStartMs,
  toolCallAttributes,
} from "../signals/attributes.ts";
import { hrTime, spanIdOf, traceIdOf } from "./ids.ts";

export interface SpanContextOptions extends AttributeOptions {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
}

export function spanName(row: SignalRow): string {
  switch (row.kind) {
    case "chat":
      return row.model === "" ? "chat" : `chat ${row.model}`;
    case "tool":
      return `execute_tool ${row.toolName}`;
    case "turn":
      return `invoke_agent ${row.agent}`;
    case "compaction":
      return "compaction";
    case "edit":
      // Not a span (SPAN_KINDS): its counts are on its call's execute_tool span.
      return "code_edit";
  }
}

export function spanAttributes(row: SignalRow, opts: AttributeOptions): Attributes {
  const who = identity(row, opts);
  switch (row.kind) {
    case "chat":
      return {
        ...who,
        [SIG.operation]: "chat",
        ...chatUsage(row, opts),
        [SIG.startKnown]: row.startMs > 0 && row.startMs <= row.tsMs,
      };
    case "tool":
      return { ...who, [SIG.operation]: "execute_tool", ...toolCallAttributes(row, opts) };
    case "turn":
      return {
        ...who,
        [SIG.operation]: "invoke_agent",
        [SIG.agentName]: row.agent,
        [SIG.conversationId]: row.sessionId,
        [SIG.turnId]: row.turnId,
      };
    case "compaction":
      return { ...who, ...compactionAttributes(row) };
    case "edit":
      return { ...who, ...editAttributes(row) };
  }
}

function duration(start: HrTime, end: HrTime): HrTime {
  let s = end[0] - start[0];
  let n = end[1] - start[1];
  if (n < 0) {
    s -= 1;
    n += 1_000_000_000;
  }
  return [s, n];
}

/** The span of one final row. Its parent is its turn's span (a turn's: the lead turn, or none). */
export function toSpan(row: SignalRow, ctx: SpanContextOptions): ReadableSpan {
  const traceId = traceIdOf(row.rootSessionId);
  const context: SpanContext = { traceId, spanId: spanIdOf(row.refKey), traceFlags: TraceFlags.SAMPLED };
  const parentSpanContext: SpanContext | undefined =
    row.turnKey === ""
      ? undefined
      : { traceId, spanId: spanIdOf(row.turnKey), traceFlags: TraceFlags.SAMPLED };
  const startTime = hrTime(spanStartMs(row));
  const endTime = hrTime(Math.max(spanStartMs(row), row.endMs));
  // A denied call (outcome `rejected`) is the user's decision, not an error of the tool: its span
  // stays UNSET, as a success's (docs/traces.md "execute_tool").
  const failed = row.kind === "tool" && row.outcome === "failure";
  return {
    name: spanName(row),
    kind: row.kind === "chat" ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(parentSpanContext === undefined ? {} : { parentSpanContext }),
    startTime,
    endTime,
    duration: duration(startTime, endTime),
    status: failed
      ? { code: SpanStatusCode.ERROR, message: "tool call failed" }
      : { code: SpanStatusCode.UNSET },
    attributes: spanAttributes(row, ctx),
    links: [],
    events: [],
    ended: true,
    resource: ctx.resource,
    instrumentationScope: ctx.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
