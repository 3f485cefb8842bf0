import { basename, dirname } from "node:path";
import { isWrongType } from "../../scan/schema.ts";
import { CountingScratch } from "../../scan/scratch.ts";
import { TimelineBuilder } from "../activity.ts";
import { latestTs, validTs } from "../timing.ts";
import { TurnBuilder } from "../turns.ts";
import type {
  ActiveTimeline,
  DeliveryRecord,
  DocumentSignals,
  EditRecord,
  Problem,
  SessionHint,
  SessionStartRecord,
  ToolCall,
  ToolResult,
  UsageEvent,
} from "../types.ts";
import { COMMAND_TOOLS, commandDeliveries, commandLines, sessionStart } from "./activity.ts";
import { applyCacheRule, type StoredMetrics } from "./cache-rule.ts";
import { CLI_CLIENT } from "./client.ts";
import { activeStreamKey, toolCallKey, turnKey, usageDedupKey } from "./dedup.ts";
import { EDIT_TOOLS, type EditResult, editRecords, type ScannedEditInput } from "./edits.ts";
import { resultObjects, resultOutcome } from "./outcome.ts";
import type { ScannedMessagesDocument } from "./types.ts";

export interface ParsedDocument {
  readonly sessionId: string;
  readonly agent: string;
  readonly events: UsageEvent[];
  readonly toolCalls: ToolCall[];
  /** The edits of editor / apply_patch calls whose result is in the document (edits.ts). */
  readonly edits: EditRecord[];
  /** The lead's timeline (its closed gaps), its start, and the commits and pull requests of its commands (activity.ts). */
  readonly activeTime: ActiveTimeline[];
  readonly deliveries: DeliveryRecord[];
  readonly sessionStarts: SessionStartRecord[];
  readonly problems: Problem[];
  readonly signals: DocumentSignals;
}

const SUFFIX = ".messages.json";

/**
 * Session identity of a document when the document itself does not say: the lead
 * stream is `<root>/<root>.messages.json`; sub-agents and teammates sit in the root's
 * folder as `<agentId>[__<rand>].messages.json` with composite ids `<root>__...`.
 */
export function identityFromPath(path: string): { sessionId: string; agent: string; rootSessionId: string } {
  const file = basename(path);
  const stem = file.endsWith(SUFFIX) ? file.slice(0, -SUFFIX.length) : file;
  const root = basename(dirname(path));
  if (stem === root) return { sessionId: root, agent: "lead", rootSessionId: root };
  // Teammate files are `<agentId>__<rand6>` where rand6 is nanoid-like (it can hold `_` and `-`);
  // spawn_agent ids (`agent_<ms>_<6>`) never contain a double underscore.
  const teammate = stem.includes("__");
  return teammate
    ? { sessionId: `${root}__teamtask__${stem}`, agent: "teammate", rootSessionId: root }
    : { sessionId: `${root}__${stem}`, agent: "subagent", rootSessionId: root };
}

/** A token count must be a non-negative safe integer: anything else is rejected, never coerced. */
export function validTokenCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/**
 * Validate a message's metrics block. Returns the stored numbers, or the reason it is
 * rejected (the message then counts as a problem, not as zero tokens).
 */
export function readMetrics(raw: unknown): { ok: StoredMetrics } | { reason: string } {
  if (raw === null || typeof raw !== "object" || isWrongType(raw))
    return { reason: "metrics is not an object" };
  const m = raw as Record<string, unknown>;
  const names = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"] as const;
  for (const n of names) {
    const v = m[n];
    if (v === undefined) return { reason: `metrics.${n} is missing` };
    if (!validTokenCount(v)) {
      const shown = isWrongType(v) ? `a ${v.wrongType}` : String(v);
      return { reason: `metrics.${n} is ${shown}, not a non-negative safe integer` };
    }
  }
  const ok: StoredMetrics = {
    inputTokens: m.inputTokens as number,
    outputTokens: m.outputTokens as number,
    cacheReadTokens: m.cacheReadTokens as number,
    cacheWriteTokens: m.cacheWriteTokens as number,
  };
  const sum = ok.inputTokens + ok.outputTokens + ok.cacheReadTokens + ok.cacheWriteTokens;
  if (!Number.isSafeInteger(sum)) return { reason: "metrics sum beyond 2^53" };
  return { ok };
}

function text(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/**
 * Turn one scanned document into usage events and tool calls. One assistant message
 * with metrics is one event; each tool_use block in an assistant message is one call,
 * joined to that same message's event, with the message's tool_use count as divisor.
 */
export function parseMessagesDocument(
  doc: ScannedMessagesDocument,
  path: string,
  hint: SessionHint,
): ParsedDocument {
  const problems: Problem[] = [];
  const events: UsageEvent[] = [];
  const toolCalls: ToolCall[] = [];
  const fromPath = identityFromPath(path);
  const rootSessionId = hint.rootSessionId ?? fromPath.rootSessionId;
  if (doc === undefined || isWrongType(doc)) {
    problems.push({ path, code: "not-a-messages-document", detail: "top-level value is not an object" });
    const signals = emptySignals(fromPath.sessionId, rootSessionId, fromPath.agent);
    return {
      sessionId: fromPath.sessionId,
      agent: fromPath.agent,
      events,
      toolCalls,
      edits: [],
      activeTime: [],
      deliveries: [],
      sessionStarts: [],
      problems,
      signals,
    };
  }
  const sessionId = text(doc.sessionId) ?? hint.sessionId ?? fromPath.sessionId;
  const agent = text(doc.agent) ?? fromPath.agent;
  const project = hint.project ?? "";
  // Discovery maps the session's `source` (client.ts); a document without a hint is the CLI's.
  const client = hint.client ?? CLI_CLIENT;
  const messages = doc.messages;
  if (messages === undefined || isWrongType(messages)) {
    problems.push({ path, code: "no-messages", detail: "document has no messages array" });
    return {
      sessionId,
      agent,
      events,
      toolCalls,
      edits: [],
      activeTime: [],
      deliveries: [],
      sessionStarts: [],
      problems,
      signals: emptySignals(sessionId, rootSessionId, agent),
    };
  }
  const seen = new Set<string>();
  const toolResults: ToolResult[] = [];
  // Edit calls and every result by tool_use id: an edit is counted once its result is known.
  const editCalls: { call: ToolCall; input: ScannedEditInput }[] = [];
  const resultsById = new Map<string, EditResult>();
  const commandCalls: { call: ToolCall; lines: ReturnType<typeof commandLines> }[] = [];
  // Only the lead's timeline and start: a sub-agent or teammate runs inside the lead's tool call.
  const lead = agent === "lead";
  // The timeline (activity.ts): every message in document order, model as of that message.
  const timeline = lead ? new TimelineBuilder() : undefined;
  // The session's start: its first message with a ts, and the model it started with (its first
  // response's).
  let firstTs = 0;
  let firstModel: { model: string; provider: string } | undefined;
  let lastModel = "";
  let lastProvider = "";
  const turns = new TurnBuilder({ sessionId, rootSessionId, agent, project, path }, (turnId) =>
    turnKey(sessionId, agent, turnId),
  );
  // The latest ts among the messages before the current one: a request's start (chatStartMs).
  let earlierTs = 0;
  let lastTsMs = 0;
  for (const msg of messages) {
    if (isWrongType(msg)) continue;
    const ts = validTs(msg.ts);
    const startMs = earlierTs;
    earlierTs = latestTs(earlierTs, ts);
    lastTsMs = earlierTs;
    const blocks = msg.content !== undefined && !isWrongType(msg.content) ? msg.content : [];
    const mi =
      msg.role === "assistant" && msg.modelInfo !== undefined && !isWrongType(msg.modelInfo)
        ? msg.modelInfo
        : undefined;
    lastModel = text(mi?.id) ?? lastModel;
    lastProvider = text(mi?.provider) ?? lastProvider;
    timeline?.add(ts, isPrompt(msg.role, blocks) ? "user" : "agent", lastModel, lastProvider);
    if (firstTs === 0 && ts > 0) firstTs = ts;
    if (firstModel === undefined && lastModel !== "")
      firstModel = { model: lastModel, provider: lastProvider };
    if (msg.role === "user") {
      readUserMessage(
        msg.id,
        ts,
        blocks,
        { sessionId, agent, path },
        toolResults,
        resultsById,
        turns,
        problems,
      );
      continue;
    }
    if (msg.role !== "assistant") continue;
    turns.touch(ts);
    const messageId = text(msg.id);
    const modelInfo = msg.modelInfo !== undefined && !isWrongType(msg.modelInfo) ? msg.modelInfo : undefined;
    const model = text(modelInfo?.id) ?? "";
    const provider = text(modelInfo?.provider) ?? "";
    const uses: { id?: unknown; name?: unknown; input?: unknown }[] = [];
    for (const b of blocks) if (!isWrongType(b) && b.type === "tool_use") uses.push(b);

    if (messageId === undefined) {
      if (msg.metrics !== undefined || uses.length > 0) {
        problems.push({ path, code: "missing-message-id", detail: "assistant message without an id" });
      }
      continue;
    }
    const dedupKey = usageDedupKey(sessionId, agent, messageId);
    if (seen.has(dedupKey)) {
      problems.push({ path, code: "duplicate-message-id", detail: `message id ${messageId} appears twice` });
      continue;
    }
    seen.add(dedupKey);

    let usageKey = "";
    if (msg.metrics !== undefined) {
      const m = readMetrics(msg.metrics);
      if ("reason" in m) {
        problems.push({ path, code: "invalid-metrics", detail: `message ${messageId}: ${m.reason}` });
      } else {
        const c = applyCacheRule(m.ok);
        const cost = msg.metrics !== undefined && !isWrongType(msg.metrics) ? msg.metrics.cost : undefined;
        usageKey = dedupKey;
        events.push({
          dedupKey,
          sessionId,
          agent,
          messageId,
          timestampMs: ts,
          model,
          provider,
          project,
          input: c.input,
          output: c.output,
          cacheRead: c.cacheRead,
          cacheWrite: c.cacheWrite,
          total: c.total,
          cacheBranch: c.cacheBranch,
          recordedCost: typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null,
          toolCallCount: uses.length,
          sourcePath: path,
          startMs,
          turnId: turns.currentId(),
          client,
        });
      }
    }
    for (const use of uses) {
      const id = text(use.id);
      if (id === undefined) {
        problems.push({
          path,
          code: "missing-tool-use-id",
          detail: `message ${messageId}: tool_use without an id`,
        });
        continue;
      }
      const call: ToolCall = {
        callKey: toolCallKey(sessionId, agent, id),
        usageKey,
        sessionId,
        agent,
        toolName: text(use.name) ?? "(unnamed)",
        timestampMs: ts,
        divisor: uses.length,
        model,
        provider,
        project,
        sourcePath: path,
        messageId,
        toolUseId: id,
        turnId: turns.currentId(),
        client,
      };
      toolCalls.push(call);
      if (EDIT_TOOLS.has(call.toolName) && use.input !== undefined && !isWrongType(use.input)) {
        editCalls.push({ call, input: use.input as ScannedEditInput });
      }
      if (COMMAND_TOOLS.has(call.toolName) && use.input !== undefined && !isWrongType(use.input))
        commandCalls.push({ call, lines: commandLines(use.input as { commands?: unknown }) });
    }
  }
  const edits: EditRecord[] = [];
  // The line counting's arrays, for this document's edits (most documents have none).
  const counting = editCalls.length === 0 ? undefined : new CountingScratch();
  for (const e of editCalls) {
    const result = resultsById.get(e.call.toolUseId ?? "");
    if (result !== undefined) edits.push(...editRecords(e.call, e.input, result, counting));
  }
  const deliveries = commandCalls.flatMap((c) =>
    commandDeliveries(c.call, c.lines, resultsById.get(c.call.toolUseId ?? "")),
  );
  const self = { sessionId, agent, project, path, client };
  const activeTime =
    timeline?.done(false, { ...self, sourcePath: path, streamKey: activeStreamKey(sessionId, agent) }) ?? [];
  const sessionStarts =
    lead && firstTs > 0
      ? [sessionStart(self, firstTs, firstModel?.model ?? "", firstModel?.provider ?? "")]
      : [];
  const signals: DocumentSignals = {
    sessionId,
    rootSessionId,
    agent,
    lastTsMs,
    toolResults,
    turns: turns.done(),
  };
  return {
    sessionId,
    agent,
    events,
    toolCalls,
    edits,
    activeTime,
    deliveries,
    sessionStarts,
    problems,
    signals,
  };
}

/** A user message that is a prompt (no tool result): the gap it closes is the user's. */
function isPrompt(role: unknown, blocks: readonly unknown[]): boolean {
  if (role !== "user") return false;
  for (const b of blocks)
    if (!isWrongType(b) && (b as { type?: unknown }).type === "tool_result") return false;
  return true;
}

function emptySignals(sessionId: string, rootSessionId: string, agent: string): DocumentSignals {
  return { sessionId, rootSessionId, agent, lastTsMs: 0, toolResults: [], turns: [] };
}

/**
 * A user message is either tool results (one per call, docs/cline-format.md §4.1) or a prompt, which opens a
 * new turn. Only the blocks' `tool_use_id`, `is_error` and what outcome.ts reads of their JSON are read.
 */
function readUserMessage(
  rawId: unknown,
  ts: number,
  blocks: readonly unknown[],
  doc: { readonly sessionId: string; readonly agent: string; readonly path: string },
  out: ToolResult[],
  byId: Map<string, EditResult>,
  turns: TurnBuilder,
  problems: Problem[],
): void {
  const messageId = text(rawId) ?? "";
  let results = 0;
  for (const raw of blocks) {
    if (isWrongType(raw)) continue;
    const b = raw as { type?: unknown; tool_use_id?: unknown; is_error?: unknown; content?: unknown };
    if (b.type !== "tool_result") continue;
    results++;
    const toolUseId = text(b.tool_use_id);
    if (toolUseId === undefined) {
      problems.push({
        path: doc.path,
        code: "missing-tool-use-id",
        detail: `message ${messageId || "(no id)"}: tool_result without a tool_use_id`,
      });
      continue;
    }
    // A denial, or a failure stored without is_error (a failed edit or command): outcome.ts.
    const outcome = resultOutcome(b.is_error, b.content);
    out.push({
      callKey: toolCallKey(doc.sessionId, doc.agent, toolUseId),
      toolUseId,
      sessionId: doc.sessionId,
      agent: doc.agent,
      messageId,
      timestampMs: ts,
      isError: b.is_error === undefined ? false : typeof b.is_error === "boolean" ? b.is_error : null,
      outcome,
      sourcePath: doc.path,
    });
    byId.set(toolUseId, { outcome, json: resultObjects(b.content) });
  }
  if (results === 0) turns.open(messageId, ts);
  else turns.touch(ts);
}
