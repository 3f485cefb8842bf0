import { randomUUID } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type {
  Observation,
  RequestCapture,
  SourceCheckpoint,
  ToolCall,
  UsageEvent,
} from "../adapter/types.ts";
import {
  bucketIndex,
  CAPTURE_PAYLOAD_BOUNDARIES,
  CAPTURE_TOKEN_BOUNDARIES,
  MIGRATIONS,
  SCHEMA_VERSION,
} from "./schema.ts";

export const LEDGER_FILE = "ledger.sqlite";
const LOCK_FILE = "ledger.lock";
const PID_FILE = "ledger.pid";

/** A ledger problem the user must act on; the message names the file and the fix. */
export class LedgerError extends Error {
  constructor(
    message: string,
    readonly code: "locked" | "corrupt" | "too-new" | "io",
  ) {
    super(message);
    this.name = "LedgerError";
  }
}

export interface LedgerOptions {
  /** Open for reading only, without the single-writer lock (report while a daemon runs). */
  readonly readOnly?: boolean;
  readonly now?: () => number;
  /** Cap the ledger's size in pages (SQLITE_FULL beyond it): simulates a full disk in tests. */
  readonly maxPageCount?: number;
}

export type ReadObservation = Extract<Observation, { status: "read" }>;

export interface CommitResult {
  readonly eventsAdded: number;
  readonly callsAdded: number;
  /** Present when the observation carried captures (the captures surface). */
  readonly capturesAdded?: number;
}

export interface UsageSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly events: number;
  readonly firstMs: number;
  /** Ingestion time of the last row added (when the total last changed). */
  readonly updatedMs: number;
  /** The newest event time (`ts_ms`) of the rows summed: when the series last saw activity. */
  readonly lastEventMs: number;
}

export interface ToolSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly toolName: string;
  readonly usageKnown: boolean;
  readonly calls: number;
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest `ts_ms` of the calls summed. */
  readonly lastEventMs: number;
}

export interface ExportState {
  readonly exporter: string;
  readonly eventWatermark: number;
  readonly callWatermark: number;
  readonly windowStartNs: bigint;
  readonly lastSuccessMs: number;
}

const SERIES_KEY = "session_id, agent, project, model, provider";

/**
 * The local SQLite ledger: deduplicated events, tool calls, checkpoints and export
 * state. Single writer per state dir (an OS lock that dies with the process), WAL,
 * statements prepared once, and the events of one source commit together with its
 * checkpoint so a crash can neither lose nor double a token.
 */
export class Ledger {
  readonly path: string;
  readonly instanceId: string;
  readonly streamStartNs: bigint;
  private readonly db: Database.Database;
  private readonly lockDb: Database.Database | undefined;
  private readonly now: () => number;
  private readonly st: ReturnType<typeof prepare>;
  /** Whether the series carry `last_event_ms` (schema v3). */
  private readonly eventTimes: boolean;
  private wSt: ReturnType<typeof prepareSeriesWrites> | undefined;
  private readonly groupCache = new Map<string, Database.Statement>();

  private constructor(
    path: string,
    db: Database.Database,
    lockDb: Database.Database | undefined,
    now: () => number,
  ) {
    this.path = path;
    this.db = db;
    this.lockDb = lockDb;
    this.now = now;
    // Only a read-only view can be older than this build (a writable open migrates first).
    this.eventTimes = (db.pragma("user_version", { simple: true }) as number) >= EVENT_TIMES_VERSION;
    this.st = prepare(db, this.eventTimes);
    const meta = new Map(
      (db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [
        r.key,
        r.value,
      ]),
    );
    this.instanceId = meta.get("instance_id") ?? "";
    this.streamStartNs = BigInt(meta.get("stream_start_ns") ?? "0");
  }

  /** Open (creating if needed) the ledger in `stateDir`. Throws LedgerError with a fix. */
  static open(stateDir: string, opts: LedgerOptions = {}): Ledger {
    const now = opts.now ?? Date.now;
    const path = join(stateDir, LEDGER_FILE);
    if (opts.readOnly) {
      if (!existsSync(path))
        throw new LedgerError(
          `no ledger at ${path} yet: run \`cline-otel report\` or \`cline-otel run\` once`,
          "io",
        );
      const db = openDb(path, true);
      const version = db.pragma("user_version", { simple: true }) as number;
      if (version === 0 || version > SCHEMA_VERSION) {
        db.close();
        throw new LedgerError(
          version === 0
            ? `the ledger ${path} is still being created by another cline-otel process; try again in a moment`
            : `the ledger ${path} has schema version ${version}, newer than this cline-otel understands (${SCHEMA_VERSION}); upgrade cline-otel`,
          version === 0 ? "io" : "too-new",
        );
      }
      return new Ledger(path, db, undefined, now);
    }
    ensurePrivateDir(stateDir);
    const lockDb = acquireLock(stateDir);
    try {
      if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
      chmodSync(path, 0o600);
      const db = openDb(path, false);
      migrate(db, path, now);
      if (opts.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.trunc(opts.maxPageCount)}`);
      return new Ledger(path, db, lockDb, now);
    } catch (e) {
      lockDb.close();
      throw e;
    }
  }

  /** Runs `fn` in one transaction (nested calls become savepoints): all of its writes or none. */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  close(): void {
    if (this.db.open) this.db.close();
    if (this.lockDb?.open) this.lockDb.close();
  }

  /** Every checkpoint in one query: a pass over thousands of sources looks them up in memory. */
  allCheckpoints(): Map<string, SourceCheckpoint> {
    const out = new Map<string, SourceCheckpoint>();
    for (const r of this.st.allCheckpoints.iterate() as IterableIterator<{
      path: string;
      size: number;
      mtime_ns: string;
      ino: number;
      dev: number;
    }>) {
      out.set(r.path, { path: r.path, size: r.size, mtimeNs: r.mtime_ns, ino: r.ino, dev: r.dev });
    }
    return out;
  }

  getCheckpoint(path: string): SourceCheckpoint | undefined {
    const r = this.st.getCheckpoint.get(path) as
      | { path: string; size: number; mtime_ns: string; ino: number; dev: number }
      | undefined;
    return r && { path: r.path, size: r.size, mtimeNs: r.mtime_ns, ino: r.ino, dev: r.dev };
  }

  /** Events, tool calls and the source's new checkpoint, in one transaction. */
  commit(obs: ReadObservation): CommitResult {
    return this.commitTx(obs);
  }

  private readonly commitTx = (obs: ReadObservation): CommitResult => {
    const run = this.db.transaction((o: ReadObservation): CommitResult => {
      const nowMs = this.now();
      let eventsAdded = 0;
      let callsAdded = 0;
      const byKey = new Map<string, UsageEvent>();
      // One series upsert per distinct series per commit, not one per row.
      const sums = new SeriesSums();
      for (const e of o.events) {
        byKey.set(e.dedupKey, e);
        if (this.insertEvent(e, o.source.adapterId, nowMs, sums)) eventsAdded++;
      }
      for (const c of o.toolCalls) {
        if (this.insertCall(c, byKey, nowMs, sums)) callsAdded++;
      }
      const w = this.seriesWrites();
      for (const u of sums.usage.values())
        w.usage.run(...u.key, u.input, u.output, u.cacheRead, u.cacheWrite, u.n, nowMs, nowMs, u.lastEventMs);
      for (const t of sums.tool.values())
        w.tool.run(...t.key, t.n, t.input, t.output, t.cacheRead, t.cacheWrite, nowMs, nowMs, t.lastEventMs);
      let capturesAdded: number | undefined;
      if (o.captures !== undefined) {
        capturesAdded = 0;
        for (const c of o.captures) if (this.insertCapture(c, o.source.adapterId, nowMs)) capturesAdded++;
      }
      const cp = o.checkpoint;
      this.st.putCheckpoint.run(cp.path, o.source.adapterId, cp.size, cp.mtimeNs, cp.ino, cp.dev, nowMs);
      return capturesAdded === undefined
        ? { eventsAdded, callsAdded }
        : { eventsAdded, callsAdded, capturesAdded };
    });
    return run(obs);
  };

  private insertEvent(e: UsageEvent, adapter: string, nowMs: number, sums: SeriesSums): boolean {
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
    );
    if (info.changes === 0) return false;
    sums.add(
      "usage",
      [e.sessionId, e.agent, e.project, e.model, e.provider],
      [e.input, e.output, e.cacheRead, e.cacheWrite],
      e.timestampMs,
    );
    return true;
  }

  private insertCall(c: ToolCall, batch: Map<string, UsageEvent>, nowMs: number, sums: SeriesSums): boolean {
    let paid: { input: number; output: number; cacheRead: number; cacheWrite: number } | undefined;
    if (c.usageKey !== "") {
      paid = batch.get(c.usageKey) ?? (this.st.getEventComponents.get(c.usageKey) as typeof paid);
    }
    const d = c.divisor;
    const share = paid
      ? [paid.input / d, paid.output / d, paid.cacheRead / d, paid.cacheWrite / d]
      : [0, 0, 0, 0];
    const usageKey = paid ? c.usageKey : "";
    const info = this.st.insertCall.run(
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
      ...share,
      c.sourcePath,
      nowMs,
    );
    if (info.changes === 0) return false;
    sums.add(
      "tool",
      [c.sessionId, c.agent, c.project, c.model, c.provider, c.toolName, paid ? 1 : 0],
      share as [number, number, number, number],
      c.timestampMs,
    );
    return true;
  }

  /**
   * Series upserts, prepared on the first commit: only a writable ledger commits, and it was
   * migrated to this build's schema on open (a read-only view of an older one has no v3 columns).
   */
  private seriesWrites(): ReturnType<typeof prepareSeriesWrites> {
    this.wSt ??= prepareSeriesWrites(this.db);
    return this.wSt;
  }

  usageSeries(): UsageSeriesRow[] {
    return this.st.usageSeries.all() as UsageSeriesRow[];
  }

  toolSeries(): ToolSeriesRow[] {
    return (this.st.toolSeries.all() as (Omit<ToolSeriesRow, "usageKnown"> & { usageKnown: number })[]).map(
      (r) => ({ ...r, usageKnown: r.usageKnown === 1 }),
    );
  }

  /** Usage aggregated per series over events with watermark < id <= upTo (delta export). */
  usageDelta(after: number, upTo: number): UsageSeriesRow[] {
    return this.st.usageDelta.all(after, upTo) as UsageSeriesRow[];
  }

  toolDelta(after: number, upTo: number): ToolSeriesRow[] {
    return (
      this.st.toolDelta.all(after, upTo) as (Omit<ToolSeriesRow, "usageKnown"> & { usageKnown: number })[]
    ).map((r) => ({ ...r, usageKnown: r.usageKnown === 1 }));
  }

  /** Highest event and call ids: the delta exporter's next watermark candidates. */
  maxIds(): { event: number; call: number } {
    const r = this.st.maxIds.get() as { event: number; call: number };
    return r;
  }

  getExportState(exporter: string): ExportState {
    const r = this.st.getExportState.get(exporter) as
      | { event_watermark: number; call_watermark: number; window_start_ns: string; last_success_ms: number }
      | undefined;
    if (r === undefined) {
      return {
        exporter,
        eventWatermark: 0,
        callWatermark: 0,
        windowStartNs: this.streamStartNs,
        lastSuccessMs: 0,
      };
    }
    return {
      exporter,
      eventWatermark: r.event_watermark,
      callWatermark: r.call_watermark,
      windowStartNs: BigInt(r.window_start_ns),
      lastSuccessMs: r.last_success_ms,
    };
  }

  putExportState(s: ExportState): void {
    this.st.putExportState.run(
      s.exporter,
      s.eventWatermark,
      s.callWatermark,
      s.windowStartNs.toString(),
      s.lastSuccessMs,
    );
  }

  /** Grouped totals for `report`. Dimensions are validated column expressions, never user text. */
  groupedEvents(dims: readonly GroupDim[]): Record<string, unknown>[] {
    return this.grouped("events", dims);
  }

  groupedCalls(dims: readonly GroupDim[]): Record<string, unknown>[] {
    return this.grouped("calls", dims);
  }

  /** Events of messages that made no tool call: the `(none)` row of a per-tool view. */
  groupedEventsWithoutCalls(dims: readonly GroupDim[]): Record<string, unknown>[] {
    return this.grouped("events-without-calls", dims);
  }

  private grouped(kind: GroupKind, dims: readonly GroupDim[]): Record<string, unknown>[] {
    const key = `${kind}:${dims.join(",")}`;
    let stmt = this.groupCache.get(key);
    if (stmt === undefined) {
      stmt = this.db.prepare(groupSql(kind, dims));
      this.groupCache.set(key, stmt);
    }
    return stmt.all() as Record<string, unknown>[];
  }

  /** Events of the ledger in ingestion order (tests, audits, cost verification). */
  *iterateEvents(): IterableIterator<Record<string, unknown>> {
    yield* this.st.allEvents.iterate() as IterableIterator<Record<string, unknown>>;
  }

  counts(): { events: number; calls: number; sources: number } {
    return this.st.counts.get() as { events: number; calls: number; sources: number };
  }

  // ---- Provider-request captures (schema v2). Statements are prepared on first use, so a
  // read-only view of a ledger written by an older build (no capture tables) still opens.

  private capSt: ReturnType<typeof prepareCaptures> | undefined;

  private captureStatements(): ReturnType<typeof prepareCaptures> {
    this.capSt ??= prepareCaptures(this.db, this.eventTimes);
    return this.capSt;
  }

  private capturesKnown = false;

  /** False only for a read-only view of a ledger from before captures (schema v1). */
  hasCaptures(): boolean {
    this.capturesKnown ||=
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'captures'").get() !==
      undefined;
    return this.capturesKnown;
  }

  private insertCapture(c: RequestCapture, adapter: string, nowMs: number): boolean {
    const st = this.captureStatements();
    const payloadBucket = bucketIndex(c.payloadBytes, CAPTURE_PAYLOAD_BOUNDARIES);
    const tokensBucket = bucketIndex(c.estimatedTokens, CAPTURE_TOKEN_BOUNDARIES);
    const r = c.roles;
    const info = st.insert.run(
      c.captureKey,
      adapter,
      c.captureId,
      c.stage,
      c.seq,
      c.attempt,
      c.mode,
      c.sessionId,
      c.agent,
      c.agentId,
      c.conversationId,
      c.runId,
      c.iteration,
      c.project,
      c.model,
      c.provider,
      c.timestampMs,
      c.payloadBytes,
      c.estimatedTokens,
      c.messageCount,
      c.messageBytes,
      c.messageTokens,
      r.system,
      r.user,
      r.assistant,
      r.tool,
      r.other,
      c.toolResults,
      c.reasoningBlocks,
      payloadBucket,
      tokensBucket,
      c.sourcePath,
      nowMs,
    );
    if (info.changes === 0) return false;
    const series = this.seriesWrites().capture.get(
      c.sessionId,
      c.agent,
      c.project,
      c.model,
      c.provider,
      c.stage,
      c.attempt > 1 ? 1 : 0,
      c.payloadBytes,
      c.payloadBytes,
      c.payloadBytes,
      c.estimatedTokens,
      c.estimatedTokens,
      c.estimatedTokens,
      c.messageCount,
      r.system,
      r.user,
      r.assistant,
      r.tool,
      r.other,
      c.toolResults,
      c.reasoningBlocks,
      nowMs,
      nowMs,
      c.timestampMs,
    ) as { id: number };
    st.bumpBucket.run(series.id, "payload", payloadBucket);
    st.bumpBucket.run(series.id, "tokens", tokensBucket);
    return true;
  }

  /** Every capture series with its running totals and histogram buckets (cumulative export). */
  captureSeries(): CaptureSeriesRow[] {
    if (!this.hasCaptures()) return [];
    const st = this.captureStatements();
    const rows = st.series.all() as (Omit<CaptureSeriesRow, "payloadBuckets" | "tokenBuckets"> & {
      id: number;
    })[];
    const buckets = new Map<number, { payload: number[]; tokens: number[] }>();
    for (const b of st.seriesBuckets.iterate() as IterableIterator<{
      seriesId: number;
      metric: "payload" | "tokens";
      bucket: number;
      count: number;
    }>) {
      let e = buckets.get(b.seriesId);
      if (e === undefined) {
        e = {
          payload: emptyBuckets(CAPTURE_PAYLOAD_BOUNDARIES),
          tokens: emptyBuckets(CAPTURE_TOKEN_BOUNDARIES),
        };
        buckets.set(b.seriesId, e);
      }
      const arr = b.metric === "payload" ? e.payload : e.tokens;
      if (b.bucket < arr.length) arr[b.bucket] = b.count;
    }
    return rows.map(({ id, ...r }) => ({
      ...r,
      payloadBuckets: buckets.get(id)?.payload ?? emptyBuckets(CAPTURE_PAYLOAD_BOUNDARIES),
      tokenBuckets: buckets.get(id)?.tokens ?? emptyBuckets(CAPTURE_TOKEN_BOUNDARIES),
    }));
  }

  /** Capture series aggregated over captures with after < id <= upTo (delta export). */
  captureDelta(after: number, upTo: number): CaptureSeriesRow[] {
    if (!this.hasCaptures()) return [];
    const st = this.captureStatements();
    const keyOf = (r: Record<string, unknown>) =>
      JSON.stringify([r.sessionId, r.agent, r.project, r.model, r.provider, r.stage]);
    const rows = (
      st.delta.all(after, upTo) as Omit<CaptureSeriesRow, "payloadBuckets" | "tokenBuckets">[]
    ).map((r) => ({
      ...r,
      payloadBuckets: emptyBuckets(CAPTURE_PAYLOAD_BOUNDARIES),
      tokenBuckets: emptyBuckets(CAPTURE_TOKEN_BOUNDARIES),
    }));
    const byKey = new Map(rows.map((r) => [keyOf(r), r]));
    for (const b of st.deltaBuckets.all(after, upTo, after, upTo) as (Record<string, unknown> & {
      metric: "payload" | "tokens";
      bucket: number;
      count: number;
    })[]) {
      const r = byKey.get(keyOf(b));
      if (r === undefined) continue;
      const arr = b.metric === "payload" ? r.payloadBuckets : r.tokenBuckets;
      if (b.bucket < arr.length) arr[b.bucket] = b.count;
    }
    return rows;
  }

  /** Highest capture id: a delta exporter's next capture watermark candidate. */
  maxCaptureId(): number {
    if (!this.hasCaptures()) return 0;
    return (this.captureStatements().maxId.get() as { id: number }).id;
  }

  /** What a delta exporter has delivered of the captures (0 when nothing yet). */
  captureWatermark(exporter: string): number {
    if (!this.hasCaptures()) return 0;
    const r = this.captureStatements().getWatermark.get(exporter) as { w: number } | undefined;
    return r?.w ?? 0;
  }

  putCaptureWatermark(exporter: string, watermark: number): void {
    this.captureStatements().putWatermark.run(exporter, this.streamStartNs.toString(), watermark);
  }

  /** Capture rows for `report --captures`, in session / agent / run / iteration order. */
  captureRows(sessionId?: string): CaptureRow[] {
    if (!this.hasCaptures()) return [];
    const st = this.captureStatements();
    return (sessionId === undefined ? st.rows.all() : st.rowsOfSession.all(sessionId)) as CaptureRow[];
  }

  /**
   * Drops the checkpoints of `adapter` for files that are gone: not in `live` and not under a
   * dir in `keepUnder` (dirs that could not be listed, whose files may still exist).
   */
  pruneCheckpoints(adapter: string, live: ReadonlySet<string>, keepUnder: readonly string[]): number {
    const st = this.captureStatements();
    const paths = st.checkpointPaths.all(adapter) as string[];
    const under = keepUnder.map((d) => (d.endsWith("/") ? d : `${d}/`));
    const gone = paths.filter((p) => !live.has(p) && !under.some((d) => p.startsWith(d)));
    if (gone.length === 0) return 0;
    this.db.transaction(() => {
      for (const p of gone) st.deleteCheckpoint.run(p, adapter);
    })();
    return gone.length;
  }
}

/** One exported capture series (or its delta over a window). Buckets follow CAPTURE_*_BOUNDARIES. */
export interface CaptureSeriesRow {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly stage: string;
  readonly captures: number;
  /** Captures with attempt > 1. */
  readonly retries: number;
  readonly payloadBytes: number;
  readonly payloadMin: number;
  readonly payloadMax: number;
  readonly estimatedTokens: number;
  readonly tokensMin: number;
  readonly tokensMax: number;
  /** Sum of messageCount over the captures (each request counts the whole conversation it sends). */
  readonly messages: number;
  readonly roleSystem: number;
  readonly roleUser: number;
  readonly roleAssistant: number;
  readonly roleTool: number;
  readonly roleOther: number;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
  /** Counts per bucket, length = boundaries + 1 (the last one is above the last bound). */
  readonly payloadBuckets: number[];
  readonly tokenBuckets: number[];
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest capture `timestamp` (`ts_ms`) of the captures summed. */
  readonly lastEventMs: number;
}

/** One capture as stored. */
export interface CaptureRow {
  readonly id: number;
  readonly captureKey: string;
  readonly captureId: string;
  readonly stage: string;
  readonly seq: number;
  readonly attempt: number;
  readonly mode: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly agentId: string;
  readonly conversationId: string;
  readonly runId: string;
  readonly iteration: number | null;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  readonly tsMs: number;
  readonly payloadBytes: number;
  readonly estimatedTokens: number;
  readonly messageCount: number;
  readonly messageBytes: number;
  readonly messageTokens: number;
  readonly roleSystem: number;
  readonly roleUser: number;
  readonly roleAssistant: number;
  readonly roleTool: number;
  readonly roleOther: number;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
}

function emptyBuckets(boundaries: readonly number[]): number[] {
  return new Array<number>(boundaries.length + 1).fill(0);
}

const CAPTURE_SERIES_KEY = "session_id, agent, project, model, provider, stage";

function prepareCaptures(db: Database.Database, eventTimes: boolean) {
  const dims = `session_id AS sessionId, agent, project, model, provider, stage`;
  const lastEvent = lastEventColumn(eventTimes);
  const sums = `messages, role_system AS roleSystem, role_user AS roleUser, role_assistant AS roleAssistant,
    role_tool AS roleTool, role_other AS roleOther, tool_results AS toolResults, reasoning_blocks AS reasoningBlocks`;
  const rowCols = `id, capture_key AS captureKey, capture_id AS captureId, stage, seq, attempt, mode,
    session_id AS sessionId, agent, agent_id AS agentId, conversation_id AS conversationId, run_id AS runId,
    iteration, project, model, provider, ts_ms AS tsMs, payload_bytes AS payloadBytes,
    estimated_tokens AS estimatedTokens, message_count AS messageCount, message_bytes AS messageBytes,
    message_tokens AS messageTokens, role_system AS roleSystem, role_user AS roleUser,
    role_assistant AS roleAssistant, role_tool AS roleTool, role_other AS roleOther,
    tool_results AS toolResults, reasoning_blocks AS reasoningBlocks`;
  const rowOrder = "ORDER BY session_id, agent_id, run_id, iteration, ts_ms, stage, seq, id";
  return {
    insert: db.prepare(
      `INSERT INTO captures (capture_key, adapter, capture_id, stage, seq, attempt, mode, session_id, agent,
         agent_id, conversation_id, run_id, iteration, project, model, provider, ts_ms, payload_bytes,
         estimated_tokens, message_count, message_bytes, message_tokens, role_system, role_user, role_assistant,
         role_tool, role_other, tool_results, reasoning_blocks, payload_bucket, tokens_bucket, source_path,
         ingested_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (capture_key) DO NOTHING`,
    ),
    bumpBucket: db.prepare(
      `INSERT INTO capture_buckets (series_id, metric, bucket, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (series_id, metric, bucket) DO UPDATE SET count = count + 1`,
    ),
    series: db.prepare(
      `SELECT id, ${dims}, captures, retries, payload_bytes AS payloadBytes, payload_min AS payloadMin,
         payload_max AS payloadMax, estimated_tokens AS estimatedTokens, tokens_min AS tokensMin,
         tokens_max AS tokensMax, ${sums}, first_ms AS firstMs, updated_ms AS updatedMs,
         ${lastEvent} AS lastEventMs
       FROM capture_series ORDER BY id`,
    ),
    seriesBuckets: db.prepare(
      "SELECT series_id AS seriesId, metric, bucket, count FROM capture_buckets ORDER BY series_id, metric, bucket",
    ),
    delta: db.prepare(
      `SELECT ${dims}, COUNT(*) AS captures, SUM(attempt > 1) AS retries, SUM(payload_bytes) AS payloadBytes,
         MIN(payload_bytes) AS payloadMin, MAX(payload_bytes) AS payloadMax,
         SUM(estimated_tokens) AS estimatedTokens, MIN(estimated_tokens) AS tokensMin,
         MAX(estimated_tokens) AS tokensMax, SUM(message_count) AS messages, SUM(role_system) AS roleSystem,
         SUM(role_user) AS roleUser, SUM(role_assistant) AS roleAssistant, SUM(role_tool) AS roleTool,
         SUM(role_other) AS roleOther, SUM(tool_results) AS toolResults, SUM(reasoning_blocks) AS reasoningBlocks,
         MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs, MAX(ts_ms) AS lastEventMs
       FROM captures WHERE id > ? AND id <= ? GROUP BY ${CAPTURE_SERIES_KEY} ORDER BY MIN(id)`,
    ),
    deltaBuckets: db.prepare(
      `SELECT ${dims}, 'payload' AS metric, payload_bucket AS bucket, COUNT(*) AS count
       FROM captures WHERE id > ? AND id <= ? GROUP BY ${CAPTURE_SERIES_KEY}, payload_bucket
       UNION ALL
       SELECT ${dims}, 'tokens' AS metric, tokens_bucket AS bucket, COUNT(*) AS count
       FROM captures WHERE id > ? AND id <= ? GROUP BY ${CAPTURE_SERIES_KEY}, tokens_bucket`,
    ),
    maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS id FROM captures"),
    getWatermark: db.prepare("SELECT capture_watermark AS w FROM export_state WHERE exporter = ?"),
    putWatermark: db.prepare(
      `INSERT INTO export_state (exporter, window_start_ns, capture_watermark) VALUES (?, ?, ?)
       ON CONFLICT (exporter) DO UPDATE SET capture_watermark = excluded.capture_watermark`,
    ),
    rows: db.prepare(`SELECT ${rowCols} FROM captures ${rowOrder}`),
    rowsOfSession: db.prepare(`SELECT ${rowCols} FROM captures WHERE session_id = ? ${rowOrder}`),
    checkpointPaths: db.prepare("SELECT path FROM checkpoints WHERE adapter = ?").pluck(),
    deleteCheckpoint: db.prepare("DELETE FROM checkpoints WHERE path = ? AND adapter = ?"),
  };
}

export type GroupDim = "day" | "model" | "provider" | "project" | "session" | "agent" | "tool";

const DIM_SQL: Record<GroupDim, string> = {
  day: "strftime('%Y-%m-%d', ts_ms / 1000, 'unixepoch')",
  model: "model",
  provider: "provider",
  project: "project",
  session: "session_id",
  agent: "agent",
  tool: "tool_name",
};

type GroupKind = "events" | "calls" | "events-without-calls";

function groupSql(kind: GroupKind, dims: readonly GroupDim[]): string {
  const cols = dims.map((d) => `${DIM_SQL[d]} AS "${d}"`);
  const group = dims.length > 0 ? `GROUP BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const order = dims.length > 0 ? `ORDER BY ${dims.map((_, i) => i + 1).join(", ")}` : "";
  const sel = (xs: string[]) => [...cols, ...xs].join(", ");
  if (kind === "events-without-calls" && dims.includes("tool")) {
    throw new Error("events without calls have no tool dimension");
  }
  if (kind !== "calls") {
    const where = kind === "events-without-calls" ? "WHERE tool_calls = 0" : "";
    return `SELECT ${sel([
      "IFNULL(SUM(input), 0) AS input",
      "IFNULL(SUM(output), 0) AS output",
      "IFNULL(SUM(cache_read), 0) AS cacheRead",
      "IFNULL(SUM(cache_write), 0) AS cacheWrite",
      "COUNT(*) AS events",
    ])} FROM events ${where} ${group} ${order}`;
  }
  return `SELECT ${sel([
    "IFNULL(SUM(share_input), 0) AS input",
    "IFNULL(SUM(share_output), 0) AS output",
    "IFNULL(SUM(share_cache_read), 0) AS cacheRead",
    "IFNULL(SUM(share_cache_write), 0) AS cacheWrite",
    "COUNT(DISTINCT NULLIF(usage_key, '')) AS events",
    "COUNT(*) AS toolCalls",
  ])} FROM tool_calls ${group} ${order}`;
}

function prepare(db: Database.Database, eventTimes: boolean) {
  const seriesCols = `session_id AS sessionId, agent, project, model, provider`;
  const lastEvent = lastEventColumn(eventTimes);
  return {
    getCheckpoint: db.prepare("SELECT path, size, mtime_ns, ino, dev FROM checkpoints WHERE path = ?"),
    allCheckpoints: db.prepare("SELECT path, size, mtime_ns, ino, dev FROM checkpoints"),
    putCheckpoint: db.prepare(
      `INSERT INTO checkpoints (path, adapter, size, mtime_ns, ino, dev, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (path) DO UPDATE SET adapter = excluded.adapter, size = excluded.size, mtime_ns = excluded.mtime_ns,
         ino = excluded.ino, dev = excluded.dev, updated_ms = excluded.updated_ms`,
    ),
    insertEvent: db.prepare(
      `INSERT INTO events (dedup_key, adapter, session_id, agent, message_id, ts_ms, model, provider, project,
         input, output, cache_read, cache_write, total, cache_branch, recorded_cost, tool_calls, source_path, ingested_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (dedup_key) DO NOTHING`,
    ),
    getEventComponents: db.prepare(
      "SELECT input, output, cache_read AS cacheRead, cache_write AS cacheWrite FROM events WHERE dedup_key = ?",
    ),
    insertCall: db.prepare(
      `INSERT INTO tool_calls (call_key, usage_key, session_id, agent, tool_name, ts_ms, divisor, model, provider,
         project, share_input, share_output, share_cache_read, share_cache_write, source_path, ingested_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (call_key) DO NOTHING`,
    ),
    usageSeries: db.prepare(
      `SELECT ${seriesCols}, input, output, cache_read AS cacheRead, cache_write AS cacheWrite, events,
         first_ms AS firstMs, updated_ms AS updatedMs, ${lastEvent} AS lastEventMs FROM usage_series ORDER BY id`,
    ),
    toolSeries: db.prepare(
      `SELECT ${seriesCols}, tool_name AS toolName, usage_known AS usageKnown, calls, input, output,
         cache_read AS cacheRead, cache_write AS cacheWrite, first_ms AS firstMs, updated_ms AS updatedMs,
         ${lastEvent} AS lastEventMs
       FROM tool_series ORDER BY id`,
    ),
    usageDelta: db.prepare(
      `SELECT ${seriesCols}, SUM(input) AS input, SUM(output) AS output, SUM(cache_read) AS cacheRead,
         SUM(cache_write) AS cacheWrite, COUNT(*) AS events, MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs,
         MAX(ts_ms) AS lastEventMs
       FROM events WHERE id > ? AND id <= ? GROUP BY ${SERIES_KEY} ORDER BY MIN(id)`,
    ),
    toolDelta: db.prepare(
      `SELECT ${seriesCols}, tool_name AS toolName, usage_key != '' AS usageKnown, COUNT(*) AS calls,
         SUM(share_input) AS input, SUM(share_output) AS output, SUM(share_cache_read) AS cacheRead,
         SUM(share_cache_write) AS cacheWrite, MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs,
         MAX(ts_ms) AS lastEventMs
       FROM tool_calls WHERE id > ? AND id <= ? GROUP BY ${SERIES_KEY}, tool_name, usage_key != '' ORDER BY MIN(id)`,
    ),
    maxIds: db.prepare(
      "SELECT (SELECT IFNULL(MAX(id), 0) FROM events) AS event, (SELECT IFNULL(MAX(id), 0) FROM tool_calls) AS call",
    ),
    getExportState: db.prepare(
      "SELECT event_watermark, call_watermark, window_start_ns, last_success_ms FROM export_state WHERE exporter = ?",
    ),
    putExportState: db.prepare(
      `INSERT INTO export_state (exporter, event_watermark, call_watermark, window_start_ns, last_success_ms)
       VALUES (?, ?, ?, ?, ?) ON CONFLICT (exporter) DO UPDATE SET event_watermark = excluded.event_watermark,
         call_watermark = excluded.call_watermark, window_start_ns = excluded.window_start_ns,
         last_success_ms = excluded.last_success_ms`,
    ),
    allEvents: db.prepare("SELECT * FROM events ORDER BY id"),
    counts: db.prepare(
      `SELECT (SELECT COUNT(*) FROM events) AS events, (SELECT COUNT(*) FROM tool_calls) AS calls,
         (SELECT COUNT(*) FROM checkpoints) AS sources`,
    ),
  };
}

/** Schema version from which the series carry `last_event_ms`. */
const EVENT_TIMES_VERSION = 3;

/**
 * `last_event_ms`, or for a read-only view of an older ledger (nothing exports from it) the
 * ingestion time, which is what the series TTL used before event times were kept.
 */
function lastEventColumn(eventTimes: boolean): string {
  return eventTimes ? "last_event_ms" : "updated_ms";
}

/** The series upserts: running totals in the same transaction as the rows they sum. */
function prepareSeriesWrites(db: Database.Database) {
  return {
    usage: db.prepare(
      `INSERT INTO usage_series (${SERIES_KEY}, input, output, cache_read, cache_write, events, first_ms, updated_ms,
         last_event_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${SERIES_KEY}) DO UPDATE SET input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         events = events + excluded.events, updated_ms = excluded.updated_ms,
         last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
    tool: db.prepare(
      `INSERT INTO tool_series (${SERIES_KEY}, tool_name, usage_known, calls, input, output, cache_read, cache_write,
         first_ms, updated_ms, last_event_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${SERIES_KEY}, tool_name, usage_known) DO UPDATE SET calls = calls + excluded.calls,
         input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         updated_ms = excluded.updated_ms, last_event_ms = max(last_event_ms, excluded.last_event_ms)`,
    ),
    capture: db.prepare(
      `INSERT INTO capture_series (${CAPTURE_SERIES_KEY}, captures, retries, payload_bytes, payload_min,
         payload_max, estimated_tokens, tokens_min, tokens_max, messages, role_system, role_user, role_assistant,
         role_tool, role_other, tool_results, reasoning_blocks, first_ms, updated_ms, last_event_ms)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${CAPTURE_SERIES_KEY}) DO UPDATE SET captures = captures + 1,
         retries = retries + excluded.retries,
         payload_bytes = payload_bytes + excluded.payload_bytes,
         payload_min = min(payload_min, excluded.payload_min), payload_max = max(payload_max, excluded.payload_max),
         estimated_tokens = estimated_tokens + excluded.estimated_tokens,
         tokens_min = min(tokens_min, excluded.tokens_min), tokens_max = max(tokens_max, excluded.tokens_max),
         messages = messages + excluded.messages, role_system = role_system + excluded.role_system,
         role_user = role_user + excluded.role_user, role_assistant = role_assistant + excluded.role_assistant,
         role_tool = role_tool + excluded.role_tool, role_other = role_other + excluded.role_other,
         tool_results = tool_results + excluded.tool_results,
         reasoning_blocks = reasoning_blocks + excluded.reasoning_blocks, updated_ms = excluded.updated_ms,
         last_event_ms = max(last_event_ms, excluded.last_event_ms)
       RETURNING id`,
    ),
  };
}

function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // A state dir we own is private: it holds project paths and session ids.
    if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  } catch (e) {
    throw new LedgerError(
      `cannot use state dir ${dir}: ${(e as Error).message} (set --state-dir or CLINE_OTEL_STATE_DIR)`,
      "io",
    );
  }
}

/**
 * Single-writer lock: an exclusive SQLite lock on a side file, held for the life of the
 * process. The OS drops it when the process dies, so a crash never leaves a stale lock.
 */
function acquireLock(stateDir: string): Database.Database {
  const lockPath = join(stateDir, LOCK_FILE);
  if (!existsSync(lockPath)) closeSync(openSync(lockPath, "a", 0o600));
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma("journal_mode = DELETE");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder;");
    db.prepare("INSERT INTO holder (pid) VALUES (?)").run(process.pid);
  } catch (e) {
    db.close();
    const code = (e as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      const pid = readHolderPid(stateDir);
      throw new LedgerError(
        `another cline-otel process${pid ? ` (pid ${pid})` : ""} is using the ledger in ${stateDir}; stop it, or give this one its own --state-dir`,
        "locked",
      );
    }
    throw new LedgerError(`cannot lock ${lockPath}: ${(e as Error).message}`, "io");
  }
  writeFileSync(join(stateDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  return db;
}

/** The pid file is informational only (the lock is the SQLite lock); a missing one is fine. */
export function readHolderPid(stateDir: string): number | undefined {
  const p = join(stateDir, PID_FILE);
  if (!existsSync(p)) return undefined;
  const n = Number.parseInt(readFileSync(p, "utf8").trim(), 10);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function openDb(path: string, readOnly: boolean): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: readOnly, fileMustExist: readOnly, timeout: 5000 });
    if (!readOnly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    }
    const check = db.pragma("quick_check", { simple: true });
    if (check !== "ok") throw Object.assign(new Error(String(check)), { code: "SQLITE_CORRUPT" });
    return db;
  } catch (e) {
    db?.close();
    const code = (e as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
      throw new LedgerError(
        `the ledger ${path} is corrupt (${(e as Error).message}); it was left untouched. Move it aside (mv ${path} ${path}.corrupt) to start a new ledger, which re-reads all Cline history`,
        "corrupt",
      );
    }
    if (code.startsWith("SQLITE_BUSY")) {
      throw new LedgerError(`the ledger ${path} is busy; another cline-otel is writing it`, "locked");
    }
    throw new LedgerError(`cannot open the ledger ${path}: ${(e as Error).message}`, "io");
  }
}

function migrate(db: Database.Database, path: string, now: () => number): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new LedgerError(
      `the ledger ${path} has schema version ${version}, newer than this cline-otel understands (${SCHEMA_VERSION}); upgrade cline-otel`,
      "too-new",
    );
  }
  const steps = db.transaction(() => {
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v] as string);
    if (version === 0) {
      const ms = now();
      const put = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
      put.run("instance_id", randomUUID());
      put.run("created_ms", String(ms));
      // Persisted so a restarted process continues the same cumulative streams.
      put.run("stream_start_ns", (BigInt(ms) * 1_000_000n).toString());
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  if (version < SCHEMA_VERSION) steps();
}

interface SeriesSum {
  readonly key: (string | number)[];
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  n: number;
  lastEventMs: number;
}

/** Per-commit running sums of the rows added, by series key. */
class SeriesSums {
  readonly usage = new Map<string, SeriesSum>();
  readonly tool = new Map<string, SeriesSum>();

  add(
    kind: "usage" | "tool",
    key: (string | number)[],
    c: readonly [number, number, number, number],
    ts: number,
  ): void {
    const map = this[kind];
    const id = key.join("\u0000");
    const cur = map.get(id);
    if (cur === undefined) {
      map.set(id, {
        key,
        input: c[0],
        output: c[1],
        cacheRead: c[2],
        cacheWrite: c[3],
        n: 1,
        lastEventMs: ts,
      });
      return;
    }
    cur.input += c[0];
    cur.output += c[1];
    cur.cacheRead += c[2];
    cur.cacheWrite += c[3];
    cur.n += 1;
    if (ts > cur.lastEventMs) cur.lastEventMs = ts;
  }
}
