/**
 * The write side of the GenAI histogram series (src/ledger/genai/genai.ts): the observations of a
 * commit transaction are written once, at its end, in it; one that fails leaves nothing behind,
 * not even in memory for the next transaction; series merged across commits equal the same
 * observations summed in one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { prng } from "../../bench/lib/messages-doc.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { GenaiSeriesRow, Signals } from "../../src/ledger/signals/signals.ts";
import {
  assistant,
  LEAD_PATH,
  leadDoc,
  messagesDoc,
  observe,
  prompt,
  ROOT,
  toolResult,
} from "../helpers/signal-docs.ts";

const dirs: string[] = [];
const ledgers: Ledger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(): { l: Ledger; s: Signals } {
  const d = mkdtempSync(join(tmpdir(), "genai-writes-"));
  dirs.push(d);
  const l = Ledger.open(d);
  ledgers.push(l);
  return { l, s: l.signals as Signals };
}

/** The series without the ingestion times (which differ between two ledgers). */
const shape = (rows: readonly GenaiSeriesRow[]) =>
  rows
    .map(({ firstMs, updatedMs, ...r }) => r)
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** A second document of the same session (another agent's file): it adds to the same series. */
function secondDoc() {
  const t0 = 1_796_018_300_000;
  return messagesDoc([prompt("v1", t0), assistant("msg_b1", t0 + 900)], "lead", ROOT);
}

describe("GenAI series writes", () => {
  it("a batch of sources writes the same series as one commit per source", () => {
    const batched = open();
    const single = open();
    const a = observe(leadDoc().doc, LEAD_PATH, 100);
    const b = observe(secondDoc(), `/s/${ROOT}/other.messages.json`, 100);
    batched.l.commitAll([a, b]);
    single.l.commit(a);
    single.l.commit(b);
    const got = shape(batched.s.genaiSeries());
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(shape(single.s.genaiSeries()));
    // Both documents' requests are in the one token-usage series of the session.
    const output = got.find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(output?.count).toBe(a.events.length + b.events.length);
  });

  it("a failed transaction's observations never reach the next one", () => {
    const { l, s } = open();
    const a = observe(leadDoc().doc, LEAD_PATH, 100);
    const b = observe(secondDoc(), `/s/${ROOT}/other.messages.json`, 100);
    // The second source's checkpoint is refused after the first source's rows were written.
    const broken = { ...b, checkpoint: { ...b.checkpoint, size: null as unknown as number } };
    expect(() => l.commitAll([a, broken])).toThrow();
    expect(s.genaiSeries()).toEqual([]);
    l.commit(b);
    const output = s.genaiSeries().find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(output?.count).toBe(b.events.length);
    // Nor into a quiet-time sweep, which writes the series of what it finalizes.
    expect(() => l.commitAll([a, broken])).toThrow();
    s.finalizeQuiet(Date.now() + 10 ** 12, 1);
    const after = s.genaiSeries().find((r) => r.metric === "token_usage" && r.tokenType === "output");
    expect(after?.count).toBe(b.events.length);
  });
});

describe("GenAI series merged across commits", () => {
  /** Documents of 7 sessions: varied token counts and durations, calls with and without errors. */
  function documents() {
    const next = prng(11);
    const t0 = 1_796_018_300_000;
    const docs: ReturnType<typeof observe>[] = [];
    for (let i = 0; i < 36; i++) {
      const session = `1796018300000_s${i % 7}`;
      const t = t0 + i * 600_000;
      const tokens = Math.floor(4 ** (next() * 12));
      const metrics = {
        inputTokens: tokens,
        outputTokens: Math.floor(tokens / (1 + next() * 20)),
        cacheReadTokens: next() < 0.5 ? 0 : tokens * 3,
        cacheWriteTokens: 0,
      };
      const calls: [string, string][] =
        next() < 0.6 ? [[`toolu_${i}`, next() < 0.5 ? "run_commands" : "editor"]] : [];
      // No prompt before the first response of a third of them: no start, so no duration.
      const messages: unknown[] = next() < 0.33 ? [] : [prompt(`u${i}`, t - Math.floor(next() * 90_000))];
      messages.push(assistant(`msg_${i}`, t, calls, metrics));
      for (const [id] of calls) {
        const ms = [0, 10, 11, 5_120, 5_121, 700_000][Math.floor(next() * 6)] as number;
        messages.push(toolResult(`r${i}`, t + ms, id, next() < 0.3));
      }
      docs.push(observe(messagesDoc(messages, "lead", session), `/s/${session}/d${i}.messages.json`, 100));
    }
    return docs;
  }

  it("one request or call per commit (merged on conflict) = all in one commit (summed in memory)", () => {
    const docs = documents();
    const one = open();
    for (const d of docs) one.l.commit(d);
    const all = open();
    all.l.commitAll(docs);
    const mixed = open();
    // 9 documents of 7 sessions per commit: some series summed in memory, then merged.
    for (let i = 0; i < docs.length; i += 9) mixed.l.commitAll(docs.slice(i, i + 9));
    const want = shape(all.s.genaiSeries());
    // Every series of 7 sessions is several observations in `all`, one per commit in `one`.
    expect(want.some((r) => r.count > 1)).toBe(true);
    expect(want.some((r) => r.metric === "tool_duration")).toBe(true);
    expect(want.some((r) => r.metric === "operation_duration")).toBe(true);
    expect(shape(one.s.genaiSeries())).toEqual(want);
    expect(shape(mixed.s.genaiSeries())).toEqual(want);
    // Rows are numbered in the order their series were first observed (a commit writes its
    // request rows, then its tool rows).
    const order = (rows: readonly GenaiSeriesRow[], tools: boolean) =>
      rows
        .filter((r) => (r.metric === "tool_duration") === tools)
        .map((r) => `${r.metric}|${r.sessionId}|${r.toolName}|${r.outcome}|${r.tokenType}`);
    for (const tools of [false, true])
      expect(order(mixed.s.genaiSeries(), tools)).toEqual(order(one.s.genaiSeries(), tools));
  });

  it("a series observed once: count 1, its value's bucket, first and updated = the commit, last event = its ts", () => {
    const { l, s } = open();
    const doc = observe(messagesDoc([prompt("u1", 1_796_018_300_000), assistant("m1", 1_796_018_301_500)]));
    l.commit(doc);
    const rows = s.genaiSeries();
    expect(rows.map((r) => [r.metric, r.tokenType, r.count, r.sum, r.min, r.max, r.lastEventMs])).toEqual([
      // All input: 1000 (Cline's input includes its cache reads and writes: the subset rule).
      ["token_usage", "input", 1, 1000, 1000, 1000, 1_796_018_301_500],
      ["token_usage", "output", 1, 100, 100, 100, 1_796_018_301_500],
      ["operation_duration", "", 1, 1.5, 1.5, 1.5, 1_796_018_301_500],
    ]);
    for (const r of rows) {
      expect(r.firstMs).toBe(r.updatedMs);
      expect(r.firstMs).toBeGreaterThan(0);
      expect(r.counts.reduce((a, c) => a + c, 0)).toBe(1);
    }
    // 1000 tokens: the bucket (256, 1024]; 100: (64, 256]; 1.5 s: (1.28, 2.56].
    expect(rows[0]?.counts.indexOf(1)).toBe(5);
    expect(rows[1]?.counts.indexOf(1)).toBe(4);
    expect(rows[2]?.counts.indexOf(1)).toBe(8);
  });
});
