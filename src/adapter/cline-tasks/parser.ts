/**
 * One task's `ui_messages.json` (scanned through the allow-list) to usage events and tool calls
 * (docs/cline-format.md §15). One event per FINAL `api_req_started` entry: one whose text holds
 * token counts. An in-flight entry (`{request}` only) waits; one a resume deletes was never
 * counted. A request's tool calls are the ones between it and the next request, each 1/n of it:
 * `say: "tool"` / `say: "command"` (auto-approved), `ask: "tool"` / `ask: "command"` (asked:
 * approved or denied alike) and `say: "diff_error"` (a replace_in_file that failed). They wait
 * until the request is closed (a later request, or the task stopped to ask), so n is final when
 * they are recorded; each one's outcome comes with the request after it (answers.ts), until
 * then it stays open. A `subagent_usage` message (the sub-agents of one use_subagents call, whose
 * requests are in no entry) is one more event.
 */
import {
  isWrongType,
  type PhraseHits,
  type RawBytes,
  type WrongType,
  wrongTypeShown,
} from "../../scan/schema.ts";
import { CountingScratch } from "../../scan/scratch.ts";
import { TimelineBuilder } from "../activity.ts";
import { deliveryRecords } from "../deliveries.ts";
import { latestTs, validTs } from "../timing.ts";
import { TurnBuilder } from "../turns.ts";
import type {
  ActiveTimeline,
  DeliveryRecord,
  DocumentSignals,
  EditRecord,
  Problem,
  SessionStartRecord,
  ToolCall,
  ToolResult,
  UsageEvent,
} from "../types.ts";
import { commandText, gapType, RESUME_ASKS, type TimelineMessage, taskSessionStart } from "./activity.ts";
import { answerOutcomes, isErrorOf } from "./answers.ts";
import { requestKey, subagentUsageKey, taskActiveStreamKey, taskToolKey, taskTurnKey } from "./dedup.ts";
import { isEditBody, taskEditRecord } from "./edits.ts";
import { taskUsageEvent } from "./event.ts";
import type { RecordedTokens } from "./provider-rule.ts";
import type { ScannedUiMessages, TaskRoot } from "./types.ts";

/** What the task format has in place of the CLI's agents: one conversation per task. */
export const TASK_AGENT = "lead";

/** Tool name of a `say: "command"` entry (the legacy core's execute_command tool). */
export const COMMAND_TOOL = "execute_command";

/** The agent of a `subagent_usage` event: the CLI adapter's value for a sub-agent's requests. */
export const SUBAGENT_AGENT = "subagent";

/** Tool name of a `say: "subagent"` status message: one per use_subagents call of the lead. */
export const SUBAGENTS_TOOL = "use_subagents";

/** Tool name of a `say: "diff_error"` (a replace_in_file whose SEARCH was not found): the edit tool's. */
export const DIFF_ERROR_TOOL = "editedExistingFile";

/** The says that are tool calls: auto-approved tools and commands, sub-agent calls, failed replaces. */
const CALL_SAYS: ReadonlySet<string> = new Set(["tool", "command", "subagent", "diff_error"]);

/** The asks that are tool calls (asked, whatever the answer): `ask: "tool"` and `ask: "command"`. */
const CALL_ASKS: ReadonlySet<string> = new Set(["tool", "command"]);

/**
 * Asks after which the task does nothing until the user acts: the request before them is closed
 * (legacy core's ClineAsk; docs/cline-format.md §15.4).
 */
const STOP_ASKS: ReadonlySet<string> = new Set([
  "completion_result",
  "resume_task",
  "resume_completed_task",
  "followup",
  "plan_mode_respond",
  "mistake_limit_reached",
  "api_req_failed",
]);

export interface TaskContext {
  readonly root: TaskRoot;
  readonly taskId: string;
  readonly path: string;
  /** The task's cwd from taskHistory.json ("" when unknown). */
  readonly project: string;
  /** `cline.client` of a message at a ts (task_metadata.json's hosts); the root's when absent. */
  readonly clientAt?: (ts: number) => string;
  /**
   * The line counting's reusable arrays (src/scan/scratch.ts), shared by the documents one
   * reader parses one after another (parsing is synchronous); a set of this parse's own when absent.
   */
  readonly counting?: CountingScratch;
}

export interface ParsedTask {
  readonly events: UsageEvent[];
  readonly toolCalls: ToolCall[];
  /** The file edits of answered calls (and failed replaces), docs/cline-format.md §15.14. */
  readonly edits: EditRecord[];
  /** The task's timeline (its closed gaps), commits and pull requests of its commands, starts (activity.ts). */
  readonly activeTime: ActiveTimeline[];
  readonly deliveries: DeliveryRecord[];
  readonly sessionStarts: SessionStartRecord[];
  readonly problems: Problem[];
  readonly signals: DocumentSignals;
  /** Sums of the final entries, to check against taskHistory.json. */
  readonly sums: RecordedTokens;
  /** Requests still in flight (no counts yet) and tool calls waiting for their request to close. */
  readonly waiting: { readonly requests: number; readonly toolCalls: number };
}

interface PendingTool {
  readonly name: string;
  readonly ts: number;
  readonly n: number;
  /** `say` (auto-approved), `ask` (the user was asked) or a failed replace (`diff_error`). */
  readonly how: "say" | "ask" | "diff_error";
  /** The scanned tool JSON of an edit, kept until the call is answered (edits.ts). */
  readonly body?: Record<string, unknown>;
  /** A command's line as raw bytes (never decoded), read for commits and pull requests once answered. */
  readonly command?: RawBytes;
}

/** A call recorded with its request, waiting for the next request's text to say how it ended. */
interface Unanswered {
  readonly tool: PendingTool;
  readonly call: ToolCall;
}

interface Request {
  readonly ts: number;
  readonly key: string;
  readonly model: string;
  readonly provider: string;
  readonly turnId: string;
  /** Undefined while in flight (or when its counts were rejected). */
  final: boolean;
  readonly tools: PendingTool[];
}

/** The tool a `say: "tool"` / `"command"` / `"subagent"` message records. */
function toolName(say: string, body: Record<string, unknown> | undefined): string {
  if (say === "command") return COMMAND_TOOL;
  if (say === "subagent") return SUBAGENTS_TOOL;
  return typeof body?.tool === "string" ? body.tool : "(unlisted)";
}

/** The phrases found in a request entry's `request` text (schema.ts), when it had one. */
function requestHits(body: Record<string, unknown>): PhraseHits | undefined {
  const r = body.request;
  return r !== undefined && !isWrongType(r) ? (r as PhraseHits) : undefined;
}

function text(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/** A request entry's recorded counts, or why they are rejected; undefined while in flight. */
export function readCounts(
  t: Record<string, unknown>,
): { ok: RecordedTokens } | { reason: string } | undefined {
  if (t.tokensIn === undefined && t.tokensOut === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const n of ["tokensIn", "tokensOut", "cacheReads", "cacheWrites"] as const) {
    const v = t[n];
    // Older entries had no cache fields: absent is none, a wrong value is rejected.
    if (v === undefined && (n === "cacheReads" || n === "cacheWrites")) {
      out[n] = 0;
      continue;
    }
    const c = count(v);
    if (c === undefined) {
      const shown = isWrongType(v) ? `a ${(v as WrongType).wrongType}` : String(v);
      return { reason: `${n} is ${shown}, not a non-negative safe integer` };
    }
    out[n] = c;
  }
  const ok = out as unknown as RecordedTokens;
  if (!Number.isSafeInteger(ok.tokensIn + ok.tokensOut + ok.cacheReads + ok.cacheWrites))
    return { reason: "counts sum beyond 2^53" };
  return { ok };
}

/**
 * The document as an array of messages, or why it is not one (a `{"not": "an array"}`, a scalar,
 * `null`): a complete document of the wrong shape is read and reported, never retried as torn.
 */
export function taskMessages(
  doc: ScannedUiMessages | undefined,
): { readonly messages: Exclude<ScannedUiMessages, WrongType> } | { readonly shape: string } {
  if (doc === undefined) return { shape: "nothing" };
  if (isWrongType(doc)) return { shape: wrongTypeShown(doc) };
  return { messages: doc };
}

/** What a document of the wrong shape gives: no event, no call, one `not-a-task-document` problem. */
function notATaskDocument(ctx: TaskContext, shape: string): ParsedTask {
  return {
    events: [],
    toolCalls: [],
    edits: [],
    activeTime: [],
    deliveries: [],
    sessionStarts: [],
    problems: [
      { path: ctx.path, code: "not-a-task-document", detail: `top-level value is ${shape}, not an array` },
    ],
    signals: {
      sessionId: ctx.taskId,
      rootSessionId: ctx.taskId,
      agent: TASK_AGENT,
      lastTsMs: 0,
      toolResults: [],
      turns: [],
    },
    sums: { tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0 },
    waiting: { requests: 0, toolCalls: 0 },
  };
}

export function parseUiMessages(docIn: ScannedUiMessages, ctx: TaskContext): ParsedTask {
  // Checked before anything else is set up: nothing below has to handle a document of no messages.
  const shaped = taskMessages(docIn);
  if (!("messages" in shaped)) return notATaskDocument(ctx, shaped.shape);
  const doc = shaped.messages;
  const events: UsageEvent[] = [];
  const toolCalls: ToolCall[] = [];
  const edits: EditRecord[] = [];
  const deliveries: DeliveryRecord[] = [];
  const sessionStarts: SessionStartRecord[] = [];
  const timeline = new TimelineBuilder();
  let prevMsg: TimelineMessage | undefined;
  /** The last message may still change (partial, or a request in flight): its gap waits. */
  let lastOpen = false;
  /** The ts of a resume ask not yet followed by any other message. */
  let pendingResume: number | undefined;
  /** Calls recorded whose answer (the next request's text) has not been read yet. */
  let unanswered: Unanswered[] = [];
  const problems: Problem[] = [];
  const sums = { tokensIn: 0, tokensOut: 0, cacheReads: 0, cacheWrites: 0 };
  // The task prompt opens the first turn, each `user_feedback` (a reply, a resume) the next.
  const turns = new TurnBuilder(
    {
      sessionId: ctx.taskId,
      rootSessionId: ctx.taskId,
      agent: TASK_AGENT,
      project: ctx.project,
      path: ctx.path,
    },
    (turnId) => taskTurnKey(ctx.root.path, ctx.taskId, turnId),
  );
  const { root, taskId, path, project } = ctx;
  const clientAt = ctx.clientAt ?? (() => root.client);
  const startCtx = { rootPath: root.path, taskId, agent: TASK_AGENT, project, path, client: root.client };
  let lastTsMs = 0;
  let waitingRequests = 0;
  const requestTs = new Set<number>();
  const toolTs = new Map<number, number>();
  const subagentTs = new Map<number, number>();
  /** The `ts` of the last use_subagents status message: when its sub-agents started. */
  let batchStart = 0;
  let model = "";
  let provider = "";
  let current: Request | undefined;
  /** Tools before any request (none are expected): recorded without a paying request. */
  const orphans: PendingTool[] = [];
  let scratch = ctx.counting;
  const counting = (): CountingScratch => {
    scratch ??= new CountingScratch();
    return scratch;
  };

  const close = (r: Request | undefined): void => {
    if (r === undefined) return;
    for (const t of r.tools) pushTool(t, r);
    r.tools.length = 0;
  };
  const toolResults: ToolResult[] = [];
  const pushTool = (t: PendingTool, r: Request | undefined): void => {
    const callKey = taskToolKey(root.path, taskId, t.ts, t.n);
    const call: ToolCall = {
      callKey,
      usageKey: r?.final === true ? r.key : "",
      sessionId: taskId,
      agent: TASK_AGENT,
      toolName: t.name,
      timestampMs: t.ts,
      divisor: r === undefined ? 1 : Math.max(1, r.tools.length),
      model: r?.model ?? model,
      provider: r?.provider ?? provider,
      project,
      sourcePath: path,
      messageId: String(t.ts),
      turnId: r?.turnId ?? turns.currentId(),
      client: clientAt(r?.ts ?? t.ts),
    };
    toolCalls.push(call);
    // A failed replace's decision is known at once; any other edit's comes with its answer.
    if (t.how === "diff_error") pushEdit(taskEditRecord(call, t.how, undefined, "failure", counting()));
    unanswered.push({ tool: t, call });
  };
  const pushEdit = (e: EditRecord | undefined): void => {
    if (e !== undefined) edits.push(e);
  };

  /**
   * The request at `ts` answers the calls recorded before it, in order (answers.ts): each gets
   * its result (outcome and end time) and, for an edit, its record. Calls it does not answer
   * (no text read, fewer answers than calls) stay open: the generic layer ends them.
   */
  const answer = (hits: PhraseHits | undefined, ts: number): void => {
    const outcomes = hits === undefined || ts === 0 ? [] : answerOutcomes(hits);
    for (const [i, u] of unanswered.entries()) {
      const outcome = outcomes[i];
      if (outcome === undefined) break;
      toolResults.push({
        callKey: u.call.callKey,
        toolUseId: "",
        sessionId: taskId,
        agent: TASK_AGENT,
        messageId: String(ts),
        timestampMs: ts,
        isError: isErrorOf(outcome),
        outcome,
        sourcePath: path,
      });
      if (u.tool.how !== "diff_error")
        pushEdit(taskEditRecord(u.call, u.tool.how, u.tool.body, outcome, counting()));
      if (outcome === "success" && u.tool.command !== undefined) {
        const c = u.tool.command;
        deliveries.push(...deliveryRecords(u.call, [{ buf: c.buf, start: c.start, end: c.end, depth: 1 }]));
      }
    }
    unanswered = [];
  };

  // The last request entry, and the last settled (non-partial) message: an entry after which
  // nothing has settled is still streaming, and a failed stream's entry that is the last request
  // is still Cline's to rewrite (docs/cline-format.md §15.8, traps 2 and 3).
  let lastRequest = -1;
  let lastSettled = -1;
  doc.forEach((m, i) => {
    if (isWrongType(m)) return;
    if (m.say === "api_req_started") lastRequest = i;
    if (m.partial !== true) lastSettled = i;
  });
  for (const [i, msg] of doc.entries()) {
    if (isWrongType(msg)) continue;
    const ts = validTs(msg.ts);
    lastTsMs = latestTs(lastTsMs, ts);
    const mi = msg.modelInfo !== undefined && !isWrongType(msg.modelInfo) ? msg.modelInfo : undefined;
    if (mi !== undefined) {
      model = text(mi.modelId) ?? model;
      provider = text(mi.providerId) ?? provider;
    }
    // A partial message is still streaming: it closes nothing yet.
    const settled = msg.partial !== true;
    // A text that is not JSON comes as raw bytes (a command line): never a body.
    const command = commandText(msg.text);
    const body =
      msg.text !== undefined && !isWrongType(msg.text) && command === undefined
        ? (msg.text as Record<string, unknown>)
        : undefined;
    timeline.add(ts, gapType(prevMsg, msg), model, provider);
    prevMsg = msg;
    lastOpen = !settled;
    const resumeAsk = msg.type === "ask" && RESUME_ASKS.has(text(msg.ask) ?? "");
    // A resume ask answered by anything but another resume ask (a SIGINT writes two at one ts).
    if (pendingResume !== undefined && !resumeAsk) {
      sessionStarts.push(taskSessionStart(startCtx, "resumed", pendingResume, model, provider));
      pendingResume = undefined;
    }
    if (resumeAsk && settled && ts !== 0) pendingResume = ts;
    if (msg.type === "ask") {
      const ask = text(msg.ask) ?? "";
      // A partial ask is still streaming (rewritten in place, same ts, when it settles).
      if (settled && CALL_ASKS.has(ask)) {
        turns.touch(ts);
        addTool(ts, "ask", ask === "command" ? COMMAND_TOOL : toolName("tool", body), body, command);
      }
      if (settled && STOP_ASKS.has(ask)) close(current);
      continue;
    }
    const say = text(msg.say);
    if (say === "task" || say === "user_feedback") {
      if (say === "task" && ts !== 0 && !sessionStarts.some((r) => r.startType === "new"))
        sessionStarts.push(taskSessionStart(startCtx, "new", ts, model, provider));
      turns.open(String(ts), ts);
      continue;
    }
    turns.touch(ts);
    if (say === "completion_result") {
      if (settled) close(current);
    } else if (say === "subagent_usage") {
      subagentUsage(ts, body);
    } else if (say !== undefined && CALL_SAYS.has(say)) {
      if (say === "subagent") batchStart = ts;
      // A diff_error stays `partial: true` for good: it is counted as it is.
      if (say === "diff_error") addTool(ts, "diff_error", DIFF_ERROR_TOOL, undefined);
      else addTool(ts, "say", toolName(say, body), body, say === "command" ? command : undefined);
    } else if (say === "api_req_started") {
      close(current);
      current = undefined;
      const valid = ts !== 0 && !requestTs.has(ts);
      answer(valid && body !== undefined ? requestHits(body) : undefined, valid ? ts : 0);
      if (ts === 0) {
        problems.push({ path, code: "missing-ts", detail: "api_req_started without a valid ts" });
        continue;
      }
      if (requestTs.has(ts)) {
        problems.push({ path, code: "duplicate-ts", detail: `two api_req_started entries with ts ${ts}` });
        continue;
      }
      requestTs.add(ts);
      const r: Request = {
        ts,
        key: requestKey(root.path, taskId, ts),
        model,
        provider,
        turnId: turns.currentId(),
        final: false,
        tools: [],
      };
      current = r;
      if (body === undefined) {
        problems.push({
          path,
          code: "invalid-request-entry",
          detail: `request ${ts}: text is not a JSON object`,
        });
        continue;
      }
      const counts = readCounts(body);
      // During the retry's delay the failed attempt's entry holds zeros and cancelReason
      // "streaming_failed"; the retry then writes its usage into that same entry (same ts, the
      // key): while it is the task's last request it waits, as an in-flight one does.
      const retrying = body.cancelReason === "streaming_failed" && i === lastRequest;
      if (counts === undefined || retrying || i >= lastSettled) {
        if (counts === undefined) lastOpen = i === doc.length - 1;
        waitingRequests++;
        continue;
      }
      if ("reason" in counts) {
        problems.push({ path, code: "invalid-counts", detail: `request ${ts}: ${counts.reason}` });
        continue;
      }
      const t = counts.ok;
      r.final = true;
      addSums(t);
      const { event, anomaly } = taskUsageEvent(ctx, {
        key: r.key,
        agent: TASK_AGENT,
        ts,
        startMs: ts,
        endApproximate: true,
        model,
        provider,
        turnId: r.turnId,
        client: clientAt(ts),
        counts: t,
        cost: body.cost,
      });
      if (anomaly !== undefined)
        problems.push({ path, code: anomaly, detail: `request ${ts}: provider "${provider}"` });
      events.push(event);
    }
  }
  for (const t of orphans) pushTool(t, undefined);
  return done();

  /** One tool call message: n counts the calls sharing its ts (the key; stable across rewrites). */
  function addTool(
    ts: number,
    how: PendingTool["how"],
    name: string,
    body: Record<string, unknown> | undefined,
    command?: RawBytes,
  ) {
    const n = toolTs.get(ts) ?? 0;
    toolTs.set(ts, n + 1);
    const base: PendingTool = isEditBody(body) ? { name, ts, n, how, body } : { name, ts, n, how };
    const t: PendingTool = command === undefined ? base : { ...base, command };
    (current?.tools ?? orphans).push(t);
  }

  function addSums(t: RecordedTokens): void {
    sums.tokensIn += t.tokensIn;
    sums.tokensOut += t.tokensOut;
    sums.cacheReads += t.cacheReads;
    sums.cacheWrites += t.cacheWrites;
  }

  /**
   * One use_subagents call's sub-agents: their requests are written nowhere, only this message,
   * once, when all of them have ended: the sums of that call alone (never a running total), the
   * counts as the lead's provider records them (docs/cline-format.md §15.10). One event, at
   * once: nothing rewrites it. Its start is the call's status message.
   */
  function subagentUsage(ts: number, body: Record<string, unknown> | undefined): void {
    const counts = body === undefined ? undefined : readCounts(body);
    if (ts === 0 || counts === undefined || "reason" in counts) {
      const reason = counts !== undefined && "reason" in counts ? counts.reason : "no counts";
      const why = ts === 0 ? "no valid ts" : reason;
      problems.push({ path, code: "invalid-subagent-usage", detail: `subagent_usage ${ts}: ${why}` });
      return;
    }
    const n = subagentTs.get(ts) ?? 0;
    subagentTs.set(ts, n + 1);
    addSums(counts.ok);
    const { event, anomaly } = taskUsageEvent(ctx, {
      key: subagentUsageKey(root.path, taskId, ts, n),
      agent: SUBAGENT_AGENT,
      ts,
      startMs: batchStart > 0 && batchStart <= ts ? batchStart : ts,
      endApproximate: false,
      model,
      provider,
      turnId: turns.currentId(),
      client: clientAt(ts),
      counts: counts.ok,
      cost: body?.cost,
    });
    batchStart = 0;
    if (anomaly !== undefined)
      problems.push({ path, code: anomaly, detail: `subagent_usage ${ts}: provider "${provider}"` });
    events.push(event);
  }

  function done(): ParsedTask {
    const calls = new Map<string, number>();
    for (const c of toolCalls) calls.set(c.usageKey, (calls.get(c.usageKey) ?? 0) + 1);
    for (const e of events) (e as { toolCallCount: number }).toolCallCount = calls.get(e.dedupKey) ?? 0;
    const waitingTools = current?.tools.length ?? 0;
    const signals: DocumentSignals = {
      sessionId: taskId,
      rootSessionId: taskId,
      agent: TASK_AGENT,
      lastTsMs,
      toolResults,
      turns: turns.done(),
    };
    const activeTime = timeline.done(lastOpen, {
      sessionId: taskId,
      agent: TASK_AGENT,
      project,
      sourcePath: path,
      client: clientAt(lastTsMs),
      streamKey: taskActiveStreamKey(root.path, taskId),
    });
    return {
      events,
      toolCalls,
      edits,
      activeTime,
      deliveries,
      sessionStarts,
      problems,
      signals,
      sums,
      waiting: { requests: waitingRequests, toolCalls: waitingTools },
    };
  }
}
