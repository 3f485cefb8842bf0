import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LEDGER_FILE, Ledger } from "../../src/ledger/ledger.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import { ROOT } from "../helpers/cli.ts";
import { event, observation, SOURCE } from "../helpers/events.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "durable-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("ledger durability", () => {
  it("a first-version ledger migrates in place, keeping every event, total and checkpoint", () => {
    copyFileSync(join(ROOT, "fixtures/ledger/v1/ledger.sqlite"), join(dir, LEDGER_FILE));
    const l = Ledger.open(dir);
    expect(l.instanceId).toBe("0b6c5d1e-2f3a-4b5c-8d7e-9f0a1b2c3d4e");
    expect(l.streamStartNs).toBe(1_796_000_000_000_000_000n);
    expect(l.counts()).toEqual({ events: 2, calls: 0, sources: 1 });
    expect(l.usageSeries()[0]).toMatchObject({ input: 300, events: 2, lastEventMs: 1_796_000_000_000 });
    expect(l.getCheckpoint("/s/s1/s1.messages.json")).toMatchObject({ size: 1234, ino: 42 });
    // Still a working ledger: the old events dedup, new ones land.
    const r = l.commit(observation([event("m1", { dedupKey: "cline|s1|lead|m1" }), event("m3")]));
    expect(r.eventsAdded).toBe(1);
    l.close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it("a v2 ledger migrates in place: each series' last event time is backfilled from its rows", () => {
    buildV2Ledger(join(dir, LEDGER_FILE));
    const l = Ledger.open(dir);
    expect(l.instanceId).toBe("v2-instance");
    const usage = Object.fromEntries(l.usageSeries().map((r) => [r.sessionId, r]));
    // Event time (ts_ms), not ingestion time (5000): the newest of the rows each series sums.
    expect(usage.s1).toMatchObject({ input: 30, events: 2, updatedMs: 5000, lastEventMs: 300 });
    expect(usage.s2).toMatchObject({ input: 5, events: 1, updatedMs: 5000, lastEventMs: 50 });
    const tools = l.toolSeries().map((r) => [r.usageKnown, r.calls, r.lastEventMs]);
    expect(tools).toEqual([
      [true, 2, 310],
      [false, 1, 999],
    ]);
    const caps = l.captureSeries().map((r) => [r.stage, r.captures, r.payloadBytes, r.lastEventMs]);
    expect(caps).toEqual([
      ["ai_sdk_prompt", 2, 300, 700],
      ["wire_request", 1, 100, 10],
    ]);
    // Maintained by the upserts from now on: an older event never lowers it, a newer one raises it.
    const s1 = (ms: number) => ({ sessionId: "s1", project: "/w", timestampMs: ms });
    l.commit(observation([event("late-old", { ...s1(200), dedupKey: "k-old" })]));
    expect(l.usageSeries().find((r) => r.sessionId === "s1")?.lastEventMs).toBe(300);
    l.commit(observation([event("new", { ...s1(900), dedupKey: "k-new" })]));
    expect(l.usageSeries().find((r) => r.sessionId === "s1")).toMatchObject({ events: 4, lastEventMs: 900 });
    l.close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    // v4: each call is counted where it was first counted; the one without usage waits for it.
    expect(db.prepare("SELECT call_key, first_known FROM tool_calls ORDER BY id").all()).toEqual([
      { call_key: "c1", first_known: 1 },
      { call_key: "c2", first_known: 1 },
      { call_key: "c3", first_known: 0 },
    ]);
    db.close();
  });

  it("a read-only view of a v2 ledger (an older daemon still running it) opens and reads its series", () => {
    buildV2Ledger(join(dir, LEDGER_FILE));
    const ro = Ledger.open(dir, { readOnly: true });
    // No event times in that schema: the ingestion time stands in (nothing exports from a view).
    expect(ro.usageSeries().map((r) => r.lastEventMs)).toEqual([5000, 5000]);
    expect(ro.toolSeries()).toHaveLength(2);
    expect(ro.captureSeries().map((r) => r.captures)).toEqual([2, 1]);
    expect(ro.counts()).toEqual({ events: 3, calls: 3, sources: 0 });
    ro.close();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.pragma("user_version", { simple: true })).toBe(2);
    db.close();
  });

  it("a full disk mid-commit leaves the ledger consistent; the same source commits whole later", () => {
    // SQLITE_FULL is exactly what a full disk gives SQLite; max_page_count produces it on demand.
    Ledger.open(dir).close();
    const probe = new Database(join(dir, LEDGER_FILE), { readonly: true });
    const pages = probe.pragma("page_count", { simple: true }) as number;
    probe.close();
    const small = Ledger.open(dir, { maxPageCount: pages + 60 });
    const big = (i: number) =>
      observation(
        Array.from({ length: 200 }, (_, j) =>
          event(`m${i}_${j}`, { sourcePath: `/very/long/path/${"x".repeat(200)}/${i}` }),
        ),
        [],
        i,
        { ...SOURCE, path: `/s/${i}/${i}.messages.json` },
      );
    let failedAt = -1;
    for (let i = 0; i < 100; i++) {
      try {
        small.commit(big(i));
      } catch (e) {
        expect((e as { code?: string }).code).toBe("SQLITE_FULL");
        failedAt = i;
        break;
      }
    }
    expect(failedAt).toBeGreaterThan(0);
    const counts = small.counts();
    // All or nothing: every committed source has all its 200 events and its checkpoint.
    expect(counts.events).toBe(failedAt * 200);
    expect(counts.sources).toBe(failedAt);
    expect(small.getCheckpoint(`/s/${failedAt}/${failedAt}.messages.json`)).toBeUndefined();
    small.close();
    const again = Ledger.open(dir);
    expect(again.commit(big(failedAt)).eventsAdded).toBe(200);
    expect(again.counts().events).toBe((failedAt + 1) * 200);
    again.close();
  });
});

/**
 * A ledger as schema v2 wrote it (MIGRATIONS[0..1] only): events, tool calls and captures with
 * event times (ts_ms) that differ from their ingestion time (5000), and their series totals.
 */
function buildV2Ledger(path: string): void {
  const db = new Database(path);
  db.exec(MIGRATIONS[0] as string);
  db.exec(MIGRATIONS[1] as string);
  const meta = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
  meta.run("instance_id", "v2-instance");
  meta.run("created_ms", "1000");
  meta.run("stream_start_ns", "1000000000");
  const ev = db.prepare(
    `INSERT INTO events (dedup_key, adapter, session_id, agent, message_id, ts_ms, model, provider, project,
       input, output, cache_read, cache_write, total, cache_branch, recorded_cost, tool_calls, source_path, ingested_ms)
     VALUES (?, 'cline', ?, 'lead', ?, ?, 'm1', 'p1', '/w', ?, 0, 0, 0, ?, 'subset', NULL, 0, '/s', 5000)`,
  );
  ev.run("e1", "s1", "m1", 100, 10, 10);
  ev.run("e2", "s1", "m2", 300, 20, 20);
  ev.run("e3", "s2", "m1", 50, 5, 5);
  const us = db.prepare(
    `INSERT INTO usage_series (session_id, agent, project, model, provider, input, events, first_ms, updated_ms)
     VALUES (?, 'lead', '/w', 'm1', 'p1', ?, ?, 1000, 5000)`,
  );
  us.run("s1", 30, 2);
  us.run("s2", 5, 1);
  const call = db.prepare(
    `INSERT INTO tool_calls (call_key, usage_key, session_id, agent, tool_name, ts_ms, divisor, model, provider,
       project, share_input, share_output, share_cache_read, share_cache_write, source_path, ingested_ms)
     VALUES (?, ?, 's1', 'lead', 'run_commands', ?, 1, 'm1', 'p1', '/w', 0, 0, 0, 0, '/s', 5000)`,
  );
  call.run("c1", "e1", 120);
  call.run("c2", "e2", 310);
  call.run("c3", "", 999);
  const ts = db.prepare(
    `INSERT INTO tool_series (session_id, agent, project, model, provider, tool_name, usage_known, calls,
       first_ms, updated_ms)
     VALUES ('s1', 'lead', '/w', 'm1', 'p1', 'run_commands', ?, ?, 1000, 5000)`,
  );
  ts.run(1, 2);
  ts.run(0, 1);
  const cap = db.prepare(
    `INSERT INTO captures (capture_key, adapter, capture_id, stage, seq, attempt, mode, session_id, agent, agent_id,
       conversation_id, run_id, iteration, project, model, provider, ts_ms, payload_bytes, estimated_tokens,
       message_count, message_bytes, message_tokens, role_system, role_user, role_assistant, role_tool, role_other,
       tool_results, reasoning_blocks, payload_bucket, tokens_bucket, source_path, ingested_ms)
     VALUES (?, 'cline-capture', ?, ?, 1, 1, 'summary', 's1', 'lead', 'agent_1', 'conv', 'run', 1, '/w', 'm1', 'p1',
       ?, ?, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, '/c', 5000)`,
  );
  cap.run("k1", "cap1", "ai_sdk_prompt", 400, 100);
  cap.run("k2", "cap2", "ai_sdk_prompt", 700, 200);
  cap.run("k3", "cap1", "wire_request", 10, 100);
  const cs = db.prepare(
    `INSERT INTO capture_series (session_id, agent, project, model, provider, stage, captures, payload_bytes,
       payload_min, payload_max, estimated_tokens, tokens_min, tokens_max, messages, role_user, first_ms, updated_ms)
     VALUES ('s1', 'lead', '/w', 'm1', 'p1', ?, ?, ?, 100, ?, ?, 1, 1, ?, ?, 1000, 5000)`,
  );
  cs.run("ai_sdk_prompt", 2, 300, 200, 2, 2, 2);
  cs.run("wire_request", 1, 100, 100, 1, 1, 1);
  db.pragma("user_version = 2");
  db.close();
}
