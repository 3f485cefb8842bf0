/**
 * The attribute contract of the events (docs/events.md) and spans (docs/traces.md): every key
 * a record or span may carry. Values come only from allow-listed ledger columns (ids, names,
 * times, token numbers, flags), never from message text, tool input or tool output.
 */
import type { Attributes } from "@opentelemetry/api";
import type { ProjectMode } from "../../config/config.ts";
import { computeCost } from "../../cost/index.ts";
import type { SignalRow } from "../../ledger/signals.ts";
import { ATTR, renderProject } from "../attributes.ts";
import { COMPACTION_ATTR, UNRECORDED_REASON } from "../compactions.ts";
import type { DataAttributes } from "../team-attributes.ts";
import type { PriceLookup } from "../translate.ts";

export const SIG = {
  sessionId: ATTR.sessionId,
  rootSessionId: "cline.session.root_id",
  agent: ATTR.agent,
  project: ATTR.project,
  client: "cline.client",
  model: ATTR.model,
  provider: ATTR.provider,
  messageId: "cline.message.id",
  operation: "gen_ai.operation.name",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  costUsd: "cline.cost.usd",
  unpriced: "cline.cost.unpriced",
  toolCalls: "cline.tool_calls",
  durationMs: "cline.duration_ms",
  startKnown: "cline.start.known",
  endKnown: "cline.end.known",
  toolName: ATTR.toolName,
  toolCallId: "gen_ai.tool.call.id",
  usageKnown: ATTR.usageKnown,
  shareDivisor: "cline.tool.share.divisor",
  shareInput: "cline.tool.share.input_tokens",
  shareOutput: "cline.tool.share.output_tokens",
  shareCacheRead: "cline.tool.share.cache_read.input_tokens",
  shareCacheWrite: "cline.tool.share.cache_creation.input_tokens",
  shareCostUsd: "cline.tool.share.cost.usd",
  outcome: "cline.tool.outcome",
  cancelled: "cline.tool.cancelled",
  errorType: "error.type",
  turnId: "cline.turn.id",
  compactionStrategy: COMPACTION_ATTR.strategy,
  compactionReason: COMPACTION_ATTR.reason,
  compactionTokensBefore: "cline.compaction.tokens_before",
  compactionMessagesRemoved: "cline.compaction.messages_removed",
  compactionSourceMessageCount: "cline.compaction.source_message_count",
  // File edits (docs/events.md cline.code_edit, docs/traces.md execute_tool): the metric's names.
  editOperation: ATTR.operation,
  editDecision: ATTR.decision,
  editSource: ATTR.source,
  editLanguage: ATTR.language,
  linesAdded: "cline.lines.added",
  linesRemoved: "cline.lines.removed",
  linesExact: ATTR.linesExact,
  editsAccepted: "cline.code_edit.accepted",
  editsRejected: "cline.code_edit.rejected",
  editsFailed: "cline.code_edit.failed",
} as const;

/** Every key an event record or a span may carry. */
export const SIGNAL_ATTRIBUTES: ReadonlySet<string> = new Set(Object.values(SIG));

export interface AttributeOptions {
  readonly project: ProjectMode;
  readonly priceOf: PriceLookup;
  /** The copied resource attributes and each workspace's `vcs.*` (src/export/team-attributes.ts). */
  readonly data?: DataAttributes | undefined;
}

/**
 * Who and where: the attributes every record and span carries. The copied resource attributes
 * (`user.name`, `team.id`, ... as configured) and the repository come first: the record's own win.
 */
export function identity(row: SignalRow, opts: AttributeOptions): Attributes {
  const out: Attributes = {
    ...opts.data?.constant,
    ...opts.data?.repositoryOf?.(row.project).all,
    [SIG.sessionId]: row.sessionId,
    [SIG.rootSessionId]: row.rootSessionId,
    [SIG.agent]: row.agent,
  };
  const project = renderProject(row.project, opts.project);
  if (project !== undefined) out[SIG.project] = project;
  if (row.client !== "") out[SIG.client] = row.client;
  return out;
}

/** A request's usage as the GenAI conventions define it: input_tokens is ALL input (uncached + cache). */
export function chatUsage(row: SignalRow, opts: AttributeOptions): Attributes {
  const out: Attributes = {
    [SIG.model]: row.model,
    [SIG.provider]: row.provider,
    [SIG.messageId]: row.messageId,
    [SIG.inputTokens]: row.input + row.cacheRead + row.cacheWrite,
    [SIG.outputTokens]: row.output,
    [SIG.cacheReadTokens]: row.cacheRead,
    [SIG.cacheWriteTokens]: row.cacheWrite,
    [SIG.toolCalls]: row.toolCalls,
  };
  // The source records no end (the task format): its time is the start's, said to be approximate.
  if (row.endKnown === 0) out[SIG.endKnown] = false;
  const price = opts.priceOf(row.provider, row.model);
  // Unknown price: an explicit flag, never a cost of 0.
  if (price === undefined) out[SIG.unpriced] = true;
  else {
    out[SIG.unpriced] = false;
    out[SIG.costUsd] = computeCost(row, price);
  }
  return out;
}

/** A call: its ids, its 1/n share of the paying request (when that had metrics), its outcome. */
export function toolCallAttributes(row: SignalRow, opts: AttributeOptions): Attributes {
  const out: Attributes = {
    [SIG.toolName]: row.toolName,
    [SIG.toolCallId]: row.toolUseId,
    [SIG.messageId]: row.messageId,
    [SIG.model]: row.model,
    [SIG.provider]: row.provider,
    [SIG.usageKnown]: row.usageKnown,
    [SIG.outcome]: row.outcome ?? "unknown",
    [SIG.cancelled]: row.cancelled,
  };
  if (row.usageKnown) {
    out[SIG.shareDivisor] = row.toolCalls;
    out[SIG.shareInput] = row.input + row.cacheRead + row.cacheWrite;
    out[SIG.shareOutput] = row.output;
    out[SIG.shareCacheRead] = row.cacheRead;
    out[SIG.shareCacheWrite] = row.cacheWrite;
    const price = opts.priceOf(row.provider, row.model);
    if (price !== undefined) out[SIG.shareCostUsd] = computeCost(row, price);
  }
  // Only a failure is an error; a denial (`rejected`) is the user's decision and carries none.
  if (row.outcome === "failure") out[SIG.errorType] = "tool_error";
  // The file edits the call proposed (joined by its key), on its span and event: only where it made any.
  const edits = row.editsAccepted + row.editsRejected + row.editsFailed;
  if (edits > 0) {
    out[SIG.editsAccepted] = row.editsAccepted;
    out[SIG.editsRejected] = row.editsRejected;
    out[SIG.editsFailed] = row.editsFailed;
    out[SIG.linesAdded] = row.linesAdded;
    out[SIG.linesRemoved] = row.linesRemoved;
    out[SIG.linesExact] = row.exact === 1;
  }
  return out;
}

/**
 * One file edit: its tool and call, operation, decision, source and language (the extension's,
 * never the path), its lines and whether they are exact. Nothing of its content.
 */
export function editAttributes(row: SignalRow): Attributes {
  const out: Attributes = {
    [SIG.toolName]: row.toolName,
    [SIG.editOperation]: row.operation,
    [SIG.editDecision]: row.decision,
    [SIG.editSource]: row.editSource,
    [SIG.editLanguage]: row.language,
    [SIG.linesAdded]: row.linesAdded,
    [SIG.linesRemoved]: row.linesRemoved,
    [SIG.linesExact]: row.exact === 1,
  };
  if (row.toolUseId !== "") out[SIG.toolCallId] = row.toolUseId;
  if (row.model !== "") out[SIG.model] = row.model;
  if (row.provider !== "") out[SIG.provider] = row.provider;
  return out;
}

/**
 * A compaction: its strategy, its reason where Cline records one, the numbers Cline wrote where
 * present (`tokensBefore`, `messagesRemoved`, `source_message_count`), and the model and provider
 * of the agent's latest requests where known. Numbers and enums only: nothing of the summary.
 */
export function compactionAttributes(row: SignalRow): Attributes {
  const out: Attributes = { [SIG.compactionStrategy]: row.strategy };
  if (row.reason !== "" && row.reason !== UNRECORDED_REASON) out[SIG.compactionReason] = row.reason;
  if (row.model !== "") out[SIG.model] = row.model;
  if (row.provider !== "") out[SIG.provider] = row.provider;
  out[SIG.compactionSourceMessageCount] = row.sourceMessageCount;
  if (row.tokensBefore !== null) out[SIG.compactionTokensBefore] = row.tokensBefore;
  if (row.messagesRemoved !== null) out[SIG.compactionMessagesRemoved] = row.messagesRemoved;
  return out;
}

/** The span-side duration rule: a chat starts at `startMs` when known, else at its own ts (0 long). */
export function spanStartMs(row: SignalRow): number {
  if (row.kind === "chat") return row.startMs > 0 && row.startMs <= row.tsMs ? row.startMs : row.tsMs;
  return row.tsMs;
}

/** Duration in ms of a record, undefined when its start is unknown. */
export function recordDurationMs(row: SignalRow): number | undefined {
  if (row.kind === "chat") {
    if (row.startMs <= 0 || row.tsMs <= 0 || row.startMs > row.tsMs) return undefined;
    return row.tsMs - row.startMs;
  }
  if (row.tsMs <= 0 || row.endMs < row.tsMs) return undefined;
  return row.endMs - row.tsMs;
}
