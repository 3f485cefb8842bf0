import { basename, dirname } from "node:path";
import { isWrongType } from "../../scan/schema.ts";
import type { Problem, SessionHint, ToolCall, UsageEvent } from "../types.ts";
import { applyCacheRule, type StoredMetrics } from "./cache-rule.ts";
import { toolCallKey, usageDedupKey } from "./dedup.ts";
import type { ScannedMessagesDocument } from "./types.ts";

export interface ParsedDocument {
  readonly sessionId: string;
  readonly agent: string;
  readonly events: UsageEvent[];
  readonly toolCalls: ToolCall[];
  readonly problems: Problem[];
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
  if (doc === undefined || isWrongType(doc)) {
    problems.push({ path, code: "not-a-messages-document", detail: "top-level value is not an object" });
    return { sessionId: fromPath.sessionId, agent: fromPath.agent, events, toolCalls, problems };
  }
  const sessionId = text(doc.sessionId) ?? hint.sessionId ?? fromPath.sessionId;
  const agent = text(doc.agent) ?? fromPath.agent;
  const project = hint.project ?? "";
  const messages = doc.messages;
  if (messages === undefined || isWrongType(messages)) {
    problems.push({ path, code: "no-messages", detail: "document has no messages array" });
    return { sessionId, agent, events, toolCalls, problems };
  }
  const seen = new Set<string>();
  for (const msg of messages) {
    if (isWrongType(msg)) continue;
    if (msg.role !== "assistant") continue;
    const messageId = text(msg.id);
    const modelInfo = msg.modelInfo !== undefined && !isWrongType(msg.modelInfo) ? msg.modelInfo : undefined;
    const model = text(modelInfo?.id) ?? "";
    const provider = text(modelInfo?.provider) ?? "";
    const ts = typeof msg.ts === "number" && Number.isFinite(msg.ts) && msg.ts >= 0 ? Math.trunc(msg.ts) : 0;
    const blocks = msg.content !== undefined && !isWrongType(msg.content) ? msg.content : [];
    const uses: { id?: unknown; name?: unknown }[] = [];
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
      toolCalls.push({
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
      });
    }
  }
  return { sessionId, agent, events, toolCalls, problems };
}
