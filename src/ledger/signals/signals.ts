/**
 * What the events, traces and GenAI metrics need beyond the counts (tables in tables/signals.ts):
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
import { documentQuiet, durationMs, toolCallEnd } from "../../adapter/timing.ts";
import type {
  AgentTurn,
  Compaction,
  DocumentSignals,
  ToolCall,
  ToolResult,
  UsageEvent,
} from "../../adapter/types.ts";
import { GenaiSeries, type GenaiSeriesRow } from "../genai/genai.ts";

import { SignalFinals, type TurnRow } from "./finals.ts";
import { QueueWriter } from "./queue.ts";
import {
  type CallRecord,
  type DocumentIndex,
  type Inserted,
  indexDocument,
  OPEN_CALL,
  type SignalKind,
} from "./records.ts";
import { ToolOutcomes } from "./tool-outcomes.ts";
import { type SignalBatch, type SignalCursor, SignalWatermarks } from "./watermarks.ts";
import { prepareSignalWrites } from "./writes.ts";

export {
  GENAI_BOUNDARIES,
  GENAI_DURATION_BOUNDARIES,
  GENAI_TOKEN_BOUNDARIES,
  type GenaiMetric,
  type GenaiSeriesRow,
  TOOL_DURATION_BOUNDARIES,
} from "../genai/genai.ts";
export {
  type CallRecord,
  type DocumentIndex,
  type Inserted,
  indexDocument,
  type SignalKind,
  type SignalRow,
  turnKeysOf,
} from "./records.ts";
export type { SignalBatch, SignalCursor } from "./watermarks.ts";

interface OpenCallRow {
  callKey: string;
  tsMs: number;
  lastTsMs: number;
}

/** Where a call read with `result` ends: final only with its result (undefined without one). */
function endOnRead(c: ToolCall, result: ToolResult | undefined) {
  return result === undefined
    ? undefined
    : toolCallEnd({ startMs: c.timestampMs, documentLastTsMs: 0 }, result, 0, 0);
}

export class Signals {
  private w: ReturnType<typeof prepareSignalWrites> | undefined;
  /** The ingestion time of the commit (or sweep) in progress: the GenAI series' updated_ms. */
  private nowMs = 0;
  /** The GenAI histogram series, written in the same transaction as the queue. */
  readonly genai: GenaiSeries;
  /** cline.tool.calls by outcome: counted from the queue's final calls in the same transaction. */
  readonly toolOutcomes: ToolOutcomes;
  /** Each signal exporter's watermark over the records. */
  private readonly watermarks: SignalWatermarks;
  /** Whether signal_unqueued may hold rows (checked at each commit's begin until it is empty). */
  private legacy = true;
  /** How stored calls and turns become final. */
  private readonly finals: SignalFinals;
  /** The queue rows of the transaction in progress, written at its end (or before it reads them). */
  private readonly queue: QueueWriter;

  /**
   * @param quietMs the quiet time of the commit path: a document already quiet when read is
   *   final at once (see `record`); undefined: its calls and turns wait for `finalizeQuiet`.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly quietMs?: number,
  ) {
    this.genai = new GenaiSeries(db);
    this.queue = new QueueWriter(db);
    this.toolOutcomes = new ToolOutcomes(db);
    this.watermarks = new SignalWatermarks(db);
    this.finals = new SignalFinals(() => this.writes(), this.queue, this.genai);
  }

  private writes(): ReturnType<typeof prepareSignalWrites> {
    this.w ??= prepareSignalWrites(this.db);
    return this.w;
  }

  /**
   * Stores the document's row (its last `ts`, the max over its reads) and indexes its signals
   * for the commit of one observation (call inside its transaction, before its events and calls
   * are inserted): the index says whether the document is quiet at `nowMs`, which makes a call
   * read without its result final at its INSERT (`callRecord`).
   */
  index(doc: DocumentSignals, sourcePath: string, nowMs: number): DocumentIndex {
    this.nowMs = nowMs;
    const last = this.writes().putDocument.get(
      sourcePath,
      doc.rootSessionId,
      doc.sessionId,
      doc.agent,
      doc.lastTsMs,
    ) as number;
    const quiet = this.quietMs !== undefined && documentQuiet(last, nowMs, this.quietMs);
    return indexDocument(doc, quiet ? last : undefined);
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
   *
   * A document already quiet when read (`index`) has its calls without a result final here, as
   * `finalizeQuiet` would end them at its next sweep, with the same values: at its last `ts`
   * (those read now at their INSERT, `callRecord`; those left open by earlier reads here), except
   * those of a turn this read closes (they end with the turn, as before). So a quiet history
   * writes no open call and no call UPDATE later. Its open turns stay for the sweep: finalizing
   * them here moved the sweep's work into the read and cost the cold `report` ~5 % CPU on the
   * sessions' backfill (docs/performance.md, "Quiet documents' calls final at read").
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
        this.finals.observeToolDuration(c, c.timestampMs, stored.endMs, stored.outcome);
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
          w.putCall.run(c.callKey, ids.messageId, ids.toolUseId, ids.turnKey, sourcePath);
          this.finals.openCalls = true;
        } else this.finals.putRecord(c.callKey, c.timestampMs, end.endMs, end.outcome, false, c, ids);
      } else if (end?.final) {
        // Stored by an earlier read: final now if that read left it open (a no-op otherwise).
        this.finals.call(c.callKey, c.timestampMs, end.endMs, end.outcome, false);
      }
      // Stored earlier and no result in this read: it is open already, or final already.
    }
    for (const r of doc.toolResults) if (!handled.has(r.callKey)) this.recordResult(r);
    const quietLast = index.quietLastTsMs;
    if (quietLast !== undefined && this.finals.openCalls) this.cutOpenCalls(sourcePath, quietLast, index);
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
    if (!end?.final) return this.quietRecord(c, index);
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

  /**
   * A call read without its result in a quiet document: final at its INSERT, ending at the
   * document's last `ts` (`finalizeQuiet`'s rule), with its ids as a later finalization writes
   * them; open when the document is not quiet, or when a turn this read closes ends it (`record`).
   */
  private quietRecord(c: ToolCall, index: DocumentIndex): CallRecord {
    const last = index.quietLastTsMs;
    if (last === undefined || this.quietMs === undefined) return OPEN_CALL;
    const turnKey = index.turnKeys.get(c.turnId ?? "") ?? "";
    if (index.closedTurns.has(turnKey)) return OPEN_CALL;
    const end = toolCallEnd(
      { startMs: c.timestampMs, documentLastTsMs: last },
      undefined,
      this.nowMs,
      this.quietMs,
    );
    if (!end.final) return OPEN_CALL;
    return {
      signalSeq: this.queue.peek(),
      endMs: Math.max(c.timestampMs, end.endMs),
      outcome: end.outcome,
      cancelled: 1,
      turnKey,
      messageId: c.messageId ?? "",
      toolUseId: c.toolUseId ?? "",
    };
  }

  /**
   * A quiet document's calls that earlier reads left open (`record`, after its results, before
   * its turns): each ends at the document's last `ts`, as the sweep would end it; a call of a
   * turn this read closes is left to that turn (it ends with it, as before).
   */
  private cutOpenCalls(sourcePath: string, lastTsMs: number, index: DocumentIndex): void {
    const open = this.writes().openCallsOfDocument.all({ sourcePath }) as {
      callKey: string;
      turnKey: string;
      tsMs: number;
    }[];
    for (const c of open) {
      if (index.closedTurns.has(c.turnKey)) continue;
      const end = toolCallEnd(
        { startMs: c.tsMs, documentLastTsMs: lastTsMs },
        undefined,
        this.nowMs,
        this.quietMs ?? 0,
      );
      if (end.final) this.finals.call(c.callKey, c.tsMs, end.endMs, end.outcome, true);
    }
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
   * A request or call stored before its signals were recorded (listed in signal_unqueued: only
   * a migration that adds signals to stored rows would list any): true once, when it is taken.
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
    this.finals.openCalls = this.writes().anyOpenCall.get() !== undefined;
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
    if (end.final) this.finals.call(r.callKey, open.tsMs, end.endMs, end.outcome, false);
  }

  /**
   * Stores a turn; one a later prompt closed is stored final by the same statement, which
   * returns its row only when it made it final (then it is queued).
   */
  private recordTurn(t: AgentTurn): void {
    const w = this.writes();
    const stmt = t.closed ? w.putFinalTurn : w.putTurn;
    const values = [
      t.turnKey,
      t.rootSessionId,
      t.sessionId,
      t.agent,
      t.turnId,
      t.project,
      t.startMs,
      t.endMs,
      t.closed ? 1 : 0,
      t.sourcePath,
    ] as const;
    if (!t.closed) {
      stmt.run(...values);
      return;
    }
    const stored = stmt.get(...values) as [endMs: number, startMs: number] | undefined;
    if (stored !== undefined) this.finals.queueTurn({ ...t, endMs: stored[0], startMs: stored[1] });
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
      this.finals.openCalls = w.anyOpenCall.get() !== undefined;
      let n = 0;
      for (const c of w.quietCalls.all({ cutoff }) as OpenCallRow[]) {
        const end = toolCallEnd({ startMs: c.tsMs, documentLastTsMs: c.lastTsMs }, undefined, nowMs, quietMs);
        if (end.final && this.finals.call(c.callKey, c.tsMs, end.endMs, end.outcome, true)) n++;
      }
      for (const t of w.quietTurns.all({ cutoff }) as TurnRow[]) n += this.finals.turn(t);
      this.queue.write();
      this.genai.flush(this.nowMs);
      this.toolOutcomes.count(this.nowMs);
      return n;
    })();
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

  // ---- delivery: each signal exporter's watermark (signal-watermarks.ts)

  /** The exporter's position; created on first use, skipping history older than `fromMs`. */
  cursor(exporter: string, fromMs: number): SignalCursor {
    return this.watermarks.cursor(exporter, fromMs);
  }

  /** Up to `limit` records after the cursor, the wanted kinds only (the others are skipped). */
  batch(cursor: SignalCursor, kinds: ReadonlySet<SignalKind>, limit: number): SignalBatch {
    return this.watermarks.batch(cursor, kinds, limit);
  }

  /** Whether any record follows `watermark`. */
  pending(watermark: number): boolean {
    return this.watermarks.pending(watermark);
  }

  /** Records a delivered batch (compare-and-set on the watermark it was read from). */
  commit(batch: SignalBatch, nowMs: number): "committed" | "stale" {
    return this.watermarks.commit(batch, nowMs);
  }

  /** Records by kind, queued or on events and calls (tests, diagnostics). */
  queued(): Record<SignalKind, number> {
    return this.watermarks.queued();
  }
}
