/**
 * A document already quiet when a commit reads it has its calls without a result final at once
 * (Signals.record, a writer opened with `quietMs`): they get the records the quiet sweep
 * (finalizeQuiet) would give them, and no open call is written; its open turns still wait for the
 * sweep, and a turn a later prompt closed is stored final by its upsert. These tests compare
 * the two paths record by record: a writer that finalizes at read against one that only sweeps,
 * both sweeping at the same moments, must end with the same records (every field but the seq),
 * the same GenAI series and the same tool-outcome counts, through re-reads, rewrites, batches,
 * restarts and sub-agent documents.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { SignalKind, SignalRow, Signals } from "../../src/ledger/signals/signals.ts";
import {
  assistant,
  LEAD_PATH,
  messagesDoc,
  observe,
  prompt,
  ROOT,
  SUB_ID,
  SUB_PATH,
  toolResult,
} from "../helpers/signal-docs.ts";

const QUIET = 900_000;
const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction", "edit"]);
const t0 = 1_796_018_200_000;

/**
 * The lead: turn u1 with a success and a call never answered (toolu_2), closed by prompt u2;
 * turn u2 with a call answered only in the last messages (toolu_3) and one never (toolu_4).
 */
const LEAD = [
  prompt("u1", t0),
  assistant("msg_a1", t0 + 1200, [
    ["toolu_1", "run_commands"],
    ["toolu_2", "read_files"],
  ]),
  toolResult("msg_r1", t0 + 2000, "toolu_1"),
  assistant("msg_a2", t0 + 3000),
  prompt("u2", t0 + 10_000),
  assistant("msg_a3", t0 + 11_000, [
    ["toolu_3", "run_commands"],
    ["toolu_4", "read_files"],
  ]),
  toolResult("msg_r3", t0 + 12_500, "toolu_3", true),
  assistant("msg_a4", t0 + 13_000),
];
/** A sub-agent of u1 with a call never answered (its turn nests under the lead's). */
const SUB = [
  prompt("s_u1", t0 + 1300),
  assistant("s_a1", t0 + 1400, [["toolu_s1", "run_commands"]]),
  assistant("s_a2", t0 + 1600),
];
const leadAt = (n: number) => observe(messagesDoc(LEAD.slice(0, n)), LEAD_PATH, 100 + n);
const subAt = (n: number) =>
  observe(messagesDoc(SUB.slice(0, n), "subagent", `${ROOT}__${SUB_ID}`), SUB_PATH, 200 + n);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "signals-quiet-read-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A writer on its own ledger with a settable clock; `quiet`: it finalizes quiet documents at read. */
function writer(name: string, quiet: boolean) {
  const clock = { now: t0 };
  const path = join(dir, name);
  const open = () => Ledger.open(path, { now: () => clock.now, ...(quiet ? { quietMs: QUIET } : {}) });
  const w = { clock, path, l: open() };
  return {
    ...w,
    signals: (): Signals => w.l.signals as Signals,
    restart: () => {
      w.l.close();
      w.l = open();
    },
    get ledger() {
      return w.l;
    },
  };
}
type Writer = ReturnType<typeof writer>;

/** Every record, keyed and without its seq (the delivery order differs: that is the point). */
function records(w: Writer): Record<string, Omit<SignalRow, "seq">> {
  const s = w.signals();
  const rows = s.batch(s.cursor("audit", 0), ALL, 100_000).rows;
  const out: Record<string, Omit<SignalRow, "seq">> = {};
  for (const { seq: _seq, ...r } of rows) {
    const key = `${r.kind}|${r.refKey}`;
    expect(out[key], `${key} queued twice`).toBeUndefined();
    out[key] = r;
  }
  return out;
}

/** The GenAI series and tool-outcome counts, without the ingestion times. */
function metrics(w: Writer) {
  const s = w.signals();
  const genai = s
    .genaiSeries()
    .map(({ updatedMs: _u, ...r }) => r)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const outcomes = s.toolOutcomes
    .series()
    .map((r) => JSON.stringify({ ...r, updatedMs: undefined, id: undefined }))
    .sort();
  return { genai, outcomes };
}

function openCalls(w: Writer): number {
  const db = new Database(join(w.path, "ledger.sqlite"), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM signal_calls WHERE final = 0").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const closeAll = (...ws: Writer[]) => {
  for (const w of ws) w.ledger.close();
};

describe("a document already quiet when read is final at once", () => {
  it("a cold read writes no open call, and its records are the ones a read and a sweep give", () => {
    const atRead = writer("at-read", true);
    const swept = writer("swept", false);
    try {
      for (const w of [atRead, swept]) {
        w.clock.now = t0 + 13_000 + QUIET; // both documents quiet
        w.ledger.commitAll([leadAt(LEAD.length), subAt(SUB.length)]);
      }
      expect(openCalls(atRead)).toBe(0);
      expect(openCalls(swept)).toBe(2); // toolu_4 and toolu_s1 (toolu_2 ended with turn u1)
      // Only u1 (closed by u2) is final at read: the open turns wait for the sweep.
      const before = records(atRead);
      expect(before[`tool|${callKey("lead", "toolu_4")}`]).toMatchObject({
        cancelled: true,
        outcome: "unknown",
        endMs: t0 + 13_000,
      });
      expect(before[`tool|${callKey("lead", "toolu_2")}`]).toMatchObject({
        cancelled: true,
        endMs: t0 + 3000,
      });
      expect(Object.values(before).filter((r) => r.kind === "turn")).toEqual([
        expect.objectContaining({ turnId: "u1", endMs: t0 + 3000 }),
      ]);
      for (const w of [atRead, swept]) w.signals().finalizeQuiet(w.clock.now, QUIET);
      expect(records(atRead)).toEqual(records(swept));
      expect(metrics(atRead)).toEqual(metrics(swept));
      expect(Object.keys(records(atRead))).toHaveLength(6 + 5 + 3); // requests, calls, turns
    } finally {
      closeAll(atRead, swept);
    }
  });

  it("a document not yet quiet stays open as before: its calls wait for their result or the sweep", () => {
    const atRead = writer("at-read", true);
    try {
      atRead.clock.now = t0 + 13_000 + QUIET - 1;
      atRead.ledger.commit(leadAt(LEAD.length));
      expect(openCalls(atRead)).toBe(1); // toolu_4
      const r = records(atRead);
      expect(r[`tool|${callKey("lead", "toolu_4")}`]).toBeUndefined();
      expect(Object.values(r).filter((x) => x.kind === "turn")).toHaveLength(1); // u1, closed by u2
      // Quiet at its next read (nothing new): the open call is final then, once; the turn at the sweep.
      atRead.clock.now += 1;
      atRead.ledger.commit(leadAt(LEAD.length));
      expect(openCalls(atRead)).toBe(0);
      expect(records(atRead)[`tool|${callKey("lead", "toolu_4")}`]).toMatchObject({ cancelled: true });
      expect(Object.values(records(atRead)).filter((x) => x.kind === "turn")).toHaveLength(1);
      expect(atRead.signals().finalizeQuiet(atRead.clock.now, QUIET)).toBe(1); // u2
      atRead.ledger.commit(leadAt(LEAD.length));
      expect(atRead.signals().queued()).toEqual({ chat: 4, tool: 4, turn: 2, compaction: 0, edit: 0 });
    } finally {
      closeAll(atRead);
    }
  });
});

describe("random reads, rewrites, batches, restarts and times", () => {
  // A read of one prefix of either document at some time (0: not quiet; k: quiet k times over).
  const step = fc.oneof(
    fc.record({
      lead: fc.integer({ min: 1, max: LEAD.length }),
      at: fc.integer({ min: 0, max: 2 }),
    }),
    fc.record({ sub: fc.integer({ min: 1, max: SUB.length }), at: fc.integer({ min: 0, max: 2 }) }),
    // One batch holds each source once (a pass lists each once): the lead and the sub-agent.
    fc.record({
      batch: fc.integer({ min: 1, max: LEAD.length }),
      sub: fc.integer({ min: 1, max: SUB.length }),
      at: fc.integer({ min: 0, max: 2 }),
    }),
    fc.constant({ restart: true as const }),
  );

  it("end with the same records and metrics whether quiet documents are final at read or swept", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 8 }), (steps) => {
        rmSync(dir, { recursive: true, force: true });
        const atRead = writer("at-read", true);
        const swept = writer("swept", false);
        try {
          for (const s of steps) {
            for (const w of [atRead, swept]) {
              if ("restart" in s) {
                w.restart();
                continue;
              }
              // Times only move forward; each writer sweeps after each commit, as a daemon may.
              w.clock.now = Math.max(w.clock.now, t0 + 13_000 + s.at * QUIET - (s.at === 0 ? 12_000 : 0));
              const obs =
                "lead" in s
                  ? [leadAt(s.lead)]
                  : "batch" in s
                    ? [leadAt(s.batch), subAt(s.sub)]
                    : [subAt(s.sub)];
              w.ledger.commitAll(obs);
              w.signals().finalizeQuiet(w.clock.now, QUIET);
            }
            expect(records(atRead)).toEqual(records(swept));
          }
          for (const w of [atRead, swept]) {
            w.clock.now += 10 * QUIET;
            w.ledger.commitAll([leadAt(LEAD.length), subAt(SUB.length)]);
            w.signals().finalizeQuiet(w.clock.now, QUIET);
          }
          expect(records(atRead)).toEqual(records(swept));
          expect(metrics(atRead)).toEqual(metrics(swept));
          expect(openCalls(atRead)).toBe(0);
        } finally {
          closeAll(atRead, swept);
        }
      }),
      { numRuns: 30 },
    );
  });
});

function callKey(agent: string, toolUseId: string): string {
  const { toolCalls } = agent === "lead" ? leadAt(LEAD.length) : subAt(SUB.length);
  const c = toolCalls.find((x) => x.toolUseId === toolUseId);
  if (c === undefined) throw new Error(`no call ${toolUseId}`);
  return c.callKey;
}
