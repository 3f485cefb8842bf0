/**
 * The signal records' vocabulary (src/ledger/signals/signals.ts writes them, signal-watermarks.ts reads
 * them in order): what a final record is, a tool call's record columns, and a document's signals
 * indexed once per commit.
 */
import type { ToolOutcome } from "../../adapter/timing.ts";
import type { DocumentSignals, ToolResult, UsageEvent } from "../../adapter/types.ts";

export type SignalKind = "chat" | "tool" | "turn" | "compaction" | "edit";

/** One final record as the exporters read it (the union of the three kinds' fields). */
export interface SignalRow {
  readonly seq: number;
  readonly kind: SignalKind;
  /** The request's / call's / turn's key (dedup key, call key, turn key). */
  readonly refKey: string;
  /** Event time: the response's ts, the calling message's ts, the turn's start. */
  readonly tsMs: number;
  /** Chat: its ts; tool: its result's ts (or where it was cut off); turn: its last ts. */
  readonly endMs: number;
  /** Chat: the latest ts before it in its document (0 = unknown); tool: = tsMs; turn: = tsMs. */
  readonly startMs: number;
  readonly outcome: ToolOutcome | null;
  readonly cancelled: boolean;
  readonly rootSessionId: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  /** The turn a chat or tool belongs to; for a turn, the lead turn it nests under ("" = none). */
  readonly turnKey: string;
  readonly model: string;
  readonly provider: string;
  /** `cline.client` of a request or call ('' when its adapter did not say, and for turns and compactions). */
  readonly client: string;
  /** 0: a request whose end its source does not record (its `tsMs` is its start); 1 otherwise. */
  readonly endKnown: number;
  readonly messageId: string;
  /** Chat: the four components after the cache rule; tool: its 1/divisor shares. */
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Chat: its tool_use count; tool: the divisor. */
  readonly toolCalls: number;
  readonly toolName: string;
  readonly toolUseId: string;
  /** Tool: whether the paying message had metrics. Chat: true. */
  readonly usageKnown: boolean;
  /** Turn: the prompt's message id. */
  readonly turnId: string;
  /** Compaction: `agentic` | `basic` ("" for the other kinds). */
  readonly strategy: string;
  /** Compaction: Cline's reason, `unrecorded` where it writes none ("" for the other kinds). */
  readonly reason: string;
  /** Compaction: the numbers Cline wrote (null where absent; 0 / null for the other kinds). */
  readonly sourceMessageCount: number;
  readonly messagesRemoved: number | null;
  readonly tokensBefore: number | null;
  /** Edit: the call that proposed it ("" for the other kinds). */
  readonly callKey: string;
  /** Edit: create | modify | delete, accepted | rejected | failed, auto | user | unknown, its language. */
  readonly operation: string;
  readonly decision: string;
  readonly editSource: string;
  readonly language: string;
  /** Edit: its lines; tool: the sums over the edits of the call (0 without). */
  readonly linesAdded: number;
  readonly linesRemoved: number;
  /** Edit: 1 when its counts are exact; tool: 1 when all its edits' are (1 without edits). */
  readonly exact: number;
  /** Tool: the call's edits by decision (0 for the other kinds). */
  readonly editsAccepted: number;
  readonly editsRejected: number;
  readonly editsFailed: number;
}

/** A document's signals indexed once per commit (Ingest and `record` share it). */
export interface DocumentIndex {
  /** Turn keys by their prompt's id: the turn of a request or call. */
  readonly turnKeys: ReadonlyMap<string, string>;
  /** Results by call key: a call read with its result is final at once. */
  readonly results: ReadonlyMap<string, ToolResult>;
  /**
   * The document's last `ts` as stored (the max over its reads) when it is quiet at this
   * commit (Signals.index); undefined when it is not, or when the writer has no quiet time.
   */
  readonly quietLastTsMs: number | undefined;
  /** The turns this read closes (a later prompt): their calls without a result end with them. */
  readonly closedTurns: ReadonlySet<string>;
}

/**
 * The signal columns of a tool_calls row: a call read with its result is final at once, and its
 * record is written by the INSERT that stores it; one read without is open (all NULL).
 */
export type CallRecord =
  | {
      readonly signalSeq: number;
      readonly endMs: number;
      readonly outcome: ToolOutcome;
      /** 1: read without its result in a quiet document (ends at the document's last ts). */
      readonly cancelled: 0 | 1;
      /** NULL: its paying request's (a call of a message with metrics). */
      readonly turnKey: string | null;
      readonly messageId: string | null;
      readonly toolUseId: string;
    }
  | {
      readonly signalSeq: null;
      readonly endMs: null;
      readonly outcome: null;
      readonly cancelled: null;
      readonly turnKey: null;
      readonly messageId: null;
      readonly toolUseId: null;
    };

/** The record of a call read without its result: open, every column NULL. */
export const OPEN_CALL: CallRecord = Object.freeze({
  signalSeq: null,
  endMs: null,
  outcome: null,
  cancelled: null,
  turnKey: null,
  messageId: null,
  toolUseId: null,
});

/** What a commit's INSERTs added (Ingest): the facts that make a request or a call new. */
export interface Inserted {
  /** The events the commit inserted, in order (each once). */
  readonly events: readonly UsageEvent[];
  /** The tool calls the commit inserted, by call key, with the record each was stored with. */
  readonly calls: ReadonlyMap<string, CallRecord>;
}

/** A document's turns by their prompt's id: the turn key of a request or call. */
export function turnKeysOf(doc: DocumentSignals): Map<string, string> {
  return new Map(doc.turns.map((t) => [t.turnId, t.turnKey]));
}

/**
 * A document's turn keys and results by call, built once per commit of it; `quietLastTsMs`
 * from its stored row when it is quiet (Signals.index), else undefined.
 */
export function indexDocument(doc: DocumentSignals, quietLastTsMs?: number): DocumentIndex {
  const closedTurns = new Set<string>();
  for (const t of doc.turns) if (t.closed) closedTurns.add(t.turnKey);
  return {
    turnKeys: turnKeysOf(doc),
    results: new Map(doc.toolResults.map((r) => [r.callKey, r])),
    quietLastTsMs,
    closedTurns,
  };
}
