/**
 * The report rollup's write side (table: tables/report-rollup-v3.ts): the events and tool calls
 * a commit transaction inserts, summed per rollup key in memory and written once per key at the
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
}

/** The 15-minute UTC bucket of a message time, as SQLite's integer division computes it. */
export function rollupBucket(tsMs: number): number {
  return Math.trunc(tsMs / ROLLUP_BUCKET_MS) * ROLLUP_BUCKET_MS;
}

/** Per-transaction sums by rollup key; `write` upserts them (call inside the transaction, last). */
export class RollupSums {
  private cells = new Map<string, RollupCell>();
  private readonly upsert: Database.Statement;

  constructor(db: Database.Database) {
    this.upsert = db.prepare(
      `INSERT INTO report_rollup (bucket_ms, agent, model, provider, project, client, no_calls, input, output,
         cache_read, cache_write, events, tool_calls)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (bucket_ms, agent, model, provider, project, client, no_calls) DO UPDATE SET
         input = input + excluded.input, output = output + excluded.output,
         cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
         events = events + excluded.events, tool_calls = tool_calls + excluded.tool_calls`,
    );
  }

  /** Forgets what a failed transaction summed (its rows were rolled back). */
  reset(): void {
    this.cells = new Map();
  }

  private cell(tsMs: number, d: RollupDims, noCalls: 0 | 1): RollupCell | undefined {
    // A negative time stays out of the rollup: the report reads it from the events (the edges).
    if (!(tsMs >= 0)) return undefined;
    const bucketMs = rollupBucket(tsMs);
    const client = d.client ?? "";
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
      };
      this.cells.set(id, c);
    }
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
      );
    this.cells = new Map();
  }
}
