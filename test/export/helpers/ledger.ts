import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Compaction, RequestCapture, Source, ToolCall, UsageEvent } from "../../../src/adapter/types.ts";
import { Ledger } from "../../../src/ledger/ledger.ts";
import { call, docSignals, event, observation, result } from "../../helpers/events.ts";

export interface TempLedger {
  readonly dir: string;
  readonly ledger: Ledger;
  reopen(): Ledger;
  dispose(): void;
}

export function tempLedger(now?: () => number): TempLedger {
  const dir = mkdtempSync(join(tmpdir(), "export-ledger-"));
  let ledger = Ledger.open(dir, now ? { now } : {});
  return {
    dir,
    get ledger() {
      return ledger;
    },
    reopen() {
      ledger.close();
      ledger = Ledger.open(dir, now ? { now } : {});
      return ledger;
    },
    dispose() {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SyntheticSpec {
  readonly sessions: number;
  readonly eventsPerSession?: number;
  readonly models?: readonly { model: string; provider: string }[];
  readonly tools?: readonly string[];
  readonly agents?: readonly string[];
  readonly seed?: number;
  /** First session number (fill a ledger in several rounds with distinct sessions). */
  readonly offset?: number;
  /** Event time of every message and call (default: the event helper's). An old time = history. */
  readonly timestampMs?: number;
  /** Leave every call without its tool_result (not final until its document is quiet). */
  readonly openCalls?: boolean;
  /** Session cwds, taken in turn (default `/home/u/proj0` .. `proj6`). */
  readonly projects?: readonly string[];
}

/** One message of a synthetic session: deterministic components, 0-3 tool calls. */
export function syntheticMessage(s: number, i: number, spec: SyntheticSpec) {
  const models = spec.models ?? [
    { model: "claude-sonnet-4-5-20250929", provider: "anthropic" },
    { model: "mock-model", provider: "openai-compatible" },
  ];
  const tools = spec.tools ?? ["run_commands", "read_files", "editor"];
  const agents = spec.agents ?? ["lead", "subagent", "teammate"];
  const k = s * 131 + i * 17 + (spec.seed ?? 0);
  const m = models[k % models.length] as { model: string; provider: string };
  const agent = agents[s % agents.length] as string;
  const nTools = k % 4;
  return {
    model: m.model,
    provider: m.provider,
    agent,
    input: 500 + (k % 2000),
    output: 20 + (k % 300),
    cacheRead: k % 700,
    cacheWrite: k % 90,
    tools: Array.from({ length: nTools }, (_, j) => tools[(k + j) % tools.length] as string),
  };
}

/** Fills a ledger with sessions x events (one observation per session, like one document). */
export function fillLedger(ledger: Ledger, spec: SyntheticSpec): { events: number; calls: number } {
  let events = 0;
  let calls = 0;
  const per = spec.eventsPerSession ?? 4;
  const first = spec.offset ?? 0;
  for (let s = first; s < first + spec.sessions; s++) {
    const sessionId = `17960000${String(s).padStart(5, "0")}_abcde`;
    const evs: UsageEvent[] = [];
    const cs: ToolCall[] = [];
    for (let i = 0; i < per; i++) {
      const m = syntheticMessage(s, i, spec);
      const e = event(`msg_${i}`, {
        dedupKey: `cline|${sessionId}|${m.agent}|msg_${i}`,
        sessionId,
        agent: m.agent,
        model: m.model,
        provider: m.provider,
        project: spec.projects?.[s % spec.projects.length] ?? `/home/u/proj${s % 7}`,
        input: m.input,
        output: m.output,
        cacheRead: m.cacheRead,
        cacheWrite: m.cacheWrite,
        toolCallCount: m.tools.length,
        ...(spec.timestampMs === undefined ? {} : { timestampMs: spec.timestampMs }),
      });
      evs.push(e);
      m.tools.forEach((toolName, j) => {
        cs.push(
          call(`call_${i}_${j}`, e.dedupKey, m.tools.length, {
            callKey: `cline|${sessionId}|${m.agent}|call_${i}_${j}`,
            sessionId,
            agent: m.agent,
            toolName,
            model: m.model,
            provider: m.provider,
            project: spec.projects?.[s % spec.projects.length] ?? `/home/u/proj${s % 7}`,
            ...(spec.timestampMs === undefined ? {} : { timestampMs: spec.timestampMs }),
          }),
        );
      });
    }
    const source: Source = {
      adapterId: "cline",
      path: `/s/${sessionId}/${sessionId}.messages.json`,
      origin: "walk",
      hint: { sessionId },
    };
    // Every call has its result in the same document (final when read: counted in cline.tool.calls
    // by outcome), every 5th of them a failure; `openCalls` leaves them without one.
    const results = spec.openCalls
      ? []
      : cs.map((c, j) => result(c, (s + j) % 5 === 4, 200 + ((s * 7 + j) % 900)));
    const r = ledger.commit(
      observation(evs, cs, 100 + s, source, docSignals(results, { sessionId, rootSessionId: sessionId })),
    );
    events += r.eventsAdded;
    calls += r.callsAdded;
  }
  return { events, calls };
}

/** A provider-request capture as the captures surface produces it (summary numbers only). */
export function requestCapture(id: string, over: Partial<RequestCapture> = {}): RequestCapture {
  const stage = over.stage ?? "ai_sdk_prompt";
  const seq = over.seq ?? 1;
  const roles = over.roles ?? { system: 0, user: 2, assistant: 1, tool: 1, other: 0 };
  const payloadBytes = over.payloadBytes ?? 21_000;
  return {
    captureKey: `cline-capture|${id}|${stage}|${seq}`,
    captureId: id,
    stage,
    seq,
    attempt: 1,
    mode: "summary",
    sessionId: "s1",
    agent: "lead",
    agentId: "agent_1",
    conversationId: "conv_1",
    runId: "run_1",
    iteration: 1,
    model: "mock-model",
    provider: "openai-compatible",
    project: "/work/ws",
    timestampMs: 1_796_000_000_000,
    payloadBytes,
    estimatedTokens: Math.ceil(payloadBytes / 3),
    messageCount: roles.system + roles.user + roles.assistant + roles.tool + roles.other,
    messageBytes: 300,
    messageTokens: 100,
    roles,
    toolResults: roles.tool,
    reasoningBlocks: 0,
    sourcePath: `/caps/${id}.${stage}.${seq}.provider-request.json`,
    ...over,
  };
}

/** Commits captures as one capture file would be (its rows with its checkpoint). */
export function commitCaptures(ledger: Ledger, path: string, captures: readonly RequestCapture[]): number {
  const r = ledger.commit({
    status: "read",
    source: { adapterId: "cline-capture", path, origin: "walk", hint: {} },
    checkpoint: { path, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    captures: [...captures],
    problems: [],
  });
  return r.capturesAdded ?? 0;
}

/** An agentic compaction of session s1's lead, as the compaction surface produces it. */
export function sampleCompaction(over: Partial<Compaction> = {}): Compaction {
  return {
    compactionKey: "cline-compaction|s1|lead|2026-12-01T10:00:00.000Z|10",
    sessionId: "s1",
    rootSessionId: "s1",
    agent: "lead",
    project: "/work/ws",
    strategy: "agentic",
    reason: "unrecorded",
    timestampMs: 1_796_000_000_500,
    sourceMessageCount: 10,
    messagesRemoved: null,
    tokensBefore: 4000,
    sourcePath: "/s/s1/s1.compaction.json",
    ...over,
  };
}

/** Commits one compaction as its compaction file would be (with its checkpoint). */
export function commitCompaction(ledger: Ledger, c: Compaction): number {
  const r = ledger.commit({
    status: "read",
    source: { adapterId: "cline-compaction", path: c.sourcePath, origin: "walk", hint: {} },
    checkpoint: { path: c.sourcePath, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
    events: [],
    toolCalls: [],
    compactions: [c],
    problems: [],
  });
  return r.compactionsAdded ?? 0;
}
