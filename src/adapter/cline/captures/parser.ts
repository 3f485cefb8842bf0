import { isWrongType } from "../../../scan/schema.ts";
import type { CaptureRoleCounts, Problem, RequestCapture } from "../../types.ts";
import { validTokenCount } from "../parser.ts";
import { type CaptureFileName, captureDedupKey } from "./paths.ts";
import type { ScannedCaptureRecord } from "./schema.ts";
import { isCompactionSummarizerCapture } from "./summarizer.ts";

/** What the messages surface knows about a capture's session, looked up by the caller. */
export interface SessionFacts {
  /** The session's cwd ("" when unknown). */
  readonly project: string;
  /** lead | subagent | teammate | "" (unknown). */
  readonly agent: string;
  /** `cline.client` of the session ("" when the capture names none). */
  readonly client: string;
}

export type SessionLookup = (sessionId: string, agentId: string) => SessionFacts;

export interface ParsedCapture {
  /** Undefined when the record was rejected (the reason is in problems). */
  readonly capture: RequestCapture | undefined;
  readonly problems: Problem[];
}

function text(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function shown(v: unknown): string {
  return isWrongType(v) ? `a ${v.wrongType}` : String(v);
}

function object(v: unknown): Record<string, unknown> | undefined {
  return v !== undefined && v !== null && typeof v === "object" && !isWrongType(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

/**
 * A count of the record: absent is 0, anything but a non-negative safe integer rejects the
 * record (a wrong number must not become a plausible one).
 */
function count(o: Record<string, unknown> | undefined, name: string, where: string): number | string {
  const v = o?.[name];
  if (v === undefined) return 0;
  return validTokenCount(v) ? v : `${where}.${name} is ${shown(v)}, not a non-negative safe integer`;
}

/** ISO-8601 `timestamp` -> unix ms, 0 when absent or not a date. */
export function timestampMs(v: unknown): number {
  if (typeof v !== "string") return 0;
  const ms = Date.parse(v);
  return Number.isFinite(ms) && ms >= 0 ? ms : 0;
}

/**
 * One scanned capture record -> one RequestCapture. The file name gives the identity (its
 * captureId, stage and n); the record gives the numbers. A record whose own stage contradicts
 * its name, or whose summary numbers are not counts, is rejected as a problem.
 */
export function parseCaptureRecord(
  doc: ScannedCaptureRecord | undefined,
  name: CaptureFileName,
  path: string,
  lookup: SessionLookup,
): ParsedCapture {
  const problems: Problem[] = [];
  const reject = (code: string, detail: string): ParsedCapture => {
    problems.push({ path, code, detail });
    return { capture: undefined, problems };
  };
  const rec = object(doc);
  if (rec === undefined) return reject("not-a-capture-record", "top-level value is not an object");
  const stage = rec.captureStage;
  if (stage !== undefined && stage !== name.stage) {
    return reject(
      "capture-stage-mismatch",
      `captureStage is ${typeof stage === "string" ? JSON.stringify(stage) : shown(stage)}, the file name says ${name.stage}`,
    );
  }
  const summary = object(rec.summary);
  if (summary === undefined) return reject("capture-no-summary", "the record has no summary object");
  const messages = object(summary.messages);
  const roles = object(messages?.roleCounts);

  const numbers = {
    payloadBytes: count(summary, "payloadBytes", "summary"),
    estimatedTokens: count(summary, "estimatedTokens", "summary"),
    messageCount: count(messages, "messageCount", "summary.messages"),
    messageBytes: count(messages, "totalBytes", "summary.messages"),
    messageTokens: count(messages, "estimatedTokens", "summary.messages"),
    toolResults: count(messages, "toolResultCount", "summary.messages"),
    reasoningBlocks: count(messages, "reasoningBlockCount", "summary.messages"),
    system: count(roles, "system", "summary.messages.roleCounts"),
    user: count(roles, "user", "summary.messages.roleCounts"),
    assistant: count(roles, "assistant", "summary.messages.roleCounts"),
    tool: count(roles, "tool", "summary.messages.roleCounts"),
  };
  for (const v of Object.values(numbers)) {
    if (typeof v === "string") return reject("invalid-capture-summary", v);
  }
  const n = numbers as { [K in keyof typeof numbers]: number };
  if (summary.payloadBytes === undefined) {
    return reject("invalid-capture-summary", "summary.payloadBytes is missing");
  }
  const named = n.system + n.user + n.assistant + n.tool;
  let other = n.messageCount - named;
  if (other < 0) {
    problems.push({
      path,
      code: "capture-role-counts",
      detail: `roleCounts add up to ${named}, more than messageCount ${n.messageCount}; other roles counted as 0`,
    });
    other = 0;
  }
  const roleCounts: CaptureRoleCounts = {
    system: n.system,
    user: n.user,
    assistant: n.assistant,
    tool: n.tool,
    other,
  };

  let attempt = 1;
  if (rec.attempt !== undefined) {
    if (validTokenCount(rec.attempt) && rec.attempt >= 1) attempt = rec.attempt;
    else {
      problems.push({
        path,
        code: "invalid-capture-attempt",
        detail: `attempt is ${shown(rec.attempt)}; taken as 1`,
      });
    }
  }
  const corr = object(rec.correlation);
  const iteration = validTokenCount(corr?.iteration) ? (corr?.iteration as number) : null;
  const sessionId = text(corr?.sessionId);
  const agentId = text(corr?.agentId);
  const facts = lookup(sessionId, agentId);
  const capture: RequestCapture = {
    captureKey: captureDedupKey(name),
    captureId: name.captureId,
    stage: name.stage,
    seq: name.seq,
    attempt,
    mode: text(rec.mode),
    sessionId,
    agent: facts.agent,
    agentId,
    conversationId: text(corr?.conversationId),
    runId: text(corr?.runId),
    iteration,
    model: text(corr?.modelId),
    provider: text(corr?.providerId),
    project: facts.project,
    ...(facts.client === "" ? {} : { client: facts.client }),
    timestampMs: timestampMs(rec.timestamp),
    payloadBytes: n.payloadBytes,
    estimatedTokens: n.estimatedTokens,
    messageCount: n.messageCount,
    messageBytes: n.messageBytes,
    messageTokens: n.messageTokens,
    roles: roleCounts,
    toolResults: n.toolResults,
    reasoningBlocks: n.reasoningBlocks,
    sourcePath: path,
    ...(isCompactionSummarizerCapture({
      captureId: name.captureId,
      sessionId,
      runId: text(corr?.runId),
      iteration,
      messageCount: n.messageCount,
      userMessages: n.user,
      systemMessages: n.system,
    })
      ? { purpose: "compaction-summarizer" as const }
      : {}),
  };
  return { capture, problems };
}
