/**
 * The report rollup's write side (tables: tables/report-rollup-v3.ts, -delivered-v4.ts): the events,
 * tool calls, edits and activity rows a commit transaction inserts, summed per rollup key in memory and written once per key at the
 * transaction's end, in it (Ingest), so the rollup never disagrees with the rows it sums.
 */
import type Database from "better-sqlite3";
import { ROLLUP_BUCKET_MS } from "../tables/report-rollup-v3.ts";

/** The dimensions of a rolled-up row (an event's or a tool call's; client '' when not said). */
export interface RollupDims {
  readonly agent: string;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly client?: string | undefined;
}

interface RollupCell {
  readonly bucketMs: number;
  readonly agent: string;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly client: string;
  readonly noCalls: 0 | 1;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  events: number;
  toolCalls: number;
  // What Cline delivered (tables/report-rollup-delivered-v4.ts).
  linesAdded: number;
  linesRemoved: number;
  editsAccepted: number;
  editsRejected: number;
  editsFailed: number;
  activeUserMs: number;
  activeAgentMs: number;
  commits: number;
  pullRequests: number;
  activity: number;
}

/** The 15-minute UTC bucket of a message time, as SQLite's integer division computes it. */
export function rollupBucket(tsMs: number): number {
  return Math.trunc(tsMs / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
}

/** Per-transaction sums by rollup key; `write` upserts them (call inside the transaction, last). */
export class RollupSums {
  private cells = new Map<string, RollupCell>();
  /** The cell `cell` returned last (a member of `cells`), undefined after a reset or write. */
  private last: RollupCell | undefined;
  private readonly upsert: Database.Statement;

  constructor(db: Database.Database) {
    this.upsert = db.prepare(
      `INSERT INTO report_rollup (bucket_ms, agent, model, provider, project, client, no_calls, input, output,
         cache_read, cache_write, events, tool_calls, lines_added, lines_removed, edits_accepted, edits_rejected,
         edits_failed, active_user_ms, active_agent_ms, commits, pull_requests, activity)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (bucket_ms, agent, model, provider, project, client, no_calls) DO UPDATE SET
         input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         events = events + excluded.events, tool_calls = tool_calls + excluded.tool_calls,
         lines_added = lines_added + excluded.lines_added, lines_removed = lines_removed + excluded.lines_removed,
         edits_accepted = edits_accepted + excluded.edits_accepted,
         edits_rejected = edits_rejected + excluded.edits_rejected, edits_failed = edits_failed + excluded.edits_failed,
         active_user_ms = active_user_ms + excluded.active_user_ms,
         active_agent_ms = active_agent_ms + excluded.active_agent_ms, commits = commits + excluded.commits,
         pull_requests = pull_requests + excluded.pull_requests, activity = activity + excluded.activity`,
    );
  }

  /** Forgets what a failed transaction summed (its rows were rolled back). */
  reset(): void {
    this.cells = new Map();
    this.last = undefined;
  }

  private cell(tsMs: number, d: RollupDims, noCalls: 0 | 1): RollupCell | undefined {
    // A negative time stays out of the rollup: the report reads it from the events (the edges).
    if (!(tsMs >= 0)) return undefined;
    const bucketMs = rollupBucket(tsMs);
    const client = d.client ?? "";
    // A document's rows mostly fall in the cell of the row before them: no key string for those.
    const last = this.last;
    if (
      last !== undefined &&
      last.bucketMs === bucketMs &&
      last.noCalls === noCalls &&
      last.agent === d.agent &&
      last.model === d.model &&
      last.provider === d.provider &&
      last.project === d.project &&
      last.client === client
    )
      return last;
    const id = `${bucketMs}\u0000${d.agent}\u0000${d.model}\u0000${d.provider}\u0000${d.project}\u0000${client}\u0000${noCalls}`;
    let c = this.cells.get(id);
    if (c === undefined) {
      c = {
        bucketMs,
        agent: d.agent,
        model: d.model,
        provider: d.provider,
        project: d.project,
        client,
        noCalls,
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        events: 0,
        toolCalls: 0,
        linesAdded: 0,
        linesRemoved: 0,
        editsAccepted: 0,
        editsRejected: 0,
        editsFailed: 0,
        activeUserMs: 0,
        activeAgentMs: 0,
        commits: 0,
        pullRequests: 0,
        activity: 0,
      };
      this.cells.set(id, c);
    }
    this.last = c;
    return c;
  }

  /** An event just inserted. */
  addEvent(
    e: RollupDims & {
      readonly timestampMs: number;
      readonly input: number;
      readonly output: number;
      readonly cacheRead: number;
      readonly cacheWrite: number;
      readonly toolCallCount: number;
    },
  ): void {
    const c = this.cell(e.timestampMs, e, e.toolCallCount === 0 ? 1 : 0);
    if (c === undefined) return;
    c.input += e.input;
    c.output += e.output;
    c.cacheRead += e.cacheRead;
    c.cacheWrite += e.cacheWrite;
    c.events++;
  }

  /** A tool call just inserted (its token shares are not rolled up: a per-tool report groups the calls). */
  addCall(c: RollupDims & { readonly timestampMs: number }): void {
    const cell = this.cell(c.timestampMs, c, 0);
    if (cell !== undefined) cell.toolCalls++;
  }

  /** An edit just inserted: its lines when accepted, its decision. */
  addEdit(
    e: RollupDims & {
      readonly timestampMs: number;
      readonly decision: "accepted" | "rejected" | "failed";
      readonly linesAdded: number;
      readonly linesRemoved: number;
    },
  ): void {
    const c = this.cell(e.timestampMs, e, 0);
    if (c === undefined) return;
    if (e.decision === "accepted") {
      c.linesAdded += e.linesAdded;
      c.linesRemoved += e.linesRemoved;
      c.editsAccepted++;
    } else if (e.decision === "rejected") c.editsRejected++;
    else c.editsFailed++;
  }

  /** An activity row just inserted (a session start is no report column: not rolled up). */
  addActivity(
    r: RollupDims & {
      readonly tsMs: number;
      readonly kind: string;
      readonly detail: string;
      readonly amount: number;
    },
  ): void {
    if (r.kind !== "active_time" && r.kind !== "commit" && r.kind !== "pull_request") return;
    const c = this.cell(r.tsMs, r, 0);
    if (c === undefined) return;
    c.activity++;
    if (r.kind === "commit") c.commits += 1;
    else if (r.kind === "pull_request") c.pullRequests += 1;
    else if (r.detail === "user") c.activeUserMs += r.amount;
    else if (r.detail === "agent") c.activeAgentMs += r.amount;
  }

  /** Upserts every key summed since `reset`, then forgets them. */
  write(): void {
    // By position, in the INSERT's column order (a key per quarter hour of a backfill's history: as
    // many as its requests when they are spread thin; docs/performance.md, "The cold backfill's per-row cost").
    for (const c of this.cells.values())
      this.upsert.run(
        c.bucketMs,
        c.agent,
        c.model,
        c.provider,
        c.project,
        c.client,
        c.noCalls,
        c.input,
        c.output,
        c.cacheRead,
        c.cacheWrite,
        c.events,
        c.toolCalls,
        c.linesAdded,
        c.linesRemoved,
        c.editsAccepted,
        c.editsRejected,
        c.editsFailed,
        c.activeUserMs,
        c.activeAgentMs,
        c.commits,
        c.pullRequests,
        c.activity,
      );
    this.cells = new Map();
    this.last = undefined;
  }
}
