/**
 * The normalized vocabulary every adapter speaks. One usage event per billed model
 * response; one tool call per tool_use block. The ledger and the exporters only
 * ever see these shapes, never an agent's raw documents.
 */

/** How the seed's cache rule read one event's cache counts. */
export type CacheBranch = "subset" | "additive";

/** One assistant message with metrics: one API response, one event. */
export interface UsageEvent {
  /** `cline|<session id>|<agent>|<message id>`: unique, stable across rewrites. */
  readonly dedupKey: string;
  readonly sessionId: string;
  /** The document's own `agent` field: lead | subagent | teammate. */
  readonly agent: string;
  readonly messageId: string;
  /** Message `ts`, unix milliseconds (0 when the document had none). */
  readonly timestampMs: number;
  /** `modelInfo.id` ("" when absent). */
  readonly model: string;
  /** `modelInfo.provider` ("" when absent). */
  readonly provider: string;
  /** The session's cwd, fixed when the event is first seen ("" when unknown). */
  readonly project: string;
  /** The four components after the cache rule: they sum to exactly `total`. */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** The stored total: inputTokens + outputTokens (+ cache counts when additive). */
  readonly total: number;
  readonly cacheBranch: CacheBranch;
  /** `metrics.cost` as Cline stored it, kept only to verify our computed cost. */
  readonly recordedCost: number | null;
  /** Number of tool_use blocks in this message: the attribution divisor. */
  readonly toolCallCount: number;
  /** The document the event was read from. */
  readonly sourcePath: string;
}

/** One tool_use block. Joined exactly to the usage event of the same message. */
export interface ToolCall {
  /** `cline|<session id>|<agent>|<tool_use id>`. */
  readonly callKey: string;
  /** The paying event's dedup key, or "" when the message had no metrics (cost unknown). */
  readonly usageKey: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly toolName: string;
  readonly timestampMs: number;
  /** Number of tool_use blocks in the message: each call carries 1/divisor of its tokens. */
  readonly divisor: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly sourcePath: string;
}

/** Messages in one captured request, by role (roles outside the four named ones are `other`). */
export interface CaptureRoleCounts {
  readonly system: number;
  readonly user: number;
  readonly assistant: number;
  readonly tool: number;
  readonly other: number;
}

/**
 * One provider-request capture file (Cline's CLINE_CAPTURE_PROVIDER_REQUEST): request-side
 * sizes and estimates of one request at one stage. No provider usage, no prompt content.
 */
export interface RequestCapture {
  /** `cline-capture|<captureId>|<stage>|<n>`, from the file name: one per capture file. */
  readonly captureKey: string;
  readonly captureId: string;
  /** `ai_sdk_prompt`, `wire_request`, ... */
  readonly stage: string;
  /** `n` of the file name: Cline's per-process counter per (captureId, stage). */
  readonly seq: number;
  /** The record's `attempt` (> 1: the same stage captured again, e.g. a provider retry). */
  readonly attempt: number;
  /** `summary` or `full`. */
  readonly mode: string;
  /** `correlation.sessionId`: the root session, also for sub-agents and teammates. */
  readonly sessionId: string;
  /** lead | subagent | teammate, or "" when it cannot be told. */
  readonly agent: string;
  /** `correlation.agentId` (`agent_...`). */
  readonly agentId: string;
  readonly conversationId: string;
  readonly runId: string;
  /** `correlation.iteration`, null when the record has none. */
  readonly iteration: number | null;
  readonly model: string;
  readonly provider: string;
  /** The session's cwd, fixed when the capture is first read ("" when unknown). */
  readonly project: string;
  /** Record `timestamp`, unix milliseconds (0 when absent or invalid). */
  readonly timestampMs: number;
  /** `summary.payloadBytes`: the whole request (system prompt, tools, messages). */
  readonly payloadBytes: number;
  /** `summary.estimatedTokens` = ceil(payloadBytes / 3). */
  readonly estimatedTokens: number;
  readonly messageCount: number;
  /** `summary.messages.totalBytes` / `.estimatedTokens`: the messages part only. */
  readonly messageBytes: number;
  readonly messageTokens: number;
  readonly roles: CaptureRoleCounts;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
  readonly sourcePath: string;
}

/** What the ledger remembers per source so an unchanged file is never opened again. */
export interface SourceCheckpoint {
  readonly path: string;
  readonly size: number;
  /** Nanosecond mtime as a decimal string (bigint does not survive JSON). */
  readonly mtimeNs: string;
  readonly ino: number;
  readonly dev: number;
}

/** Metadata discovery learned about a document (from the index or the sidecar). */
export interface SessionHint {
  readonly sessionId?: string;
  readonly rootSessionId?: string;
  readonly project?: string;
  readonly isSubagent?: boolean;
  readonly parentSessionId?: string;
}

/** One document to collect. */
export interface Source {
  readonly adapterId: string;
  readonly path: string;
  /** Where discovery found it. */
  readonly origin: "index" | "walk";
  readonly hint: SessionHint;
}

/** A per-message or per-source problem: counted and reported, never silently skipped. */
export interface Problem {
  readonly path: string;
  /** Stable, greppable code, e.g. `invalid-metrics`, `partial-document`. */
  readonly code: string;
  readonly detail: string;
}

/** The result of collecting one source. */
export type Observation =
  | {
      readonly status: "unchanged";
      readonly source: Source;
      readonly checkpoint: SourceCheckpoint;
    }
  | {
      readonly status: "read";
      readonly source: Source;
      readonly checkpoint: SourceCheckpoint;
      readonly events: readonly UsageEvent[];
      readonly toolCalls: readonly ToolCall[];
      /** Messages rejected (bad metrics and the like); the rest of the document still counts. */
      readonly problems: readonly Problem[];
      /** Provider-request capture records (the captures surface); absent for messages documents. */
      readonly captures?: readonly RequestCapture[];
    }
  | {
      /** The document could not be read whole (torn write, vanished, denied): retry next pass. */
      readonly status: "failed";
      readonly source: Source;
      readonly problem: Problem;
    };

export interface Capabilities {
  /** Cost is computed from our price table, never copied from the agent. */
  readonly cost: "computed";
  /** Tool calls are joined exactly to the message that paid for them. */
  readonly activity: "exact-join";
}

export interface DiscoverResult {
  readonly sources: readonly Source[];
  readonly problems: readonly Problem[];
}

export interface Adapter {
  readonly id: string;
  readonly displayName: string;
  capabilities(): Capabilities;
  discover(): Promise<DiscoverResult>;
  /** Read a source in full, whatever its checkpoint. */
  collect(source: Source): Promise<Observation>;
  /** Skip the source when size and mtime match the checkpoint; otherwise a full re-parse. */
  collectIncremental(source: Source, checkpoint: SourceCheckpoint | undefined): Promise<Observation>;
}
