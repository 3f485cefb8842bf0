import type Database from "better-sqlite3";
import type { EditRecord, Observation, ToolCall, UsageEvent } from "../../adapter/types.ts";
import type { Captures } from "../captures/captures.ts";
import type { Checkpoints } from "../collection/checkpoints.ts";
import { type Activity, type ActivityRow, activityRows } from "../delivered/activity.ts";
import {
  addCallEdits,
  decodeCallEditSums,
  encodeCallEditSums,
  validEditsByCall,
} from "../delivered/call-edit-sums.ts";
import type { Edits } from "../delivered/edits.ts";
import { RollupSums } from "../rollups/rollup.ts";
import type { CallRecord, Inserted, Signals } from "../signals/signals.ts";
import type { Compactions } from "./compactions.ts";
import { prepareIngest } from "./ingest-statements.ts";
import type { UsageSeriesRow } from "./series.ts";

export type ReadObservation = Extract<Observation, { status: "read" }>;

export interface CommitResult {
  readonly eventsAdded: number;
  readonly callsAdded: number;
  /** Present when the observation carried captures (the captures surface). */
  readonly capturesAdded?: number;
  /** Present when the observation carried a compaction (the compaction surface): 1 if new. */
  readonly compactionsAdded?: number;
  /** Tool calls stored earlier with usage unknown whose message's metrics this commit added. */
  readonly callsUpgraded?: number;
  /** Present when the observation carried edits: how many were new. */
  readonly editsAdded?: number;
  /** Edits an adapter handed over that cannot be stored (invalid counts or enums): skipped, reported. */
  readonly editsInvalid?: readonly { readonly editKey: string; readonly reason: string }[];
  /** Present when the observation carried activity records: how many were new. */
  readonly activityAdded?: number;
}

type Components = { input: number; output: number; cacheRead: number; cacheWrite: number };

/**
 * The write path: one source's events, tool calls, captures and new checkpoint in one
 * transaction, with the series totals they add to, so a crash can neither lose nor double a
 * token. Only a writable ledger (migrated to this build's schema on open) has one.
 */
export class Ingest {
  private readonly st;
  /** The report rollup's sums of the transaction in progress (written at its end, in it). */
  private readonly rollup: RollupSums;
  private readonly run: (o: ReadObservation) => CommitResult;
  private readonly runAll: (os: readonly ReadObservation[]) => CommitResult[];
  /** An activity record just stored, into the report's rollup (bound once, not per commit). */
  private readonly addActivity = (r: ActivityRow): void => this.rollup.addActivity(r);
  /** The ingestion time of the last source committed (the GenAI series' updated_ms). */
  private lastNowMs = 0;

  constructor(
    db: Database.Database,
    private readonly checkpoints: Checkpoints,
    private readonly captures: Captures,
    private readonly now: () => number,
    private readonly signals?: Signals,
    private readonly compactions?: Compactions,
    private readonly edits?: Edits,
    private readonly activity?: Activity,
  ) {
    this.st = prepareIngest(db);
    this.rollup = new RollupSums(db);
    // The GenAI and rollup sums of all sources of a transaction are written once, at its end (in it).
    this.run = db.transaction((o: ReadObservation) => {
      this.signals?.begin();
      this.rollup.reset();
      const r = this.commitRows(o);
      this.signals?.flush(this.lastNowMs);
      this.rollup.write();
      return r;
    });
    this.runAll = db.transaction((os: readonly ReadObservation[]) => {
      this.signals?.begin();
      this.rollup.reset();
      const rs = os.map((o) => this.commitRows(o));
      this.signals?.flush(this.lastNowMs);
      this.rollup.write();
      return rs;
    });
  }

  /** Events, tool calls, captures and the source's new checkpoint, in one transaction. */
  commit(obs: ReadObservation): CommitResult {
    return this.run(obs);
  }

  /**
   * Several sources in ONE transaction: each with its rows and checkpoint as in commit(), and
   * all of them or none (a crash or an error loses the whole batch, checkpoints included, so
   * every source of it is read again: nothing lost, nothing doubled). One WAL commit for many
   * small sources instead of one each: the index pages they share are written once.
   */
  commitAll(obs: readonly ReadObservation[]): CommitResult[] {
    return this.runAll(obs);
  }

  private commitRows(o: ReadObservation): CommitResult {
    const nowMs = this.now();
    this.lastNowMs = nowMs;
    const adapter = o.source.adapterId;
    let eventsAdded = 0;
    let callsAdded = 0;
    let callsUpgraded = 0;
    // Only the events this commit ADDS may upgrade a call: a delta export finds the upgrade
    // through the event's id, which must therefore be new (see SeriesReads.toolDelta).
    const added = new Set<string>();
    const batch = new Map<string, UsageEvent>();
    // One series upsert per distinct series per commit, not one per row.
    const sums = new SeriesSums();
    // What these INSERTs added is what the signal queue takes as new (Signals.record).
    const inserted: { events: UsageEvent[]; calls: Map<string, CallRecord> } = {
      events: [],
      calls: new Map(),
    };
    // A request's signal record is its events row (seq, turn, start), and a call's read with its
    // result its tool_calls row: written with them.
    const index =
      o.signals !== undefined && this.signals !== undefined
        ? this.signals.index(o.signals, o.source.path, nowMs)
        : undefined;
    for (const e of o.events) {
      batch.set(e.dedupKey, e);
      if (this.insertEvent(e, adapter, nowMs, sums, index?.turnKeys)) {
        eventsAdded++;
        added.add(e.dedupKey);
        inserted.events.push(e);
      }
    }
    // The observation's valid edits by call: each is kept once by its call's row (schema v8).
    const invalid: { editKey: string; reason: string }[] = [];
    const editsByCall = this.edits === undefined ? undefined : validEditsByCall(o.edits, invalid);
    const freshEdits = new Set<EditRecord>();
    for (const c of o.toolCalls) {
      // Its signal record, numbered next if it is final (taken only if the INSERT inserts).
      const record = index === undefined ? undefined : this.signals?.callRecord(c, index);
      // A new call's edits are new: their sums go in with its row.
      const mine = editsByCall?.get(c.callKey);
      editsByCall?.delete(c.callKey);
      const withRow = mine === undefined ? undefined : addCallEdits(undefined, mine);
      const editSums = withRow?.sums === undefined ? null : encodeCallEditSums(withRow.sums);
      const r = this.insertCall(c, batch, added, nowMs, sums, record, editSums);
      if (r === "added") {
        callsAdded++;
        if (record !== undefined) inserted.calls.set(c.callKey, record);
        for (const e of withRow?.fresh ?? []) freshEdits.add(e);
      } else {
        if (r === "upgraded") callsUpgraded++;
        if (mine !== undefined) this.addLateEdits(c.callKey, mine, freshEdits, invalid);
      }
    }
    // Edits of calls stored by an earlier commit (a decision read after its call).
    for (const [callKey, mine] of editsByCall ?? []) this.addLateEdits(callKey, mine, freshEdits, invalid);
    // Times, results and turns for the events and traces, in the same transaction as the rows.
    if (o.signals !== undefined && index !== undefined)
      this.signals?.record(
        o.signals,
        index,
        o.source.path,
        o.events,
        o.toolCalls,
        inserted satisfies Inserted,
        nowMs,
      );
    const editsAdded = this.insertEdits(o, adapter, nowMs, index !== undefined, freshEdits);
    const activityAdded = this.insertActivity(o, adapter, nowMs);
    for (const u of sums.usage.values()) this.st.usageSeries.run(u.values(nowMs));
    for (const t of sums.tool.values()) this.st.toolSeries.run(t.values(nowMs));
    let capturesAdded: number | undefined;
    if (o.captures !== undefined) {
      capturesAdded = 0;
      for (const c of o.captures) if (this.captures.insert(c, adapter, nowMs)) capturesAdded++;
    }
    let compactionsAdded: number | undefined;
    if (o.compactions !== undefined && this.compactions !== undefined) {
      compactionsAdded = 0;
      for (const c of o.compactions) {
        if (!this.compactions.insert(c, adapter, nowMs)) continue;
        compactionsAdded++;
        // Its cline.compaction event and span: queued once, with the row (same transaction).
        this.signals?.recordCompaction(c);
      }
    }
    this.checkpoints.put(o.checkpoint, adapter, nowMs);
    return {
      eventsAdded,
      callsAdded,
      ...(capturesAdded === undefined ? {} : { capturesAdded }),
      ...(compactionsAdded === undefined ? {} : { compactionsAdded }),
      ...(callsUpgraded === 0 ? {} : { callsUpgraded }),
      ...(editsAdded === undefined ? {} : { editsAdded }),
      ...(invalid.length === 0 ? {} : { editsInvalid: invalid }),
      ...(activityAdded === undefined ? {} : { activityAdded }),
    };
  }

  /**
   * An earlier-stored call's edits: those its row does not hold yet (their places) are new, and
   * added to its sums; an edit whose call has no row cannot be kept once, so it is refused (invalid).
   */
  private addLateEdits(
    callKey: string,
    edits: readonly EditRecord[],
    fresh: Set<EditRecord>,
    invalid: { editKey: string; reason: string }[],
  ): void {
    const row = this.st.callEditSums.get({ callKey }) as { sums: string | null } | undefined;
    if (row === undefined) {
      for (const e of edits)
        invalid.push({ editKey: e.editKey, reason: `its call ${callKey} is not stored` });
      return;
    }
    const next = addCallEdits(row.sums === null ? undefined : decodeCallEditSums(row.sums), edits);
    if (next.fresh.length === 0 || next.sums === undefined) return;
    this.st.setCallEditSums.run({ callKey, sums: encodeCallEditSums(next.sums) });
    for (const e of next.fresh) fresh.add(e);
  }

  /**
   * The observation's new edits (`fresh`: kept once by their calls' rows, above), in the order the
   * adapter read them, stored as packs and added to the report's rollup (their series are folded at
   * read: schema v7); an edit of a document with signals takes the next seq of the signal order (its
   * `cline.code_edit` event).
   */
  private insertEdits(
    o: ReadObservation,
    adapter: string,
    nowMs: number,
    withSignals: boolean,
    fresh: ReadonlySet<EditRecord>,
  ): number | undefined {
    if (o.edits === undefined || this.edits === undefined) return undefined;
    const signals = withSignals ? this.signals : undefined;
    // The new edits take consecutive seqs from the next one (their packs store the first).
    const added = this.edits.insertAll(
      fresh.size === o.edits.length ? o.edits : o.edits.filter((e) => fresh.has(e)),
      adapter,
      nowMs,
      signals === undefined ? null : signals.requestSeq(),
    );
    for (const e of added) {
      signals?.claimSeq();
      this.rollup.addEdit(e);
    }
    return added.length;
  }

  /** The observation's activity records, each stored once by its key (first view wins), and added to the report's rollup. */
  private insertActivity(o: ReadObservation, adapter: string, nowMs: number): number | undefined {
    if (this.activity === undefined) return undefined;
    if (o.activeTime === undefined && o.deliveries === undefined && o.sessionStarts === undefined)
      return undefined;
    const onAdded = this.addActivity;
    let added = 0;
    if (o.activeTime !== undefined)
      added += this.activity.insertActiveTime(o.activeTime, adapter, nowMs, onAdded);
    for (const r of activityRows(o)) if (this.activity.insert(r, adapter, nowMs, onAdded)) added++;
    return added;
  }

  private insertEvent(
    e: UsageEvent,
    adapter: string,
    nowMs: number,
    sums: SeriesSums,
    turnKeys: ReadonlyMap<string, string> | undefined,
  ): boolean {
    const signals = turnKeys === undefined ? undefined : this.signals;
    // By position, in EVENT_COLUMNS order (see EVENT_COLUMNS).
    const info = this.st.insertEvent.run(
      e.dedupKey,
      adapter,
      e.sessionId,
      e.agent,
      e.messageId,
      e.timestampMs,
      e.model,
      e.provider,
      e.project,
      e.input,
      e.output,
      e.cacheRead,
      e.cacheWrite,
      e.total,
      e.cacheBranch,
      e.recordedCost,
      e.toolCallCount,
      e.sourcePath,
      nowMs,
      signals === undefined ? null : signals.requestSeq(),
      turnKeys === undefined ? null : (turnKeys.get(e.turnId ?? "") ?? ""),
      turnKeys === undefined ? null : (e.startMs ?? 0),
      e.client ?? "",
      e.endApproximate === true ? 0 : 1,
    );
    if (info.changes === 0) return false;
    signals?.claimSeq();
    sums.usageOf(e).add(e, 1, e.timestampMs);
    this.rollup.addEvent(e);
    return true;
  }

  /**
   * Stores a call with its 1/n share of the paying event. A call already stored with usage
   * unknown (its message had no metrics yet) is upgraded when this commit adds that event: its
   * share is set, and added to its usage-known series with no second count of the call.
   */
  private insertCall(
    c: ToolCall,
    batch: ReadonlyMap<string, UsageEvent>,
    added: ReadonlySet<string>,
    nowMs: number,
    sums: SeriesSums,
    record: CallRecord | undefined,
    editSums: string | null,
  ): "added" | "upgraded" | "known" {
    let paid: Components | undefined;
    if (c.usageKey !== "") {
      paid =
        batch.get(c.usageKey) ??
        (this.st.getEventComponents.get({ key: c.usageKey }) as Components | undefined);
    }
    const d = c.divisor;
    const share = paid
      ? {
          input: paid.input / d,
          output: paid.output / d,
          cacheRead: paid.cacheRead / d,
          cacheWrite: paid.cacheWrite / d,
        }
      : ZERO;
    const known = paid ? 1 : 0;
    // By position, in CALL_COLUMNS order, then (with its signal record) RECORD_COLUMNS order; without
    // signals (an adapter without them), the row without its record columns.
    const client = c.client ?? "";
    const usageKey = paid ? c.usageKey : "";
    const info =
      record === undefined
        ? this.st.insertCall.run(
            c.callKey,
            usageKey,
            c.sessionId,
            c.agent,
            c.toolName,
            c.timestampMs,
            d,
            c.model,
            c.provider,
            c.project,
            share.input,
            share.output,
            share.cacheRead,
            share.cacheWrite,
            c.sourcePath,
            nowMs,
            known,
            client,
            editSums,
          )
        : this.st.insertCallRecord.run(
            c.callKey,
            usageKey,
            c.sessionId,
            c.agent,
            c.toolName,
            c.timestampMs,
            d,
            c.model,
            c.provider,
            c.project,
            share.input,
            share.output,
            share.cacheRead,
            share.cacheWrite,
            c.sourcePath,
            nowMs,
            known,
            client,
            editSums,
            record.signalSeq,
            record.endMs,
            record.outcome,
            record.cancelled,
            record.turnKey,
            record.messageId,
            record.toolUseId,
          );
    if (info.changes > 0) {
      if (record !== undefined && record.signalSeq !== null) this.signals?.claimSeq();
      sums.toolOf(c, c.toolName, known).add(share, 1, c.timestampMs);
      this.rollup.addCall(c);
      return "added";
    }
    if (!paid || !added.has(c.usageKey)) return "known";
    // The stored row keeps its series key (the dimensions it was counted under): only its share changes.
    const up = this.st.upgradeCall.get({
      callKey: c.callKey,
      usageKey: c.usageKey,
      divisor: d,
      shareInput: share.input,
      shareOutput: share.output,
      shareCacheRead: share.cacheRead,
      shareCacheWrite: share.cacheWrite,
    }) as (SeriesKey & { toolName: string; tsMs: number }) | undefined;
    if (up === undefined) return "known";
    sums.toolOf(up, up.toolName, 1).add(share, 0, up.tsMs);
    return "upgraded";
  }
}

const ZERO: Components = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** The running sum of one series over the rows a commit adds. */
class SeriesSum {
  input = 0;
  output = 0;
  cacheRead = 0;
  cacheWrite = 0;
  n = 0;
  lastEventMs = Number.NEGATIVE_INFINITY;

  /** `key`: the series key's values in its upsert's column order (SERIES_KEY[, tool_name, usage_known]). */
  constructor(private readonly key: readonly (string | number)[]) {}

  add(c: Components, n: number, ts: number): void {
    this.input += c.input;
    this.output += c.output;
    this.cacheRead += c.cacheRead;
    this.cacheWrite += c.cacheWrite;
    this.n += n;
    if (ts > this.lastEventMs) this.lastEventMs = ts;
  }

  /** The upsert's values: the key's, then sumColumns' (ingest-statements.ts). */
  values(nowMs: number): (string | number)[] {
    return [
      ...this.key,
      this.input,
      this.output,
      this.cacheRead,
      this.cacheWrite,
      this.n,
      nowMs,
      nowMs,
      this.lastEventMs,
    ];
  }
}

/** The key of a usage series (SERIES_KEY), and the prefix of a tool series'. */
type SeriesKey = Pick<UsageSeriesRow, "sessionId" | "agent" | "project" | "model" | "provider" | "client">;

/** An event's, call's or stored call's series key (no client said: ''). */
type KeyOf = Omit<SeriesKey, "client"> & { readonly client?: string | undefined };

/** A series key's values in SERIES_KEY order. */
function keyValues(k: KeyOf): string[] {
  return [k.sessionId, k.agent, k.project, k.model, k.provider, k.client ?? ""];
}

/** Per-commit running sums of the rows added, by series key. */
class SeriesSums {
  readonly usage = new Map<string, SeriesSum>();
  readonly tool = new Map<string, SeriesSum>();

  usageOf(k: KeyOf): SeriesSum {
    // The map key built as one string (no array per row); the key's values only for a new series.
    const id = `${k.sessionId}\u0000${k.agent}\u0000${k.project}\u0000${k.model}\u0000${k.provider}\u0000${k.client ?? ""}`;
    let s = this.usage.get(id);
    if (s === undefined) {
      s = new SeriesSum(keyValues(k));
      this.usage.set(id, s);
    }
    return s;
  }

  toolOf(k: KeyOf, toolName: string, usageKnown: 0 | 1): SeriesSum {
    const id = `${k.sessionId}\u0000${k.agent}\u0000${k.project}\u0000${k.model}\u0000${k.provider}\u0000${k.client ?? ""}\u0000${toolName}\u0000${usageKnown}`;
    let s = this.tool.get(id);
    if (s === undefined) {
      s = new SeriesSum([...keyValues(k), toolName, usageKnown]);
      this.tool.set(id, s);
    }
    return s;
  }
}
