/**
 * A final call's signal record is its tool_calls row (signal_seq, end_ms, outcome, cancelled,
 * turn_key, message_id, tool_use_id), numbered from the one sequence the queue and the requests
 * share. These tests fail if a call read with its result is not recorded by its INSERT, if a
 * later result, turn end or quiet time records it twice or out of order, or if the migration from
 * a ledger whose calls are queue rows changes a record, a watermark or a count.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LEDGER_FILE } from "../../src/ledger/open.ts";
import type { SignalKind, SignalRow, Signals } from "../../src/ledger/signals.ts";
import { scopedLedgers } from "../helpers/ledgers.ts";
import {
  assistant,
  LEAD_PATH,
  leadDoc,
  messagesDoc,
  observe,
  prompt,
  toolResult,
} from "../helpers/signal-docs.ts";

const ledgers = scopedLedgers("signal-calls");
const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction"]);
const QUIET = 900_000;
function all(s: Signals, exporter = "audit"): readonly SignalRow[] {
  return s.batch(s.cursor(exporter, 0), ALL, 100_000).rows;
}

function raw<T>(dir: string, sql: string): T[] {
  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe("a final call's record is its tool_calls row", () => {
  it("a call read with its result is recorded by its INSERT: no queue row, one seq order with the rest", () => {
    const dir = ledgers.stateDir();
    const { l, s } = ledgers.open(dir);
    const { t0, doc } = leadDoc();
    l.commit(observe(doc, LEAD_PATH, 100));
    s.finalizeQuiet(t0 + 100 * QUIET, QUIET);
    expect(raw(dir, "SELECT seq FROM signal_queue WHERE kind = 'tool'")).toEqual([]);
    const rows = all(s);
    const tools = rows.filter((r) => r.kind === "tool");
    expect(tools.map((r) => [r.toolUseId, r.outcome, r.endMs - r.tsMs, r.cancelled])).toEqual([
      ["toolu_1", "success", 800, false],
      ["toolu_2", "failure", 300, false],
      ["toolu_3", "success", 1500, false],
    ]);
    for (const t of tools) {
      expect(t.turnKey).not.toBe("");
      expect(t.messageId).toMatch(/^msg_a/);
    }
    // A paid call's turn and message id are its request's: read from its events row, not stored twice.
    expect(
      raw(dir, "SELECT COUNT(*) AS n FROM tool_calls WHERE turn_key IS NULL AND message_id IS NULL"),
    ).toEqual([{ n: 3 }]);
    const requests = rows.filter((r) => r.kind === "chat");
    for (const t of tools) expect(requests.find((r) => r.messageId === t.messageId)?.turnKey).toBe(t.turnKey);
    const seqs = rows.map((r) => r.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    // Each call right after the request that made it (both rows of one INSERT loop, in order).
    expect(rows.map((r) => r.kind).slice(0, 4)).toEqual(["chat", "chat", "chat", "chat"]);
    expect(rows.map((r) => r.kind).slice(4, 7)).toEqual(["tool", "tool", "tool"]);
    expect(s.queued()).toEqual({ chat: 4, tool: 3, turn: 2, compaction: 0, edit: 0 });
  });

  it("a call read before its result: recorded once, by the read that has it, after what came before", () => {
    const dir = ledgers.stateDir();
    const { l, s } = ledgers.open(dir);
    const { doc } = leadDoc({ cancelled: true });
    l.commit(observe(doc, LEAD_PATH, 100));
    const before = all(s);
    expect(before.filter((r) => r.kind === "tool").map((r) => r.toolUseId)).toEqual(["toolu_1", "toolu_2"]);
    const t0 = 1_796_018_200_000;
    const later = messagesDoc([
      ...(doc.messages as unknown[]),
      toolResult("msg_r3", t0 + 12_500, "toolu_3", true),
      assistant("msg_a4", t0 + 13_000),
    ]);
    l.commit(observe(later, LEAD_PATH, 200));
    l.commit(observe(later, LEAD_PATH, 300)); // read again: nothing new
    const after = all(s);
    const late = after.filter((r) => r.kind === "tool" && r.toolUseId === "toolu_3");
    expect(late).toHaveLength(1);
    expect(late[0]).toMatchObject({ outcome: "failure", cancelled: false, endMs: t0 + 12_500 });
    expect(late[0]?.seq).toBeGreaterThan(Math.max(...before.map((r) => r.seq)));
    expect(s.queued().tool).toBe(3);
  });

  it("a call whose result never comes: recorded once by the quiet time, cut off, outcome unknown", () => {
    const dir = ledgers.stateDir();
    const { l, s } = ledgers.open(dir);
    const t0 = 1_796_018_200_000;
    const doc = messagesDoc([
      prompt("u1", t0),
      assistant("msg_a1", t0 + 1200, [["toolu_9", "run_commands"]]),
    ]);
    l.commit(observe(doc, LEAD_PATH, 100));
    expect(s.queued().tool).toBe(0);
    s.finalizeQuiet(t0 + 1200 + QUIET - 1, QUIET);
    expect(s.queued().tool).toBe(0);
    s.finalizeQuiet(t0 + 1200 + QUIET, QUIET);
    s.finalizeQuiet(t0 + 1200 + 2 * QUIET, QUIET);
    const tools = all(s).filter((r) => r.kind === "tool");
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ outcome: "unknown", cancelled: true, endMs: t0 + 1200 });
    expect(s.toolOutcomes.series().map((r) => [r.outcome, r.calls])).toEqual([["unknown", 1]]);
  });
});
