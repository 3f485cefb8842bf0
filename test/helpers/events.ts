import type {
  DocumentSignals,
  EditRecord,
  Observation,
  Source,
  ToolCall,
  ToolResult,
  UsageEvent,
} from "../../src/adapter/types.ts";

export const SOURCE: Source = { adapterId: "cline", path: "/s/a/a.messages.json", origin: "walk", hint: {} };

/** A valid event; `total` follows the components unless the override sets it. */
export function event(id: string, over: Partial<UsageEvent> = {}): UsageEvent {
  const base: UsageEvent = {
    dedupKey: `cline|s1|lead|${id}`,
    sessionId: "s1",
    agent: "lead",
    messageId: id,
    timestampMs: 1_796_000_000_000,
    model: "m1",
    provider: "p1",
    project: "/work/ws",
    input: 100,
    output: 10,
    cacheRead: 50,
    cacheWrite: 5,
    total: 165,
    cacheBranch: "subset",
    recordedCost: null,
    toolCallCount: 0,
    sourcePath: SOURCE.path,
    ...over,
  };
  const total = over.total ?? base.input + base.output + base.cacheRead + base.cacheWrite;
  return { ...base, total };
}

export function call(id: string, usageKey: string, divisor: number, over: Partial<ToolCall> = {}): ToolCall {
  return {
    callKey: `cline|s1|lead|${id}`,
    usageKey,
    sessionId: "s1",
    agent: "lead",
    toolName: "run_commands",
    timestampMs: 1_796_000_000_000,
    divisor,
    model: "m1",
    provider: "p1",
    project: "/work/ws",
    sourcePath: SOURCE.path,
    ...over,
  };
}

export function observation(
  events: UsageEvent[],
  toolCalls: ToolCall[] = [],
  size = 100,
  source: Source = SOURCE,
  signals?: DocumentSignals,
): Extract<Observation, { status: "read" }> {
  return {
    status: "read",
    source,
    checkpoint: { path: source.path, size, mtimeNs: "1", ino: 1, dev: 1 },
    events,
    toolCalls,
    problems: [],
    ...(signals === undefined ? {} : { signals }),
  };
}

/** The tool_result block answering `c`, `durationMs` after it (`isError` as the block's flag). */
export function result(c: ToolCall, isError: boolean | null = false, durationMs = 1500): ToolResult {
  return {
    callKey: c.callKey,
    toolUseId: c.toolUseId ?? c.callKey,
    sessionId: c.sessionId,
    agent: c.agent,
    messageId: `result_${c.callKey}`,
    timestampMs: c.timestampMs + durationMs,
    isError,
    sourcePath: c.sourcePath,
  };
}

/**
 * The signals of a document holding `results` (and no turns): with them, the calls they answer
 * are final when read (counted in cline.tool.calls by outcome); without, they stay open until
 * the document is quiet.
 */
export function docSignals(
  results: readonly ToolResult[],
  over: Partial<DocumentSignals> = {},
): DocumentSignals {
  const first = results[0];
  const sessionId = first?.sessionId ?? "s1";
  return {
    sessionId,
    rootSessionId: sessionId,
    agent: first?.agent ?? "lead",
    lastTsMs: results.reduce((m, r) => Math.max(m, r.timestampMs), 0),
    toolResults: results,
    turns: [],
    ...over,
  };
}

/** An observation whose calls all have their result (success) in the same read: final at once. */
export function finalObservation(
  events: UsageEvent[],
  toolCalls: ToolCall[] = [],
  size = 100,
  source: Source = SOURCE,
): Extract<Observation, { status: "read" }> {
  return observation(events, toolCalls, size, source, docSignals(toolCalls.map((c) => result(c))));
}

/** A file edit `c` proposed (the n-th file of the call, its tool), accepted by auto-approval unless overridden. */
export function edit(c: ToolCall, over: Partial<EditRecord> = {}, n = 0): EditRecord {
  return {
    editKey: `${c.callKey}|${n}`,
    callKey: c.callKey,
    usageKey: c.usageKey,
    sessionId: c.sessionId,
    agent: c.agent,
    toolName: c.toolName,
    operation: "modify",
    decision: "accepted",
    source: "auto",
    language: "typescript",
    linesAdded: 7,
    linesRemoved: 3,
    exact: true,
    timestampMs: c.timestampMs,
    model: c.model,
    provider: c.provider,
    project: c.project,
    sourcePath: c.sourcePath,
    ...(c.client === undefined ? {} : { client: c.client }),
    ...over,
  };
}

/** The observation with `edits` on it (what an adapter that reads edits emits). */
export function withEdits<O extends Extract<Observation, { status: "read" }>>(
  o: O,
  edits: readonly EditRecord[],
): O {
  return { ...o, edits };
}
