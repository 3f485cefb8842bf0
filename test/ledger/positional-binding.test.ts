/**
 * The backfill's per-row statements bind by position (src/ledger/usage/ingest.ts and the others
 * docs/performance.md "The cold backfill's per-row cost" lists): a value bound one place off lands in
 * the wrong column without any error when the types agree. One commit whose every field is distinct
 * (each string names its field, each number is its own) must store each field in its own column:
 * events, a final call (with its record), an open call and its signal_calls row, the usage and tool
 * series, the report rollup, activity (active time, a commit, a session start) and its series and
 * stream, the checkpoint, the signal document and turn.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Observation, Source } from "../../src/adapter/types.ts";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { rollupBucket } from "../../src/ledger/rollups/rollup.ts";
import { timelines } from "../helpers/active-time.ts";
import { call, event, result } from "../helpers/events.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "positional-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const NOW = 1_796_100_000_000;
const T = 1_796_000_000_000;
const PATH = "/s/sess/doc.messages.json";
const SOURCE: Source = { adapterId: "adapterX", path: PATH, origin: "walk", hint: {} };
const dims = {
  sessionId: "sess",
  agent: "agentX",
  model: "modelX",
  provider: "providerX",
  project: "/projX",
};

function rows(db: Database.Database, sql: string): Record<string, unknown>[] {
  return db.prepare(sql).all() as Record<string, unknown>[];
}

it("every positional INSERT stores each field in its own column", () => {
  const paid = event("msg1", {
    ...dims,
    dedupKey: "dedupX",
    timestampMs: T + 1000,
    input: 101,
    output: 11,
    cacheRead: 51,
    cacheWrite: 6,
    cacheBranch: "additive",
    recordedCost: 0.25,
    toolCallCount: 2,
    sourcePath: PATH,
    client: "clientX",
    turnId: "turnX",
    startMs: T + 500,
    endApproximate: true,
  });
  const final = call("toolu_final", "dedupX", 2, {
    ...dims,
    toolName: "toolF",
    timestampMs: T + 1100,
    sourcePath: PATH,
    client: "clientX",
    messageId: "msg1",
    toolUseId: "toolUseF",
    turnId: "turnX",
  });
  const open = call("toolu_open", "dedupX", 2, {
    ...dims,
    toolName: "toolO",
    timestampMs: T + 1200,
    sourcePath: PATH,
    client: "clientX",
    messageId: "msg1",
    toolUseId: "toolUseO",
    turnId: "turnX",
  });
  const obs: Extract<Observation, { status: "read" }> = {
    status: "read",
    source: SOURCE,
    checkpoint: { path: PATH, size: 4321, mtimeNs: "987654321", ino: 77, dev: 88 },
    events: [paid],
    toolCalls: [final, open],
    problems: [],
    signals: {
      sessionId: "sess",
      rootSessionId: "rootX",
      agent: "agentX",
      lastTsMs: T + 9000,
      toolResults: [result(final, true, 300)],
      turns: [
        {
          turnKey: "turnKeyX",
          turnId: "turnX",
          sessionId: "sess",
          rootSessionId: "rootX",
          agent: "agentX",
          project: "/projX",
          startMs: T + 400,
          endMs: T + 8000,
          closed: false,
          sourcePath: PATH,
        },
      ],
    },
    activeTime: timelines([
      {
        ...dims,
        streamKey: "streamX",
        type: "agent",
        startMs: T + 2000,
        durationMs: 3333,
        sourcePath: PATH,
        client: "clientX",
      },
    ]),
    deliveries: [
      {
        ...dims,
        deliveryKey: "deliveryX",
        callKey: final.callKey,
        kind: "commit",
        toolName: "toolF",
        timestampMs: T + 3000,
        sourcePath: PATH,
        client: "clientX",
      },
    ],
    sessionStarts: [
      {
        ...dims,
        startKey: "startX",
        startType: "resumed",
        timestampMs: T + 100,
        sourcePath: PATH,
        client: "clientX",
      },
    ],
  };
  const l = Ledger.open(dir, { now: () => NOW });
  l.commit(obs);
  // The series of edits and activity are folded from their records (schema v7): their INSERT ... SELECT too.
  expect(l.foldSeries()).toBeGreaterThan(0);
  l.close();

  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    expect(rows(db, "SELECT * FROM events")).toEqual([
      expect.objectContaining({
        dedup_key: "dedupX",
        adapter: "adapterX",
        session_id: "sess",
        agent: "agentX",
        message_id: "msg1",
        ts_ms: T + 1000,
        model: "modelX",
        provider: "providerX",
        project: "/projX",
        input: 101,
        output: 11,
        cache_read: 51,
        cache_write: 6,
        total: 169,
        cache_branch: "additive",
        recorded_cost: 0.25,
        tool_calls: 2,
        source_path: PATH,
        ingested_ms: NOW,
        signal_seq: expect.any(Number),
        turn_key: "turnKeyX",
        start_ms: T + 500,
        client: "clientX",
        end_known: 0,
      }),
    ]);
    const share = { share_input: 50.5, share_output: 5.5, share_cache_read: 25.5, share_cache_write: 3 };
    const callCommon = {
      usage_key: "dedupX",
      session_id: "sess",
      agent: "agentX",
      divisor: 2,
      model: "modelX",
      provider: "providerX",
      project: "/projX",
      ...share,
      source_path: PATH,
      ingested_ms: NOW,
      first_known: 1,
      client: "clientX",
    };
    expect(rows(db, "SELECT * FROM tool_calls ORDER BY ts_ms")).toEqual([
      expect.objectContaining({
        ...callCommon,
        call_key: final.callKey,
        tool_name: "toolF",
        ts_ms: T + 1100,
        signal_seq: expect.any(Number),
        end_ms: T + 1400,
        outcome: "failure",
        cancelled: 0,
        // A paid call's message and turn are its request's (NULL here).
        turn_key: null,
        message_id: null,
        tool_use_id: "toolUseF",
      }),
      expect.objectContaining({
        ...callCommon,
        call_key: open.callKey,
        tool_name: "toolO",
        ts_ms: T + 1200,
        signal_seq: null,
        end_ms: null,
        outcome: null,
      }),
    ]);
    expect(rows(db, "SELECT * FROM signal_calls")).toEqual([
      {
        call_key: open.callKey,
        message_id: "msg1",
        tool_use_id: "toolUseO",
        turn_key: "turnKeyX",
        source_path: PATH,
        final: 0,
      },
    ]);
    expect(rows(db, "SELECT * FROM signal_documents")).toEqual([
      {
        source_path: PATH,
        root_session_id: "rootX",
        session_id: "sess",
        agent: "agentX",
        last_ts_ms: T + 9000,
      },
    ]);
    expect(rows(db, "SELECT * FROM signal_turns")).toEqual([
      {
        turn_key: "turnKeyX",
        root_session_id: "rootX",
        session_id: "sess",
        agent: "agentX",
        turn_id: "turnX",
        project: "/projX",
        start_ms: T + 400,
        end_ms: T + 8000,
        closed: 0,
        source_path: PATH,
        final: 0,
      },
    ]);
    const seriesKey = {
      session_id: "sess",
      agent: "agentX",
      project: "/projX",
      model: "modelX",
      provider: "providerX",
      client: "clientX",
    };
    expect(rows(db, "SELECT * FROM usage_series")).toEqual([
      expect.objectContaining({
        ...seriesKey,
        input: 101,
        output: 11,
        cache_read: 51,
        cache_write: 6,
        events: 1,
        first_ms: NOW,
        updated_ms: NOW,
        last_event_ms: T + 1000,
      }),
    ]);
    expect(rows(db, "SELECT * FROM tool_series ORDER BY tool_name")).toEqual(
      [
        ["toolF", T + 1100],
        ["toolO", T + 1200],
      ].map(([tool, ts]) =>
        expect.objectContaining({
          ...seriesKey,
          tool_name: tool,
          usage_known: 1,
          calls: 1,
          input: 50.5,
          output: 5.5,
          cache_read: 25.5,
          cache_write: 3,
          first_ms: NOW,
          updated_ms: NOW,
          last_event_ms: ts,
        }),
      ),
    );
    expect(rows(db, "SELECT * FROM report_rollup")).toEqual([
      {
        bucket_ms: rollupBucket(T + 1000),
        agent: "agentX",
        model: "modelX",
        provider: "providerX",
        project: "/projX",
        client: "clientX",
        no_calls: 0,
        input: 101,
        output: 11,
        cache_read: 51,
        cache_write: 6,
        events: 1,
        tool_calls: 2,
        // What Cline delivered (v4): this commit's active time and commit, no edit.
        lines_added: 0,
        lines_removed: 0,
        edits_accepted: 0,
        edits_rejected: 0,
        edits_failed: 0,
        active_user_ms: 0,
        active_agent_ms: 3333,
        commits: 1,
        pull_requests: 0,
        activity: 2,
      },
    ]);
    const activityCommon = {
      adapter: "adapterX",
      session_id: "sess",
      agent: "agentX",
      model: "modelX",
      provider: "providerX",
      project: "/projX",
      client: "clientX",
      source_path: PATH,
      ingested_ms: NOW,
    };
    expect(rows(db, "SELECT * FROM activity ORDER BY ts_ms")).toEqual([
      expect.objectContaining({
        ...activityCommon,
        activity_key: "startX",
        kind: "session",
        detail: "resumed",
        amount: 1,
        ts_ms: T + 100,
      }),
      expect.objectContaining({
        ...activityCommon,
        activity_key: `streamX|agent|${T + 2000}`,
        kind: "active_time",
        detail: "agent",
        amount: 3333,
        ts_ms: T + 2000,
      }),
      expect.objectContaining({
        ...activityCommon,
        activity_key: "deliveryX",
        kind: "commit",
        detail: "",
        amount: 1,
        ts_ms: T + 3000,
      }),
    ]);
    expect(rows(db, "SELECT * FROM activity_series ORDER BY last_event_ms")).toEqual(
      [
        ["session", "resumed", 1, T + 100],
        ["active_time", "agent", 3333, T + 2000],
        ["commit", "", 1, T + 3000],
      ].map(([kind, detail, amount, ts]) =>
        expect.objectContaining({
          ...seriesKey,
          kind,
          detail,
          amount,
          records: 1,
          first_ms: NOW,
          updated_ms: NOW,
          last_event_ms: ts,
        }),
      ),
    );
    expect(rows(db, "SELECT * FROM activity_streams")).toEqual([
      { stream_key: "streamX", covered_ms: T + 2000 + 3333 },
    ]);
    expect(rows(db, "SELECT * FROM checkpoints")).toEqual([
      {
        path: PATH,
        adapter: "adapterX",
        size: 4321,
        mtime_ns: "987654321",
        ino: 77,
        dev: 88,
        updated_ms: NOW,
      },
    ]);
  } finally {
    db.close();
  }
});

it("a call committed without signals (its INSERT without record columns) stores each field in its own column", () => {
  const paid = event("msg1", {
    ...dims,
    dedupKey: "dedupX",
    input: 101,
    output: 11,
    cacheRead: 51,
    cacheWrite: 6,
  });
  const plain = call("toolu_plain", "dedupX", 2, {
    ...dims,
    toolName: "toolP",
    timestampMs: T + 1300,
    sourcePath: PATH,
    client: "clientX",
  });
  const l = Ledger.open(dir, { now: () => NOW });
  l.commit({
    status: "read",
    source: SOURCE,
    checkpoint: { path: PATH, size: 1, mtimeNs: "1", ino: 1, dev: 1 },
    events: [paid],
    toolCalls: [plain],
    problems: [],
  });
  l.close();
  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    expect(rows(db, "SELECT * FROM tool_calls")).toEqual([
      expect.objectContaining({
        call_key: plain.callKey,
        usage_key: "dedupX",
        session_id: "sess",
        agent: "agentX",
        tool_name: "toolP",
        ts_ms: T + 1300,
        divisor: 2,
        model: "modelX",
        provider: "providerX",
        project: "/projX",
        share_input: 50.5,
        share_output: 5.5,
        share_cache_read: 25.5,
        share_cache_write: 3,
        source_path: PATH,
        ingested_ms: NOW,
        first_known: 1,
        client: "clientX",
        signal_seq: null,
        tool_use_id: null,
      }),
    ]);
    // Without signals the events row has no record either.
    expect(rows(db, "SELECT signal_seq, turn_key, start_ms, end_known FROM events")).toEqual([
      { signal_seq: null, turn_key: null, start_ms: null, end_known: 1 },
    ]);
  } finally {
    db.close();
  }
});
