import type Database from "better-sqlite3";
import type { RequestCapture } from "../../adapter/types.ts";
import { bucketIndex, CAPTURE_PAYLOAD_BOUNDARIES, CAPTURE_TOKEN_BOUNDARIES } from "../schema.ts";
import { clientColumn, versionedStatements } from "../statements.ts";
import type { IdWindow } from "../usage/series.ts";

/** Schema version from which the ledger has the capture tables (the baseline). */
export const CAPTURES_VERSION = 1;

/** The flattened role columns and content counts, of one capture or summed over a series. */
export interface CaptureContentCounts {
  readonly roleSystem: number;
  readonly roleUser: number;
  readonly roleAssistant: number;
  readonly roleTool: number;
  readonly roleOther: number;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
}

/** One exported capture series (or its delta over a window). Buckets follow CAPTURE_*_BOUNDARIES. */
export interface CaptureSeriesRow extends CaptureContentCounts {
  readonly sessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  /** `cline.client` ('' for a series from before schema v2, or an adapter that does not say). */
  readonly client: string;
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
  /** Counts per bucket, length = boundaries + 1 (the last one is above the last bound). */
  readonly payloadBuckets: number[];
  readonly tokenBuckets: number[];
  readonly firstMs: number;
  readonly updatedMs: number;
  /** The newest capture `timestamp` (`ts_ms`) of the captures summed. */
  readonly lastEventMs: number;
}

/**
 * One capture as stored: the adapter's record with its roles flattened into columns, its
 * timestamp as `tsMs`, and no source path or purpose (src/report/captures.ts tells a
 * summarizer capture from its columns).
 */
export interface CaptureRow
  extends Omit<RequestCapture, "roles" | "timestampMs" | "sourcePath" | "purpose" | "client">,
    CaptureContentCounts {
  readonly id: number;
  readonly tsMs: number;
}

function emptyBuckets(boundaries: readonly number[]): number[] {
  return new Array<number>(boundaries.length + 1).fill(0);
}

const CAPTURE_SERIES_KEY = "session_id, agent, project, model, provider, stage, client";
/** The key as read: `client` as `clientColumn` says for the ledger's version. */
const readKey = (version: number) =>
  `session_id, agent, project, model, provider, stage, ${clientColumn(version)}`;
const dims = (version: number) =>
  `session_id AS sessionId, agent, project, model, provider, stage, ${clientColumn(version)} AS client`;

type SeriesBase = Omit<CaptureSeriesRow, "payloadBuckets" | "tokenBuckets">;

/**
 * Provider-request captures (tables/captures.ts): the rows, their running series with histogram
 * buckets, and the delta reads. A read-only view of a ledger from before captures has none.
 */
export class Captures {
  /** False only for a read-only view of a ledger older than CAPTURES_VERSION (none yet). */
  readonly present: boolean;
  private readonly st: ReturnType<typeof prepareReads> | undefined;
  private readonly writes: () => ReturnType<typeof prepareWrites>;

  constructor(db: Database.Database, version: number) {
    const s = versionedStatements(db, version, CAPTURES_VERSION, prepareReads, prepareWrites);
    this.st = s.reads;
    this.writes = s.writes;
    this.present = s.reads !== undefined;
  }

  /** Inserts one capture and adds it to its series (the caller's transaction). False: already stored. */
  insert(c: RequestCapture, adapter: string, nowMs: number): boolean {
    const st = this.writes();
    const payloadBucket = bucketIndex(c.payloadBytes, CAPTURE_PAYLOAD_BOUNDARIES);
    const tokensBucket = bucketIndex(c.estimatedTokens, CAPTURE_TOKEN_BOUNDARIES);
    const r = c.roles;
    // The adapter says what is a retry: attempt > 1, except a compaction summarizer's attempts.
    const retry = c.attempt > 1 && c.purpose !== "compaction-summarizer" ? 1 : 0;
    const row = {
      captureKey: c.captureKey,
      adapter,
      captureId: c.captureId,
      stage: c.stage,
      seq: c.seq,
      attempt: c.attempt,
      mode: c.mode,
      sessionId: c.sessionId,
      agent: c.agent,
      agentId: c.agentId,
      conversationId: c.conversationId,
      runId: c.runId,
      iteration: c.iteration,
      project: c.project,
      model: c.model,
      provider: c.provider,
      client: c.client ?? "",
      tsMs: c.timestampMs,
      payloadBytes: c.payloadBytes,
      estimatedTokens: c.estimatedTokens,
      messageCount: c.messageCount,
      messageBytes: c.messageBytes,
      messageTokens: c.messageTokens,
      roleSystem: r.system,
      roleUser: r.user,
      roleAssistant: r.assistant,
      roleTool: r.tool,
      roleOther: r.other,
      toolResults: c.toolResults,
      reasoningBlocks: c.reasoningBlocks,
      payloadBucket,
      tokensBucket,
      sourcePath: c.sourcePath,
      retry,
      nowMs,
    };
    if (st.insert.run(row).changes === 0) return false;
    const series = st.series.get(row) as { id: number };
    st.bumpBucket.run({ seriesId: series.id, metric: "payload", bucket: payloadBucket });
    st.bumpBucket.run({ seriesId: series.id, metric: "tokens", bucket: tokensBucket });
    return true;
  }

  /** Every capture series with its running totals and histogram buckets (cumulative export). */
  series(): CaptureSeriesRow[] {
    if (this.st === undefined) return [];
    const rows = this.st.series.all() as (SeriesBase & { id: number })[];
    const buckets = new Map<number, { payload: number[]; tokens: number[] }>();
    for (const b of this.st.seriesBuckets.iterate() as IterableIterator<{
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

  /** Capture series aggregated over the captures of one window (delta export). */
  delta(w: IdWindow): CaptureSeriesRow[] {
    if (this.st === undefined) return [];
    const keyOf = (r: Record<string, unknown>) =>
      JSON.stringify([r.sessionId, r.agent, r.project, r.model, r.provider, r.stage, r.client]);
    const params = { after: w.after, upTo: w.upTo };
    const rows = (this.st.delta.all(params) as SeriesBase[]).map((r) => ({
      ...r,
      payloadBuckets: emptyBuckets(CAPTURE_PAYLOAD_BOUNDARIES),
      tokenBuckets: emptyBuckets(CAPTURE_TOKEN_BOUNDARIES),
    }));
    const byKey = new Map(rows.map((r) => [keyOf(r), r]));
    for (const b of this.st.deltaBuckets.all(params) as (Record<string, unknown> & {
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
  maxId(): number {
    if (this.st === undefined) return 0;
    return (this.st.maxId.get() as { id: number }).id;
  }

  /** Capture rows for `report --captures`, in session / agent / run / iteration order. */
  rows(sessionId?: string): CaptureRow[] {
    if (this.st === undefined) return [];
    return (
      sessionId === undefined ? this.st.rows.all() : this.st.rowsOfSession.all({ sessionId })
    ) as CaptureRow[];
  }
}

function prepareReads(db: Database.Database, version: number) {
  const DIMS = dims(version);
  const KEY = readKey(version);
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
    series: db.prepare(
      `SELECT id, ${DIMS}, captures, retries, payload_bytes AS payloadBytes, payload_min AS payloadMin,
         payload_max AS payloadMax, estimated_tokens AS estimatedTokens, tokens_min AS tokensMin,
         tokens_max AS tokensMax, ${sums}, first_ms AS firstMs, updated_ms AS updatedMs,
         last_event_ms AS lastEventMs
       FROM capture_series ORDER BY id`,
    ),
    seriesBuckets: db.prepare(
      "SELECT series_id AS seriesId, metric, bucket, count FROM capture_buckets ORDER BY series_id, metric, bucket",
    ),
    delta: db.prepare(
      `SELECT ${DIMS}, COUNT(*) AS captures, SUM(retry) AS retries, SUM(payload_bytes) AS payloadBytes,
         MIN(payload_bytes) AS payloadMin, MAX(payload_bytes) AS payloadMax,
         SUM(estimated_tokens) AS estimatedTokens, MIN(estimated_tokens) AS tokensMin,
         MAX(estimated_tokens) AS tokensMax, SUM(message_count) AS messages, SUM(role_system) AS roleSystem,
         SUM(role_user) AS roleUser, SUM(role_assistant) AS roleAssistant, SUM(role_tool) AS roleTool,
         SUM(role_other) AS roleOther, SUM(tool_results) AS toolResults, SUM(reasoning_blocks) AS reasoningBlocks,
         MIN(ingested_ms) AS firstMs, MAX(ingested_ms) AS updatedMs, MAX(ts_ms) AS lastEventMs
       FROM captures WHERE id > @after AND id <= @upTo GROUP BY ${KEY} ORDER BY MIN(id)`,
    ),
    deltaBuckets: db.prepare(
      `SELECT ${DIMS}, 'payload' AS metric, payload_bucket AS bucket, COUNT(*) AS count
       FROM captures WHERE id > @after AND id <= @upTo GROUP BY ${KEY}, payload_bucket
       UNION ALL
       SELECT ${DIMS}, 'tokens' AS metric, tokens_bucket AS bucket, COUNT(*) AS count
       FROM captures WHERE id > @after AND id <= @upTo GROUP BY ${KEY}, tokens_bucket`,
    ),
    maxId: db.prepare("SELECT IFNULL(MAX(id), 0) AS id FROM captures"),
    rows: db.prepare(`SELECT ${rowCols} FROM captures ${rowOrder}`),
    rowsOfSession: db.prepare(`SELECT ${rowCols} FROM captures WHERE session_id = @sessionId ${rowOrder}`),
  };
}

/** Writes, prepared on the first insert: only a writable ledger (at this build's schema) writes. */
function prepareWrites(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO captures (capture_key, adapter, capture_id, stage, seq, attempt, mode, session_id, agent,
         agent_id, conversation_id, run_id, iteration, project, model, provider, ts_ms, payload_bytes,
         estimated_tokens, message_count, message_bytes, message_tokens, role_system, role_user, role_assistant,
         role_tool, role_other, tool_results, reasoning_blocks, payload_bucket, tokens_bucket, source_path,
         ingested_ms, retry, client)
       VALUES (@captureKey, @adapter, @captureId, @stage, @seq, @attempt, @mode, @sessionId, @agent, @agentId,
         @conversationId, @runId, @iteration, @project, @model, @provider, @tsMs, @payloadBytes,
         @estimatedTokens, @messageCount, @messageBytes, @messageTokens, @roleSystem, @roleUser, @roleAssistant,
         @roleTool, @roleOther, @toolResults, @reasoningBlocks, @payloadBucket, @tokensBucket, @sourcePath,
         @nowMs, @retry, @client)
       ON CONFLICT (capture_key) DO NOTHING`,
    ),
    bumpBucket: db.prepare(
      `INSERT INTO capture_buckets (series_id, metric, bucket, count) VALUES (@seriesId, @metric, @bucket, 1)
       ON CONFLICT (series_id, metric, bucket) DO UPDATE SET count = count + 1`,
    ),
    series: db.prepare(
      `INSERT INTO capture_series (${CAPTURE_SERIES_KEY}, captures, retries, payload_bytes, payload_min,
         payload_max, estimated_tokens, tokens_min, tokens_max, messages, role_system, role_user, role_assistant,
         role_tool, role_other, tool_results, reasoning_blocks, first_ms, updated_ms, last_event_ms)
       VALUES (@sessionId, @agent, @project, @model, @provider, @stage, @client, 1, @retry, @payloadBytes, @payloadBytes,
         @payloadBytes, @estimatedTokens, @estimatedTokens, @estimatedTokens, @messageCount, @roleSystem,
         @roleUser, @roleAssistant, @roleTool, @roleOther, @toolResults, @reasoningBlocks, @nowMs, @nowMs, @tsMs)
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
