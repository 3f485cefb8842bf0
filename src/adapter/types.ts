/**
 * The normalized vocabulary every adapter speaks. One usage event per billed model
 * response; one tool call per tool_use block. The ledger and the exporters only
 * ever see these shapes, never an agent's raw documents.
 */

import type { ToolOutcome } from "./timing.ts";

/** How the seed's cache rule read one event's cache counts. */
export type CacheBranch = "subset" | "additive";

/** An event's four token components after its adapter's rule: they sum to exactly `total`. */
export interface Components {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly total: number;
  readonly cacheBranch: CacheBranch;
}

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
  /**
   * When the request started: the latest `ts` among the messages before it in its document
   * (`chatStartMs`), 0 when it is the first message with a time. Absent from adapters without it.
   */
  readonly startMs?: number;
  /** The user turn it belongs to (`AgentTurn.turnId`); absent from adapters without turns. */
  readonly turnId?: string;
  /**
   * Which Cline client wrote it (`cline.client`: `cli`, `vscode`, ...), where the adapter can
   * tell; absent: the exporters' default for the adapter.
   */
  readonly client?: string;
  /**
   * True when the source records only when the request started, not when it ended
   * (`timestampMs` is then the start too): signals mark its end time approximate.
   */
  readonly endApproximate?: boolean;
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
  /** The calling message's id (`cline.message.id`); absent from adapters without it. */
  readonly messageId?: string;
  /** The tool_use block's own id (`gen_ai.tool.call.id`). */
  readonly toolUseId?: string;
  /** The user turn of the calling message (`AgentTurn.turnId`). */
  readonly turnId?: string;
  /** As UsageEvent.client. */
  readonly client?: string;
}

/**
 * One tool_result block: the outcome and end time of the call it answers. Only its
 * `tool_use_id` and `is_error` flag are read, never its content.
 */
export interface ToolResult {
  /** The key of the ToolCall it answers: `cline|<session id>|<agent>|<tool_use_id>`. */
  readonly callKey: string;
  readonly toolUseId: string;
  readonly sessionId: string;
  readonly agent: string;
  /** The id of the message holding the block. */
  readonly messageId: string;
  /** That message's `ts`: when the tool finished (0 when the message had none). */
  readonly timestampMs: number;
  /** `is_error`: true = failure; false or absent = success; null = not a boolean (unknown). */
  readonly isError: boolean | null;
  /**
   * The outcome when the adapter can tell more than `is_error` (a denial, a failure stored
   * without `is_error`); absent: `toolOutcome(isError)`.
   */
  readonly outcome?: ToolOutcome;
  readonly sourcePath: string;
}

/**
 * One user turn of one agent's document: from a prompt (a user message that answers no tool
 * call) to the last message before the next prompt. The parent of its requests' and calls' spans.
 */
export interface AgentTurn {
  /** `cline|<session id>|<agent>|turn|<turn id>`: unique, stable across rewrites. */
  readonly turnKey: string;
  /** The prompt message's id ("" for messages before any prompt). */
  readonly turnId: string;
  readonly sessionId: string;
  /** The root session (the trace): the session itself for a lead document. */
  readonly rootSessionId: string;
  readonly agent: string;
  readonly project: string;
  /** The prompt's `ts` (for the "" turn: its first message's). */
  readonly startMs: number;
  /** The latest `ts` of the turn's messages so far. */
  readonly endMs: number;
  /** Whether a later prompt exists in the document: the turn is over. */
  readonly closed: boolean;
  readonly sourcePath: string;
}

/** What the events, traces and GenAI metrics need of one document beyond its usage. */
export interface DocumentSignals {
  readonly sessionId: string;
  readonly rootSessionId: string;
  readonly agent: string;
  /** The latest `ts` in the document (0 when none): where a call without a result ends. */
  readonly lastTsMs: number;
  readonly toolResults: readonly ToolResult[];
  readonly turns: readonly AgentTurn[];
}

/** Where an edit's approval came from: applied without asking, asked and answered, or not told. */
export type EditSource = "auto" | "user" | "unknown";

/**
 * One file edit the agent proposed (a file of a tool call), counted from the edit's own bytes:
 * no content, command or result is ever decoded, only the path's extension. Emitted once its
 * decision is known (a call still waiting for its answer emits none yet); the ledger keeps it
 * exactly once by `editKey`.
 */
export interface EditRecord {
  /** `<callKey>|<n>`: n = the file's index within its call (a patch may touch several files). */
  readonly editKey: string;
  /** The ToolCall that proposed it. */
  readonly callKey: string;
  /** The paying event's dedup key, or "" when unknown (as ToolCall.usageKey). */
  readonly usageKey: string;
  readonly sessionId: string;
  readonly agent: string;
  /** The tool as the model named it (`editor`, `apply_patch`, `replace_in_file`, ...). */
  readonly toolName: string;
  readonly operation: "create" | "modify" | "delete";
  /** accepted: applied; rejected: the user denied it; failed: it did not apply (counts no lines). */
  readonly decision: "accepted" | "rejected" | "failed";
  readonly source: EditSource;
  /** From the path's extension only (`typescript`, `python`, ..., `other`; "" when no path). */
  readonly language: string;
  /** Lines added and removed as `git diff --numstat` counts them (0 for a failed edit). */
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /**
   * False when the files do not hold all it changed (a deleted file's lines, what a whole-file
   * rewrite removed): the counts are what the files say, never a guess.
   */
  readonly exact: boolean;
  /** The proposing message's `ts`. */
  readonly timestampMs: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly sourcePath: string;
  /** As UsageEvent.client. */
  readonly client?: string;
}

/** Whose a stretch of active time is: the user's (answering, reviewing, prompting) or the agent's. */
export type ActiveTimeType = "user" | "agent";

/** What the gaps of one timeline can differ in; a gap names its group by index. */
export interface ActiveTimeGroup {
  readonly type: ActiveTimeType;
  readonly model: string;
  readonly provider: string;
}

/**
 * The closed gaps of one session's timeline (its lead document's): each gap is a stretch between
 * two consecutive message timestamps (docs/metrics.md "Active time"), the agent's (a request, a
 * tool run) or the user's (answering an approval, reviewing, typing the next prompt). Only closed
 * gaps no longer than the idle cut-off of their type are in it; sub-agents' and teammates'
 * documents have no timeline (they run inside the lead's tool calls, so their time is already on
 * the lead's).
 *
 * One record per timeline, its gaps as columns (index i of `startMs`, `durationMs` and `group` is
 * gap i): a timeline has a gap per message, which the ledger sums into a row per type and hour;
 * an object per gap, held until its batch commits, was 56 objects a task on the bench's corpus
 * (docs/performance.md "After gaps29"). Kept once by its stream and start: the gaps of one stream
 * never overlap and start in increasing order, so the ledger keeps how far each stream is counted
 * and adds only the gaps that start at or after that (the first view of a stretch wins).
 */
export interface ActiveTimeline {
  /** The timeline (its document's key). */
  readonly streamKey: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly sourcePath: string;
  /** As UsageEvent.client. */
  readonly client?: string;
  /** The gaps' type, model and provider, each once. */
  readonly groups: readonly ActiveTimeGroup[];
  /** Per gap, in increasing order: its start, epoch ms. */
  readonly startMs: Float64Array;
  /** Per gap: its length in ms (> 0, at most the cut-off of its type). */
  readonly durationMs: Float64Array;
  /** Per gap: its index in `groups`. */
  readonly group: Uint32Array;
}

/**
 * A commit or a pull request made by a command the agent ran that succeeded (one per command of
 * the line that makes one: src/scan/command-kinds.ts). The command line is never decoded.
 */
export interface DeliveryRecord {
  /** `<callKey>|<kind>|<n>`: n = its index among the call's deliveries of that kind. */
  readonly deliveryKey: string;
  readonly callKey: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly kind: "commit" | "pull_request";
  /** The tool that ran the command (`run_commands`, `execute_command`). */
  readonly toolName: string;
  /** The calling message's `ts`. */
  readonly timestampMs: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly sourcePath: string;
  readonly client?: string;
}

/** A session started (`new`) or resumed, where the files say which (docs/cline-format.md). */
export interface SessionStartRecord {
  /** `<document key>|new` or `<document key>|resumed|<ts>`. */
  readonly startKey: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly startType: "new" | "resumed";
  readonly timestampMs: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly sourcePath: string;
  readonly client?: string;
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
  /** As UsageEvent.client: the session's, where discovery knows it. */
  readonly client?: string;
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
  /**
   * Set for a request that is not the agent loop's own: a context-compaction summary (its
   * `attempt`s are successive summaries, never retries; it has no session). Absent: a request.
   */
  readonly purpose?: "compaction-summarizer";
}

/**
 * One context compaction an agent's files show (Cline: `<id>.compaction.json`, which holds only
 * the latest one). Numbers and enums only: never a summary, a message or a running total.
 */
export interface Compaction {
  /** Stable across re-reads and restarts: each compaction is recorded once. */
  readonly compactionKey: string;
  readonly sessionId: string;
  /** The root session (the trace of its span): the session itself for a lead document. */
  readonly rootSessionId: string;
  readonly agent: string;
  /** The session's cwd ("" when unknown). */
  readonly project: string;
  /** `agentic` (a summarizer model call) or `basic` (messages dropped, no model call). */
  readonly strategy: string;
  /** Why, where the agent records it; `unrecorded` where it does not. */
  readonly reason: string;
  /** When the compaction was written, unix ms. */
  readonly timestampMs: number;
  readonly sourceMessageCount: number;
  readonly messagesRemoved: number | null;
  readonly tokensBefore: number | null;
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
  /** `cline.client` of the session, where discovery knows it (the adapter's default otherwise). */
  readonly client?: string;
}

/** One document to collect. */
export interface Source {
  /** The surface that discovered it, and the owner of its checkpoint. */
  readonly adapterId: string;
  readonly path: string;
  /** Where discovery found it. */
  readonly origin: "index" | "walk";
  readonly hint: SessionHint;
  /** What it is, for the pass's counts: a document (default) or a request-capture file. */
  readonly kind?: "document" | "capture-file";
  /**
   * A source listed before this one whose rows this one's commit relies on (a compaction file's
   * document: its model comes from the document's events). When that source fails in a pass,
   * this one is not committed in it either: retried next pass, reported as `deferred`.
   */
  readonly after?: string;
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
      /** The compaction a compaction file shows (at most one); absent for other sources. */
      readonly compactions?: readonly Compaction[];
      /** Tool results, turns and times (messages documents of adapters that read them). */
      readonly signals?: DocumentSignals;
      /** The file edits whose decision is known (messages documents of adapters that read them). */
      readonly edits?: readonly EditRecord[];
      /** The lead's timeline, its closed gaps (messages documents of adapters that read them). */
      readonly activeTime?: readonly ActiveTimeline[];
      /** Commits and pull requests of the agent's commands that succeeded. */
      readonly deliveries?: readonly DeliveryRecord[];
      /** Sessions started or resumed, where the document says which. */
      readonly sessionStarts?: readonly SessionStartRecord[];
    }
  | {
      /** The document could not be read whole (torn write, vanished, denied): retry next pass. */
      readonly status: "failed";
      readonly source: Source;
      readonly problem: Problem;
    };

/**
 * A discovery's claim that it listed EVERY source of one surface, except under `unlisted` (dirs
 * it could not list this time, whose files may still exist). The pass then drops the checkpoints
 * of that surface's files that are gone, so the ledger does not keep them forever.
 */
export interface SourceListing {
  readonly adapterId: string;
  readonly unlisted: readonly string[];
}

export interface DiscoverResult {
  readonly sources: readonly Source[];
  readonly problems: readonly Problem[];
  /** The surfaces listed completely (see SourceListing); others keep all their checkpoints. */
  readonly listings?: readonly SourceListing[];
  /**
   * Sources found certainly unchanged since their checkpoints and not listed in `sources` (an
   * adapter that proved a whole tree unchanged without building its sources): the pass counts
   * them as sources and as unchanged. A surface counted so claims no SourceListing (the pass
   * would prune the checkpoints of every source it did not list).
   */
  readonly unchangedUnlisted?: number;
}

/**
 * The pass's checkpoints as discovery may ask for them (Adapter.discover): loaded only when asked.
 * `token(adapterId)` is a summary of that adapter's checkpoints that every write of one of them
 * changes (a put, a delete), computed without loading them; see Checkpoints.token for its limit.
 */
export interface KnownCheckpoints {
  all(): ReadonlyMap<string, SourceCheckpoint>;
  token(adapterId: string): string;
}

/**
 * One agent's surfaces, as the generic collector sees them: discover the sources, then collect
 * each one against its checkpoint. Everything agent-specific (paths, formats, keys, joins) stays
 * behind these two calls.
 */
export interface Adapter {
  readonly id: string;
  /**
   * `known`: the pass's checkpoints, when it has them before discovery (runPass). An adapter may
   * use them to build less for sources it finds unchanged (gate first, build later:
   * cline/quiet.ts); it must list every source, and answer `unchangedNow` as its stat does, except
   * those it counts as `unchangedUnlisted` (cline/quiet-tree.ts), which nothing collects.
   */
  discover(known?: KnownCheckpoints): Promise<DiscoverResult>;
  /** Skip the source when its fingerprint matches the checkpoint; otherwise read it in full. */
  collectIncremental(source: Source, checkpoint: SourceCheckpoint | undefined): Promise<Observation>;
  /**
   * Optional, synchronous and cheap: true only when the source is certainly unchanged since its
   * checkpoint (what collectIncremental would answer `unchanged`), so the pass skips it without
   * any promise; false means "ask collectIncremental" (changed, gone, or unsure). An idle pass
   * over 13,000 documents spends ~20 ms on the async machinery it saves. It may answer from the
   * stat its last `discover()` took: a pass that reuses an earlier discovery (the daemon's event
   * passes, src/collector/loop.ts) does not ask it, since that stat may predate a change.
   */
  unchangedNow?(source: Source, checkpoint: SourceCheckpoint): boolean;
  /**
   * What the daemon watches for this adapter, one plan per root (an adapter with several roots
   * lists several); absent or empty: only the safety-net sweep and polling find its changes.
   */
  readonly watchPlans?: readonly WatchPlan[];
}

/**
 * What an adapter asks to be watched for one of its roots, in generic terms (the collector knows
 * no agent's file names): a root whose subdirectories hold the sources, an index directory, and
 * which names matter. Either directory may not exist yet: its nearest existing ancestor is
 * watched until it appears.
 */
export interface WatchPlan {
  /** Its subdirectories hold the sources; a subdirectory appearing or going away means "discover again". */
  readonly sourcesRoot: string;
  /** Where the adapter's index lives; a change of an index file means "discover again". */
  readonly indexDir: string;
  readonly isIndexFile: (name: string) => boolean;
  /**
   * Asked at each change of an index file: false when discovery needs nothing new from the index
   * now (every source the last discovery listed already had its entry there), so the change asks
   * for no discovery; a new source still brings one by its own event. Absent: always true.
   */
  readonly needsIndex?: () => boolean;
  /** A source (or a file the adapter reads as one) in a source directory. */
  readonly isSourceFile: (name: string) => boolean;
  /**
   * A rename onto a source's name (a whole-file rewrite through a temp file) re-reads only that
   * source when discovery already listed it and it still exists; true: discover again on every
   * rename (an adapter whose discovery reads something of the renamed file itself). Default false.
   */
  readonly renamesRediscover?: boolean;
  /** Further directories whose every change means "discover again". */
  readonly otherDirs?: readonly string[];
}
