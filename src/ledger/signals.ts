/**
 * What the events, traces and GenAI metrics need beyond the counts (schema v5):
 * every request's start and turn, every call's ids, its result (joined by tool_use id), every
 * turn, every document's last `ts`; and the queue of FINAL records (a request when it is read; a
 * call when its result is on disk or its turn or document is over; a turn when it is over; a
 * compaction when it is recorded), in the order they became final. The exporters of those signals deliver the queue exactly once,
 * each with its own watermark (`signal_delivery`), committed with the export result. A request's
 * record is not a queue row but its events row (`signal_seq`, `turn_key`, `start_ms`, written by
 * Ingest with the event), and a call's its tool_calls row (`signal_seq`, `end_ms`, `outcome`,
 * `cancelled`, `turn_key`, `message_id`, `tool_use_id`: written by Ingest's INSERT when the call
 * is read with its result, else by `finalCall`): one sequence numbers the three tables, so a
 * batch is "every record with seq > watermark, from all three, in seq order" and a watermark
 * stays one number. signal_queue holds the turns and compactions.
 *
 * Written in the same transaction as the source's events (Ingest calls `record`), so a crash can
 * neither lose a record nor queue one twice: each record is queued by the statement that makes it
 * new (see `record`), not deduplicated by an index.
 */
import type Database from "better-sqlite3";
import { durationMs, type ToolOutcome, toolCallEnd, toolOutcome } from "../adapter/timing.ts";
import type {
  AgentTurn,
  Compaction,
  DocumentSignals,
  ToolCall,
  ToolResult,
  UsageEvent,
} from "../adapter/types.ts";
import { GenaiSeries, type GenaiSeriesRow } from "./genai.ts";
import { QueueWriter } from "./signal-queue.ts";
import { ToolOutcomes } from "./tool-outcomes.ts";

export {
  GENAI_BOUNDARIES,
  GENAI_DURATION_BOUNDARIES,
  GENAI_TOKEN_BOUNDARIES,
  type GenaiMetric,
  type GenaiSeriesRow,
  TOOL_DURATION_BOUNDARIES,
} from "./genai.ts";

export type SignalKind = "chat" | "tool" | "turn" | "compaction";

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
}

export interface SignalCursor {
  readonly exporter: string;
  /** Highest queue seq delivered. */
  readonly watermark: number;
  /** Records whose event time is older than this are skipped, not sent (start from now). */
  readonly fromMs: number;
}

export interface SignalBatch {
  readonly base: SignalCursor;
  readonly rows: readonly SignalRow[];
  /** The watermark to commit once `rows` are delivered (past skipped rows too). */
  readonly next: number;
  /** Rows of the window left out: other kinds, or older than `fromMs`. */
  readonly skipped: number;
}

/** A document's signals indexed once per commit (Ingest and `record` share it). */
export interface DocumentIndex {
  /** Turn keys by their prompt's id: the turn of a request or call. */
  readonly turnKeys: ReadonlyMap<string, string>;
  /** Results by call key: a call read with its result is final at once. */
  readonly results: ReadonlyMap<string, ToolResult>;
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
      readonly cancelled: 0;
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

const OPEN_CALL: CallRecord = Object.freeze({
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

interface CallDims {
  readonly sessionId: string;
  readonly model: string;
  readonly provider: string;
  readonly toolName: string;
}

interface CallIds {
  readonly messageId: string;
  readonly toolUseId: string;
  readonly turnKey: string;
}

interface OpenCallRow {
  callKey: string;
  tsMs: number;
  lastTsMs: number;
}

interface TurnRow {
  turnKey: string;
  rootSessionId: string;
  sessionId: string;
  agent: string;
  startMs: number;
  endMs: number;
  sourcePath: string;
}

/** A document's turns by their prompt's id: the turn key of a request or call. */
export function turnKeysOf(doc: DocumentSignals): Map<string, string> {
  return new Map(doc.turns.map((t) => [t.turnId, t.turnKey]));
}

/** A document's turn keys and results by call, built once per commit of it. */
export function indexDocument(doc: DocumentSignals): DocumentIndex {
  return { turnKeys: turnKeysOf(doc), results: new Map(doc.toolResults.map((r) => [r.callKey, r])) };
}

/** Where a call read with `result` ends: final only with its result (undefined without one). */
function endOnRead(c: ToolCall, result: ToolResult | undefined) {
  return result === undefined
    ? undefined
    : toolCallEnd({ startMs: c.timestampMs, documentLastTsMs: 0 }, result, 0, 0);
}

/** The lead agent's name: its turns are the ones sub-agents and teammates nest under. */
const LEAD = "lead";

export class Signals {
  private w: ReturnType<typeof prepareWrites> | undefined;
  /** The ingestion time of the commit (or sweep) in progress: the GenAI series' updated_ms. */
  private nowMs = 0;
  /** The GenAI histogram series, written in the same transaction as the queue. */
  readonly genai: GenaiSeries;
  /** cline.tool.calls by outcome: counted from the queue's final calls in the same transaction. */
  readonly toolOutcomes: ToolOutcomes;
  private r: ReturnType<typeof prepareReads> | undefined;
  /** Whether signal_unqueued may hold rows (checked at each commit's begin until it is empty). */
  private legacy = true;
  /** Whether signal_calls may hold open calls (checked at each transaction's start). */
  private openCalls = true;
  /** The queue rows of the transaction in progress, written at its end (or before it reads them). */
  private readonly queue: QueueWriter;

  constructor(private readonly db: Database.Database) {
    this.genai = new GenaiSeries(db);
    this.queue = new QueueWriter(db);
    this.toolOutcomes = new ToolOutcomes(db);
  }

  private writes(): ReturnType<typeof prepareWrites> {
    this.w ??= prepareWrites(this.db);
    return this.w;
  }

  private reads(): ReturnType<typeof prepareReads> {
    this.r ??= prepareReads(this.db);
    return this.r;
  }

  /**
   * Stores one document's signal rows and queues what became final. Must run inside the commit
   * transaction of the same observation, after its events and calls were inserted; `inserted`
   * says which of them that transaction added. No UNIQUE index guards the queue: each record is
   * queued by the statement that makes it new, which runs once per record in the ledger's life
   * (an event or call INSERT that inserted, a `final` flag flipped 0 -> 1, a compaction
   * inserted), so a re-read queues nothing twice and a rolled-back commit queues nothing. The
   * other side of that: a request or call committed by an observation without signals (Cline's
   * message documents always have them) is not queued by a later read.
   */
  record(
    doc: DocumentSignals,
    index: DocumentIndex,
    sourcePath: string,
    events: readonly UsageEvent[],
    calls: readonly ToolCall[],
    inserted: Inserted,
    nowMs: number,
  ): void {
    this.nowMs = nowMs;
    const w = this.writes();
    w.putDocument.run({
      sourcePath,
      rootSessionId: doc.rootSessionId,
      sessionId: doc.sessionId,
      agent: doc.agent,
      lastTsMs: doc.lastTsMs,
    });
    const { turnKeys, results } = index;
    // A request is final when read: the commit that inserted its event gave it its seq there
    // (Ingest: `requestSeq`), so what is left here is its GenAI observation.
    for (const e of inserted.events) this.observeChat(e);
    const legacy = this.legacy;
    if (legacy) {
      const fresh = new Set(inserted.events.map((e) => e.dedupKey));
      for (const e of events) {
        if (fresh.has(e.dedupKey) || !this.takeLegacy("chat", e.dedupKey)) continue;
        fresh.add(e.dedupKey);
        this.queueLegacyChat(e, turnKeys.get(e.turnId ?? "") ?? "");
      }
    }
    // A call read with its result on disk is final at once: its INSERT wrote its record
    // (`callRecord`; the usual case, and the whole of a backfill). One without is kept open in
    // signal_calls until its result, turn end or quiet time makes it final (`finalCall`).
    const handled = new Set<string>();
    for (const c of calls) {
      if (handled.has(c.callKey)) continue;
      handled.add(c.callKey);
      const stored = inserted.calls.get(c.callKey);
      if (stored?.signalSeq != null) {
        // Recorded by its INSERT: what is left is its duration.
        this.observeToolDuration(c, c.timestampMs, stored.endMs, stored.outcome);
        continue;
      }
      const end = endOnRead(c, results.get(c.callKey));
      if (stored !== undefined || (legacy && this.takeLegacy("tool", c.callKey))) {
        const ids = {
          messageId: c.messageId ?? "",
          toolUseId: c.toolUseId ?? "",
          turnKey: turnKeys.get(c.turnId ?? "") ?? "",
        };
        if (!end?.final) {
          w.putCall.run({ callKey: c.callKey, ...ids, sourcePath });
          this.openCalls = true;
        } else this.putCallRecord(c.callKey, c.timestampMs, end.endMs, end.outcome, false, c, ids);
      } else if (end?.final) {
        // Stored by an earlier read: final now if that read left it open (a no-op otherwise).
        this.finalCall(c.callKey, c.timestampMs, end.endMs, end.outcome, false);
      }
      // Stored earlier and no result in this read: it is open already, or final already.
    }
    for (const r of doc.toolResults) if (!handled.has(r.callKey)) this.recordResult(r);
    for (const t of doc.turns) this.recordTurn(t);
    // The GenAI sums are written once per commit transaction (Ingest calls `flush`): a series
    // that several sources of one batch add to is one upsert.
  }

  /**
   * The signal columns of an events row Ingest is about to insert (call inside the commit
   * transaction, with the observation's signals): its seq is taken only by `claimSeq`, once the
   * INSERT inserted (ON CONFLICT DO NOTHING: a known request keeps its record).
   */
  requestSeq(): number {
    return this.queue.peek();
  }

  /** Takes the seq `requestSeq` (or a final `callRecord`) gave a row just inserted. */
  claimSeq(): void {
    this.queue.take();
  }

  /**
   * The signal columns of a tool_calls row Ingest is about to insert (inside the commit
   * transaction, with the observation's signals): a call read with its result is final, its
   * seq the next one (taken by `claimSeq` once the INSERT inserted); one without is open.
   */
  callRecord(c: ToolCall, index: DocumentIndex): CallRecord {
    const end = endOnRead(c, index.results.get(c.callKey));
    if (!end?.final) return OPEN_CALL;
    // A call whose message has metrics shares that message's id and turn with the request's
    // events row (usage_key): not stored twice (the batch reads them from it; ~77 bytes a call).
    const paid = c.usageKey !== "";
    return {
      signalSeq: this.queue.peek(),
      endMs: Math.max(c.timestampMs, end.endMs),
      outcome: end.outcome,
      cancelled: 0,
      turnKey: paid ? null : (index.turnKeys.get(c.turnId ?? "") ?? ""),
      messageId: paid ? null : (c.messageId ?? ""),
      toolUseId: c.toolUseId ?? "",
    };
  }

  /** A request stored before its signals (signal_unqueued): its record now, on its events row. */
  private queueLegacyChat(e: UsageEvent, turnKey: string): void {
    this.writes().putRequest.run({
      dedupKey: e.dedupKey,
      seq: this.queue.take(),
      turnKey,
      startMs: e.startMs ?? 0,
    });
    this.observeChat(e);
  }

  /**
   * A request or call stored before its signals were recorded (a ledger older than the queue's
   * guards: see the migration that created signal_unqueued): true once, when it is taken.
   */
  private takeLegacy(kind: "chat" | "tool", refKey: string): boolean {
    return this.writes().takeLegacy.run({ kind, refKey }).changes === 1;
  }

  /**
   * Starts a commit transaction: forgets any sums a failed one left behind (its rows were rolled
   * back, so its observations must not reach the next one).
   */
  begin(): void {
    this.genai.discard();
    this.queue.reset(this.nextSeq());
    this.openCalls = this.writes().anyOpenCall.get() !== undefined;
    // Read before this transaction writes: only a migration adds to signal_unqueued, so once
    // it is empty at a transaction's start it stays empty (no probe per row from then on).
    if (this.legacy) this.legacy = this.writes().anyLegacy.get() !== undefined;
  }

  /**
   * The first seq after every record in both tables (read at each transaction's start, so a
   * failed transaction's seqs are given again, and a record is never numbered below another).
   */
  private nextSeq(): number {
    return (this.writes().nextSeq.get() as { next: number }).next;
  }

  /** Writes the GenAI sums of the commit transaction in progress (call inside it, last). */
  flush(nowMs: number): void {
    this.queue.write();
    this.genai.flush(nowMs);
    this.toolOutcomes.count(nowMs);
  }

  /**
   * Queues a compaction just recorded (Compactions.insert, the same transaction): final when
   * read, in the turn of its agent that had started by the compaction's time (its document is
   * committed before its compaction file, docs/traces.md "compaction"); "" when there is none.
   */
  recordCompaction(c: Compaction): void {
    // Queued once: Ingest calls this only for a compaction whose row it just inserted.
    const w = this.writes();
    const turn = w.turnAt.get({ sessionId: c.sessionId, agent: c.agent, tsMs: c.timestampMs }) as
      | { turnKey: string }
      | undefined;
    this.queue.add({
      kind: "compaction",
      refKey: c.compactionKey,
      tsMs: c.timestampMs,
      endMs: c.timestampMs,
      outcome: null,
      cancelled: false,
      startMs: c.timestampMs,
      turnKey: turn?.turnKey ?? "",
      messageId: "",
      toolUseId: "",
    });
  }

  /** A result whose call is not in the same read (stored by an earlier one): stored once; it finalizes it. */
  private recordResult(r: ToolResult): void {
    const w = this.writes();
    const info = w.putResult.run({
      callKey: r.callKey,
      messageId: r.messageId,
      tsMs: r.timestampMs,
      isError: r.isError === null ? null : r.isError ? 1 : 0,
    });
    if (info.changes === 0) return;
    const open = w.openCall.get({ callKey: r.callKey }) as { tsMs: number } | undefined;
    if (open === undefined) return; // no such call (yet), or already final
    const end = toolCallEnd({ startMs: open.tsMs, documentLastTsMs: 0 }, r, 0, 0);
    if (end.final) this.finalCall(r.callKey, open.tsMs, end.endMs, end.outcome, false);
  }

  private recordTurn(t: AgentTurn): void {
    const w = this.writes();
    w.putTurn.run({
      turnKey: t.turnKey,
      rootSessionId: t.rootSessionId,
      sessionId: t.sessionId,
      agent: t.agent,
      turnId: t.turnId,
      project: t.project,
      startMs: t.startMs,
      endMs: t.endMs,
      closed: t.closed ? 1 : 0,
      sourcePath: t.sourcePath,
    });
    if (!t.closed) return;
    const row = w.openTurn.get({ turnKey: t.turnKey }) as TurnRow | undefined;
    if (row !== undefined) this.finalTurn(row);
  }

  /**
   * Finalizes what its document's quiet time ended: calls without a result (cancelled, ending at
   * the document's last ts) and open turns of documents with nothing newer than `quietMs` ago.
   * Returns how many records it queued. Cheap when idle: it reads only open calls and turns.
   */
  finalizeQuiet(nowMs: number, quietMs: number): number {
    const w = this.writes();
    const cutoff = nowMs - quietMs;
    this.nowMs = nowMs;
    return this.db.transaction(() => {
      this.genai.discard();
      this.queue.reset(this.nextSeq());
      this.openCalls = w.anyOpenCall.get() !== undefined;
      let n = 0;
      for (const c of w.quietCalls.all({ cutoff }) as OpenCallRow[]) {
        const end = toolCallEnd({ startMs: c.tsMs, documentLastTsMs: c.lastTsMs }, undefined, nowMs, quietMs);
        if (end.final && this.finalCall(c.callKey, c.tsMs, end.endMs, end.outcome, true)) n++;
      }
      for (const t of w.quietTurns.all({ cutoff }) as TurnRow[]) n += this.finalTurn(t);
      this.queue.write();
      this.genai.flush(this.nowMs);
      this.toolOutcomes.count(this.nowMs);
      return n;
    })();
  }

  /**
   * Finalizes an open call (signal_calls): its `final` flag flipped 0 -> 1 is the guard (false:
   * it was final already), then its record written on its tool_calls row with its ids.
   */
  private finalCall(
    callKey: string,
    tsMs: number,
    endMs: number,
    outcome: ToolOutcome,
    cancelled: boolean,
  ): boolean {
    const w = this.writes();
    const ids = w.closeCall.get({ callKey }) as CallIds | undefined;
    if (ids === undefined) return false;
    const dims = w.callDims.get({ callKey }) as CallDims | undefined;
    this.putCallRecord(callKey, tsMs, endMs, outcome, cancelled, dims, ids);
    return true;
  }

  /**
   * Writes the record of a stored call that just became final (its caller holds the guard) on
   * its tool_calls row, numbered next, and observes its duration.
   */
  private putCallRecord(
    callKey: string,
    tsMs: number,
    endMs: number,
    outcome: ToolOutcome,
    cancelled: boolean,
    dims: CallDims | undefined,
    ids: CallIds,
  ): void {
    const info = this.writes().putCallRecord.run({
      callKey,
      seq: this.queue.peek(),
      endMs: Math.max(tsMs, endMs),
      outcome,
      cancelled: cancelled ? 1 : 0,
      ...ids,
    });
    if (info.changes !== 1) return; // no such call (or final already): nothing numbered
    this.queue.take();
    if (dims !== undefined) this.observeToolDuration(dims, tsMs, endMs, outcome);
  }

  /** A final call's cline.tool.duration observation (none without a valid time). */
  private observeToolDuration(dims: CallDims, tsMs: number, endMs: number, outcome: ToolOutcome): void {
    const d = durationMs(tsMs, Math.max(tsMs, endMs));
    if (d === undefined) return;
    this.genai.observeTool(
      {
        sessionId: dims.sessionId,
        model: dims.model,
        provider: dims.provider,
        toolName: dims.toolName,
        outcome,
      },
      d / 1000,
      tsMs,
    );
  }

  /**
   * Queues a turn that is over, after the calls of it still open (cut off at its end): its
   * `final` flag flipped 0 -> 1 is the guard. Returns the records queued (0: final already).
   */
  private finalTurn(t: TurnRow): number {
    const w = this.writes();
    if (w.closeTurn.run({ turnKey: t.turnKey }).changes === 0) return 0;
    let n = 1;
    // No lookup when no call is open (a backfill: every result is on disk).
    const open = this.openCalls
      ? (w.openCallsOfTurn.all({ turnKey: t.turnKey }) as { callKey: string; tsMs: number }[])
      : [];
    for (const c of open) if (this.finalCall(c.callKey, c.tsMs, t.endMs, toolOutcome(null), true)) n++;
    // Sub-agents and teammates nest under the lead's turn that was running when theirs began:
    // the latest lead turn of the same root session that started at or before it.
    let parentKey = "";
    if (t.agent !== LEAD) {
      const p = w.leadTurnAt.get({ rootSessionId: t.rootSessionId, startMs: t.startMs }) as
        | { turnKey: string }
        | undefined;
      parentKey = p?.turnKey ?? "";
    }
    this.queue.add({
      kind: "turn",
      refKey: t.turnKey,
      tsMs: t.startMs,
      endMs: Math.max(t.startMs, t.endMs),
      outcome: null,
      cancelled: false,
      startMs: t.startMs,
      turnKey: parentKey,
      messageId: "",
      toolUseId: "",
    });
    return n;
  }

  /** A new request: its all-input and output token counts, and its duration when its start is known. */
  private observeChat(e: UsageEvent): void {
    const d = durationMs(e.startMs ?? 0, e.timestampMs);
    const input = e.input + e.cacheRead + e.cacheWrite;
    this.genai.observeChat(e, input, e.output, d === undefined ? undefined : d / 1000, e.timestampMs);
  }

  /** Every GenAI histogram series (cumulative export; see GenaiSeries). */
  genaiSeries(): GenaiSeriesRow[] {
    return this.genai.series();
  }

  /** The GenAI series the cumulative TTL keeps, filtered in SQL (see GenaiSeries.seriesLive). */
  genaiSeriesLive(f: { readonly eventSinceMs: number; readonly updatedSinceMs: number }): GenaiSeriesRow[] {
    return this.genai.seriesLive(f);
  }

  /** The request histograms over the events window after < id <= upTo (delta export). */
  genaiDelta(after: number, upTo: number): GenaiSeriesRow[] {
    return this.genai.delta(after, upTo);
  }

  /** The exporter's position; created on first use, skipping history older than `fromMs`. */
  cursor(exporter: string, fromMs: number): SignalCursor {
    const w = this.writes();
    w.createCursor.run({ exporter, fromMs });
    const r = this.reads().cursor.get({ exporter }) as { watermark: number; fromMs: number };
    return { exporter, watermark: r.watermark, fromMs: r.fromMs };
  }

  /** Up to `limit` queue rows after the cursor, the wanted kinds only (the others are skipped). */
  batch(cursor: SignalCursor, kinds: ReadonlySet<SignalKind>, limit: number): SignalBatch {
    const raw = this.reads().batch.all({ after: cursor.watermark, limit }) as RawRow[];
    const rows: SignalRow[] = [];
    let skipped = 0;
    let next = cursor.watermark;
    for (const r of raw) {
      next = r.seq;
      if (!kinds.has(r.kind) || r.tsMs < cursor.fromMs) {
        skipped++;
        continue;
      }
      rows.push(toRow(r));
    }
    return { base: cursor, rows, next, skipped };
  }

  /** Whether anything is queued after `watermark`. */
  pending(watermark: number): boolean {
    return this.reads().after.get({ after: watermark }) !== undefined;
  }

  /**
   * Records a delivered batch: compare-and-set on the watermark it was read from, so a late
   * success of an abandoned export can never move it (nor skip rows).
   */
  commit(batch: SignalBatch, nowMs: number): "committed" | "stale" {
    const info = this.writes().advance.run({
      exporter: batch.base.exporter,
      base: batch.base.watermark,
      next: batch.next,
      nowMs,
    });
    return info.changes === 1 ? "committed" : "stale";
  }

  /** Records by kind, queued or on events and calls (tests, `paths --json`-style diagnostics). */
  queued(): Record<SignalKind, number> {
    const out: Record<SignalKind, number> = { chat: 0, tool: 0, turn: 0, compaction: 0 };
    for (const r of this.reads().counts.all() as { kind: SignalKind; n: number }[]) out[r.kind] += r.n;
    return out;
  }
}

interface RawRow extends Omit<SignalRow, "cancelled" | "usageKnown"> {
  cancelled: number;
  usageKnown: number;
}

function toRow(r: RawRow): SignalRow {
  return { ...r, cancelled: r.cancelled === 1, usageKnown: r.usageKnown === 1 };
}

function prepareWrites(db: Database.Database) {
  return {
    putDocument: db.prepare(
      `INSERT INTO signal_documents (source_path, root_session_id, session_id, agent, last_ts_ms)
       VALUES (@sourcePath, @rootSessionId, @sessionId, @agent, @lastTsMs)
       ON CONFLICT (source_path) DO UPDATE SET last_ts_ms = max(last_ts_ms, excluded.last_ts_ms)`,
    ),
    putCall: db.prepare(
      `INSERT INTO signal_calls (call_key, message_id, tool_use_id, turn_key, source_path)
       VALUES (@callKey, @messageId, @toolUseId, @turnKey, @sourcePath)
       ON CONFLICT (call_key) DO NOTHING`,
    ),
    putResult: db.prepare(
      `INSERT INTO signal_results (call_key, message_id, ts_ms, is_error) VALUES (@callKey, @messageId, @tsMs, @isError)
       ON CONFLICT (call_key) DO NOTHING`,
    ),
    openCall: db.prepare(
      `SELECT t.ts_ms AS tsMs FROM signal_calls s JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.call_key = @callKey AND s.final = 0`,
    ),
    // A stored call's record (final now): one UPDATE, numbered once (signal_seq IS NULL).
    putCallRecord: db.prepare(
      `UPDATE tool_calls SET signal_seq = @seq, end_ms = @endMs, outcome = @outcome, cancelled = @cancelled,
         turn_key = @turnKey, message_id = @messageId, tool_use_id = @toolUseId
       WHERE call_key = @callKey AND signal_seq IS NULL`,
    ),
    // The guard of a late call: only the statement that flips it returns its ids.
    closeCall: db.prepare(
      `UPDATE signal_calls SET final = 1 WHERE call_key = @callKey AND final = 0
       RETURNING message_id AS messageId, tool_use_id AS toolUseId, turn_key AS turnKey`,
    ),
    putTurn: db.prepare(
      `INSERT INTO signal_turns (turn_key, root_session_id, session_id, agent, turn_id, project, start_ms, end_ms,
         closed, source_path)
       VALUES (@turnKey, @rootSessionId, @sessionId, @agent, @turnId, @project, @startMs, @endMs, @closed, @sourcePath)
       ON CONFLICT (turn_key) DO UPDATE SET end_ms = max(end_ms, excluded.end_ms),
         closed = max(closed, excluded.closed)
       WHERE final = 0`,
    ),
    openTurn: db.prepare(
      `SELECT turn_key AS turnKey, root_session_id AS rootSessionId, session_id AS sessionId, agent,
         start_ms AS startMs, end_ms AS endMs, source_path AS sourcePath
       FROM signal_turns WHERE turn_key = @turnKey AND final = 0`,
    ),
    closeTurn: db.prepare("UPDATE signal_turns SET final = 1 WHERE turn_key = @turnKey AND final = 0"),
    openCallsOfTurn: db.prepare(
      `SELECT s.call_key AS callKey, t.ts_ms AS tsMs FROM signal_calls s JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.final = 0 AND s.turn_key = @turnKey`,
    ),
    turnAt: db.prepare(
      `SELECT turn_key AS turnKey FROM signal_turns
       WHERE session_id = @sessionId AND agent = @agent AND start_ms <= @tsMs
       ORDER BY start_ms DESC LIMIT 1`,
    ),
    leadTurnAt: db.prepare(
      // signal_turns_by_session (session_id, start_ms): the lead's turns are its root session's.
      `SELECT turn_key AS turnKey FROM signal_turns
       WHERE session_id = @rootSessionId AND root_session_id = @rootSessionId AND agent = 'lead'
         AND start_ms <= @startMs
       ORDER BY start_ms DESC LIMIT 1`,
    ),
    quietCalls: db.prepare(
      `SELECT s.call_key AS callKey, t.ts_ms AS tsMs, d.last_ts_ms AS lastTsMs
       FROM signal_calls s JOIN signal_documents d ON d.source_path = s.source_path
         JOIN tool_calls t ON t.call_key = s.call_key
       WHERE s.final = 0 AND d.last_ts_ms <= @cutoff`,
    ),
    quietTurns: db.prepare(
      `SELECT t.turn_key AS turnKey, t.root_session_id AS rootSessionId, t.session_id AS sessionId, t.agent,
         t.start_ms AS startMs, t.end_ms AS endMs, t.source_path AS sourcePath
       FROM signal_turns t JOIN signal_documents d ON d.source_path = t.source_path
       WHERE t.final = 0 AND d.last_ts_ms <= @cutoff
       ORDER BY t.agent = 'lead' DESC, t.start_ms`,
    ),
    callDims: db.prepare(
      `SELECT session_id AS sessionId, model, provider, tool_name AS toolName FROM tool_calls
       WHERE call_key = @callKey`,
    ),
    anyLegacy: db.prepare("SELECT 1 FROM signal_unqueued LIMIT 1"),
    // `IS NOT NULL`: MAX over the partial index (without it, SQLite scans every event).
    nextSeq: db.prepare(
      `SELECT max((SELECT IFNULL(MAX(seq), 0) FROM signal_queue),
         (SELECT IFNULL(MAX(signal_seq), 0) FROM events WHERE signal_seq IS NOT NULL),
         (SELECT IFNULL(MAX(signal_seq), 0) FROM tool_calls WHERE signal_seq IS NOT NULL)) + 1 AS next`,
    ),
    putRequest: db.prepare(
      `UPDATE events SET signal_seq = @seq, turn_key = @turnKey, start_ms = @startMs
       WHERE dedup_key = @dedupKey AND signal_seq IS NULL`,
    ),
    anyOpenCall: db.prepare("SELECT 1 FROM signal_calls WHERE final = 0 LIMIT 1"),
    takeLegacy: db.prepare("DELETE FROM signal_unqueued WHERE kind = @kind AND ref_key = @refKey"),
    createCursor: db.prepare(
      `INSERT INTO signal_delivery (exporter, watermark, from_ms) VALUES (@exporter, 0, @fromMs)
       ON CONFLICT (exporter) DO NOTHING`,
    ),
    advance: db.prepare(
      `UPDATE signal_delivery SET watermark = @next, last_success_ms = @nowMs
       WHERE exporter = @exporter AND watermark = @base`,
    ),
  };
}

function prepareReads(db: Database.Database) {
  return {
    cursor: db.prepare("SELECT watermark, from_ms AS fromMs FROM signal_delivery WHERE exporter = @exporter"),
    after: db.prepare(
      `SELECT 1 FROM signal_queue WHERE seq > @after
       UNION ALL SELECT 1 FROM events WHERE signal_seq > @after
       UNION ALL SELECT 1 FROM tool_calls WHERE signal_seq > @after LIMIT 1`,
    ),
    counts: db.prepare(
      `SELECT kind, COUNT(*) AS n FROM signal_queue GROUP BY kind
       UNION ALL SELECT 'chat', COUNT(*) FROM events WHERE signal_seq IS NOT NULL
       UNION ALL SELECT 'tool', COUNT(*) FROM tool_calls WHERE signal_seq IS NOT NULL`,
    ),
    // One row per record, the fields of its kind joined in (COALESCE over the four). The records
    // are the queue's rows, the requests' events rows and the calls' tool_calls rows, merged by
    // seq: each side read in seq order up to the limit (its index), so the merge sorts at most
    // three times the limit.
    batch: db.prepare(
      `SELECT q.seq, q.kind, q.ref_key AS refKey, q.ts_ms AS tsMs, q.end_ms AS endMs,
         q.start_ms AS startMs,
         q.outcome, q.cancelled,
         IFNULL(d.root_session_id, COALESCE(e.session_id, c.session_id, tu.session_id, k.root_session_id))
           AS rootSessionId,
         COALESCE(e.session_id, c.session_id, tu.session_id, k.session_id) AS sessionId,
         COALESCE(e.agent, c.agent, tu.agent, k.agent) AS agent,
         COALESCE(e.project, c.project, tu.project, k.project) AS project,
         q.turn_key AS turnKey,
         COALESCE(e.model, c.model, k.model, '') AS model,
         COALESCE(e.provider, c.provider, k.provider, '') AS provider,
         COALESCE(e.client, c.client, '') AS client,
         IFNULL(e.end_known, 1) AS endKnown,
         CASE q.kind WHEN 'chat' THEN IFNULL(e.message_id, '') ELSE q.message_id END AS messageId,
         COALESCE(e.input, c.share_input, 0) AS input,
         COALESCE(e.output, c.share_output, 0) AS output,
         COALESCE(e.cache_read, c.share_cache_read, 0) AS cacheRead,
         COALESCE(e.cache_write, c.share_cache_write, 0) AS cacheWrite,
         COALESCE(e.tool_calls, c.divisor, 0) AS toolCalls,
         IFNULL(c.tool_name, '') AS toolName,
         q.tool_use_id AS toolUseId,
         CASE q.kind WHEN 'tool' THEN c.usage_key != '' ELSE 1 END AS usageKnown,
         IFNULL(tu.turn_id, '') AS turnId,
         IFNULL(k.strategy, '') AS strategy,
         IFNULL(k.reason, '') AS reason,
         IFNULL(k.source_message_count, 0) AS sourceMessageCount,
         k.messages_removed AS messagesRemoved,
         k.tokens_before AS tokensBefore
       FROM (SELECT * FROM (SELECT seq, kind, ref_key, ts_ms, end_ms, start_ms, outcome, cancelled, turn_key,
                 message_id, tool_use_id
               FROM signal_queue WHERE seq > @after ORDER BY seq LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT signal_seq, 'chat', dedup_key, ts_ms, ts_ms, start_ms, NULL, 0, turn_key, '', ''
               FROM events WHERE signal_seq > @after ORDER BY signal_seq LIMIT @limit)
             UNION ALL
             SELECT * FROM (SELECT c.signal_seq, 'tool', c.call_key, c.ts_ms, c.end_ms, c.ts_ms, c.outcome,
                 c.cancelled, COALESCE(c.turn_key, p.turn_key, ''), COALESCE(c.message_id, p.message_id, ''),
                 c.tool_use_id
               FROM tool_calls c
                 -- NULL turn and message id: its paying request's (callRecord), by its UNIQUE key.
                 LEFT JOIN events p ON c.turn_key IS NULL AND p.dedup_key = c.usage_key
               WHERE c.signal_seq > @after ORDER BY c.signal_seq LIMIT @limit)
             ORDER BY 1 LIMIT @limit) q
         LEFT JOIN events e ON q.kind = 'chat' AND e.dedup_key = q.ref_key
         LEFT JOIN tool_calls c ON q.kind = 'tool' AND c.call_key = q.ref_key
         LEFT JOIN signal_turns tu ON q.kind = 'turn' AND tu.turn_key = q.ref_key
         LEFT JOIN compactions k ON q.kind = 'compaction' AND k.compaction_key = q.ref_key
         LEFT JOIN signal_documents d ON d.source_path = COALESCE(e.source_path, c.source_path, tu.source_path)
       ORDER BY q.seq`,
    ),
  };
}
