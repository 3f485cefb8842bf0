/**
 * A request's signal record is its events row (events.signal_seq, turn_key, start_ms), numbered
 * from the queue's one sequence; everything else stays in signal_queue. These tests fail if the
 * two tables stop reading as one queue: a batch out of seq order, a page boundary that loses or
 * repeats a record, a failed transaction that leaves a seq behind, or a migration from a ledger
 * whose requests are queue rows that changes a record or a watermark.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import type { Ledger } from "../../src/ledger/ledger.ts";
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
  SUB_PATH,
} from "../helpers/signal-docs.ts";

const ledgers = scopedLedgers("signal-requests");
let dir: string;
let l: Ledger;
beforeEach(() => {
  dir = ledgers.stateDir();
  l = ledgers.open(dir).l;
});

const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction"]);
const QUIET = 900_000;
const signals = (): Signals => l.signals as Signals;
/** Every record after `watermark`, read `limit` at a time; each page's rows and its next watermark. */
function pages(exporter: string, limit: number): { rows: SignalRow[]; nexts: number[] } {
  const rows: SignalRow[] = [];
  const nexts: number[] = [];
  for (;;) {
    const cursor = signals().cursor(exporter, 0);
    const b = signals().batch(cursor, ALL, limit);
    if (b.rows.length === 0 && b.next === cursor.watermark) return { rows, nexts };
    rows.push(...b.rows);
    nexts.push(b.next);
    expect(signals().commit(b, 1)).toBe("committed");
  }
}

/** A lead document and a sub-agent's, its calls final (results on disk) and its turns over. */
function history(): void {
  const { t0, doc } = leadDoc({ secondTurn: true });
  l.commit(observe(doc, LEAD_PATH, 100));
  const sub = messagesDoc(
    (doc.messages as unknown[]).slice(0, 4),
    "agent_1796018195000_abcdef",
    "agent_1796018195000_abcdef",
  );
  l.commit(observe(sub, SUB_PATH, 100));
  signals().finalizeQuiet(t0 + 100 * QUIET, QUIET);
}

describe("requests on their events rows, one seq order with the queue", () => {
  it("a request is not a queue row; a batch mixes requests and calls in seq order", () => {
    history();
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db.prepare("SELECT COUNT(*) AS n FROM signal_queue WHERE kind = 'chat'").get()).toEqual({ n: 0 });
    const onEvents = db.prepare("SELECT COUNT(signal_seq) AS n FROM events").get() as { n: number };
    db.close();
    const { rows } = pages("all", 1000);
    const chats = rows.filter((r) => r.kind === "chat");
    expect(chats.length).toBe(onEvents.n);
    expect(chats.length).toBeGreaterThan(2);
    expect(rows.some((r) => r.kind === "tool")).toBe(true);
    const seqs = rows.map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // Interleaved, not one table after the other: some call comes before some request.
    const firstTool = rows.findIndex((r) => r.kind === "tool");
    expect(rows.slice(firstTool).some((r) => r.kind === "chat")).toBe(true);
    // A request carries what its queue row carried: its start and its turn.
    for (const c of chats) {
      expect(c.startMs).toBeGreaterThan(0);
      expect(c.turnKey).not.toBe("");
    }
  });

  it("a transaction that ends with a request: the next one numbers its records after it", () => {
    const t0 = 1_796_018_300_000;
    const only = messagesDoc([prompt("u1", t0), assistant("msg_1", t0 + 1000)], "lead", "s1");
    l.commit(observe(only, "/s/s1/s1.messages.json", 100));
    ledgers.close(l);
    l = ledgers.open(dir).l;
    l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
    const { rows } = pages("all", 1000);
    expect(rows[0]).toMatchObject({ kind: "chat", seq: 1, sessionId: "s1" });
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  });

  it("pages of every size deliver each record once, in the same order", () => {
    history();
    const whole = pages("whole", 1000).rows;
    for (let limit = 1; limit <= 7; limit++) {
      const p = pages(`page-${limit}`, limit);
      expect(p.rows).toEqual(whole);
      expect(p.nexts).toEqual([...p.nexts].sort((a, b) => a - b));
    }
    expect(signals().pending(whole.at(-1)?.seq ?? 0)).toBe(false);
    expect(signals().pending((whole.at(-1)?.seq ?? 0) - 1)).toBe(true);
  });

  it("a failed transaction leaves neither a request's record nor a queue row, and its seqs are given again", () => {
    const full = observe(leadDoc().doc, LEAD_PATH, 200);
    const bad = observe(messagesDoc([]), "/s/other/other.messages.json");
    const broken = {
      ...bad,
      events: full.events.map((e) => ({ ...e, dedupKey: `${e.dedupKey}-x`, total: -1 })),
    };
    expect(() => l.commitAll([full, broken])).toThrow();
    expect(signals().queued()).toEqual({ chat: 0, tool: 0, turn: 0, compaction: 0, edit: 0 });
    expect(signals().pending(0)).toBe(false);
    l.commitAll([full]);
    const { rows } = pages("after-failure", 1000);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(signals().queued()).toEqual({ chat: 4, tool: 3, turn: 1, compaction: 0, edit: 0 });
  });
});

describe("requests stored before their signals", () => {
  it("a request listed as unqueued (stored before its signals) gets its record once, on its events row", () => {
    const { doc } = leadDoc();
    const stored = observe(doc, LEAD_PATH, 200);
    l.commit({ ...stored, signals: undefined });
    ledgers.close(l);
    const db = new Database(join(dir, LEDGER_FILE));
    db.exec(`INSERT INTO signal_unqueued (kind, ref_key) SELECT 'chat', dedup_key FROM events`);
    db.close();
    l = ledgers.open(dir).l;
    l.commit(observe(doc, LEAD_PATH, 201));
    l.commit(observe(doc, LEAD_PATH, 202));
    const { rows } = pages("legacy", 1000);
    const chats = rows.filter((r) => r.kind === "chat");
    expect(chats.length).toBe(4);
    expect(new Set(chats.map((r) => r.refKey)).size).toBe(4);
    expect(rows.map((r) => r.seq)).toEqual([...rows.map((r) => r.seq)].sort((a, b) => a - b));
  });
});
