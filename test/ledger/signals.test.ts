/**
 * The signal queue: final records queued once, in the same transaction as the source's rows;
 * results joined to calls by tool_use id; cancelled calls and open turns finalized after the
 * quiet time; per-exporter watermarks as compare-and-set.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { turnKey } from "../../src/adapter/cline/dedup.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { SignalKind, Signals } from "../../src/ledger/signals.ts";
import {
  assistant,
  LEAD_PATH,
  leadDoc,
  messagesDoc,
  observe,
  prompt,
  ROOT,
  SUB_ID,
  SUB_PATH,
} from "../helpers/signal-docs.ts";

let dir: string;
let l: Ledger;
let s: Signals;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "signals-"));
  l = Ledger.open(dir);
  s = l.signals as Signals;
});
afterEach(() => {
  l.close();
  rmSync(dir, { recursive: true, force: true });
});

const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn"]);
const QUIET = 900_000;

function drain(exporter = "t", kinds = ALL, fromMs = 0) {
  const c = s.cursor(exporter, fromMs);
  return s.batch(c, kinds, 10_000);
}

describe("signal queue", () => {
  it("queues each request at once, each call when its result is on disk, each turn when the next prompt came", () => {
    const { t0, doc } = leadDoc({ cancelled: true });
    l.commit(observe(doc));
    const rows = drain().rows;
    const by = (k: SignalKind) => rows.filter((r) => r.kind === k);
    expect(by("chat").map((r) => [r.messageId, r.startMs, r.tsMs])).toEqual([
      ["msg_a1", t0, t0 + 1200],
      ["msg_a2", t0 + 2000, t0 + 3000],
      ["msg_a3", t0 + 10_000, t0 + 11_000],
    ]);
    expect(by("tool").map((r) => [r.toolUseId, r.tsMs, r.endMs, r.outcome, r.cancelled])).toEqual([
      ["toolu_1", t0 + 1200, t0 + 2000, "success", false],
      ["toolu_2", t0 + 1200, t0 + 1500, "failure", false],
    ]);
    // toolu_3 has no result yet and its document is not quiet: not final.
    expect(by("turn").map((r) => [r.turnId, r.tsMs, r.endMs])).toEqual([["u1", t0, t0 + 3000]]);
    const chat = by("chat")[0];
    expect(chat).toMatchObject({
      sessionId: ROOT,
      rootSessionId: ROOT,
      agent: "lead",
      project: "/work/ws",
      model: "claude-sonnet-4-5-20250929",
      provider: "anthropic",
      input: 200,
      cacheRead: 600,
      cacheWrite: 200,
      output: 100,
      toolCalls: 2,
      turnKey: turnKey(ROOT, "lead", "u1"),
    });
    expect(by("tool")[0]).toMatchObject({ toolName: "run_commands", messageId: "msg_a1", usageKnown: true });
    expect(by("tool")[0]?.input).toBeCloseTo(100);
  });

  it("a re-read queues nothing twice; a result that appears later finalizes its call once", () => {
    const { t0, doc } = leadDoc({ cancelled: true });
    l.commit(observe(doc, LEAD_PATH, 100));
    l.commit(observe(doc, LEAD_PATH, 101));
    const first = s.queued();
    expect(first).toEqual({ chat: 3, tool: 2, turn: 1, compaction: 0, edit: 0 });
    const { doc: full } = leadDoc();
    l.commit(observe(full, LEAD_PATH, 200));
    l.commit(observe(full, LEAD_PATH, 201));
    expect(s.queued()).toEqual({ chat: 4, tool: 3, turn: 1, compaction: 0, edit: 0 });
    const t3 = drain().rows.find((r) => r.toolUseId === "toolu_3");
    expect(t3).toMatchObject({ endMs: t0 + 12_500, outcome: "success", cancelled: false });
  });

  it("after the quiet time: a call without a result is cancelled at the document's last ts, the open turn ends", () => {
    const { t0, doc } = leadDoc({ cancelled: true });
    l.commit(observe(doc));
    const last = t0 + 11_000;
    expect(s.finalizeQuiet(last + QUIET - 1, QUIET)).toBe(0);
    expect(s.finalizeQuiet(last + QUIET, QUIET)).toBe(2);
    expect(s.finalizeQuiet(last + 2 * QUIET, QUIET)).toBe(0);
    const rows = drain().rows;
    expect(rows.find((r) => r.toolUseId === "toolu_3")).toMatchObject({
      endMs: last,
      outcome: "unknown",
      cancelled: true,
    });
    expect(rows.filter((r) => r.kind === "turn").map((r) => [r.turnId, r.endMs])).toEqual([
      ["u1", t0 + 3000],
      ["u2", last],
    ]);
    // A result written after the call was finalized changes nothing that was queued.
    const { doc: full } = leadDoc();
    l.commit(observe(full, LEAD_PATH, 300));
    expect(s.queued()).toEqual({ chat: 4, tool: 3, turn: 2, compaction: 0, edit: 0 });
  });

  it("a sub-agent's turn nests under the lead turn that was running when it began", () => {
    const { t0, doc } = leadDoc({ secondTurn: false });
    l.commit(observe(doc));
    const sub = messagesDoc(
      [prompt("s_u1", t0 + 1300), assistant("s_a1", t0 + 1400)],
      "subagent",
      `${ROOT}__${SUB_ID}`,
    );
    l.commit(observe(sub, SUB_PATH));
    s.finalizeQuiet(t0 + 3000 + QUIET, QUIET);
    const turns = drain().rows.filter((r) => r.kind === "turn");
    const subTurn = turns.find((r) => r.agent === "subagent");
    expect(subTurn).toMatchObject({ rootSessionId: ROOT, turnKey: turnKey(ROOT, "lead", "u1") });
    expect(turns.find((r) => r.agent === "lead")?.turnKey).toBe("");
  });

  it("a sub-agent's turn over in the same batch as its lead's open turn still nests under it", () => {
    // The lead's turn is still open (its row written with the batch's other open turns) when the
    // sub-agent's first turn ends (a second prompt): the lookup of its parent must see it.
    const { t0, doc } = leadDoc({ secondTurn: false });
    const sub = messagesDoc(
      [prompt("s_u1", t0 + 1300), assistant("s_a1", t0 + 1400), prompt("s_u2", t0 + 1500)],
      "subagent",
      `${ROOT}__${SUB_ID}`,
    );
    l.commitAll([observe(doc), observe(sub, SUB_PATH)]);
    const subTurn = drain()
      .rows.filter((r) => r.kind === "turn")
      .find((r) => r.agent === "subagent");
    expect(subTurn).toMatchObject({ rootSessionId: ROOT, turnKey: turnKey(ROOT, "lead", "u1") });
  });

  it("a failed commit queues nothing (same transaction as the events)", () => {
    const { doc } = leadDoc();
    const obs = observe(doc);
    const bad = { ...obs, events: obs.events.map((e, i) => (i === 1 ? { ...e, total: -1 } : e)) };
    expect(() => l.commit(bad)).toThrow();
    expect(s.queued()).toEqual({ chat: 0, tool: 0, turn: 0, compaction: 0, edit: 0 });
    l.commit(obs);
    expect(s.queued()).toEqual({ chat: 4, tool: 3, turn: 1, compaction: 0, edit: 0 });
  });
});

describe("signal delivery", () => {
  it("a batch commits with compare-and-set; a stale commit moves nothing", () => {
    l.commit(observe(leadDoc().doc));
    const b1 = drain("x");
    expect(b1.rows.length).toBe(8);
    expect(s.commit(b1, 1)).toBe("committed");
    expect(s.commit(b1, 2)).toBe("stale");
    expect(drain("x").rows).toEqual([]);
    expect(s.pending(s.cursor("x", 0).watermark)).toBe(false);
    // Another exporter has its own position.
    expect(drain("y").rows.length).toBe(8);
  });

  it("bounded batches, kinds filtered, and 'start from now' skips older records without sending them", () => {
    const { t0, doc } = leadDoc();
    l.commit(observe(doc));
    const c = s.cursor("logs", 0);
    const b = s.batch(c, new Set(["chat", "tool"]), 3);
    expect(b.rows.length + b.skipped).toBe(3);
    expect(b.rows.every((r) => r.kind !== "turn")).toBe(true);
    const late = s.batch(s.cursor("from-now", t0 + 10_500), ALL, 100);
    expect(late.rows.map((r) => r.tsMs).every((ts) => ts >= t0 + 10_500)).toBe(true);
    expect(late.skipped).toBeGreaterThan(0);
    // fromMs is fixed at the first use.
    expect(s.cursor("from-now", 0).fromMs).toBe(t0 + 10_500);
  });

  it("survives a reopen: queue and watermarks are in the ledger", () => {
    l.commit(observe(leadDoc().doc));
    const b = drain("x");
    s.commit(s.batch(s.cursor("x", 0), ALL, 4), 1);
    l.close();
    l = Ledger.open(dir);
    s = l.signals as Signals;
    const rest = drain("x");
    expect(rest.rows.map((r) => r.seq)).toEqual(b.rows.slice(4).map((r) => r.seq));
  });
});
