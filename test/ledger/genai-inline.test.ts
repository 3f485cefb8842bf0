import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { GENAI_BOUNDARIES, GENAI_BUCKET_COLUMNS } from "../../src/ledger/genai/genai.ts";
import { LEDGER_FILE } from "../../src/ledger/ledger.ts";
import type { GenaiSeriesRow } from "../../src/ledger/signals/signals.ts";
import { scopedLedgers } from "../helpers/ledgers.ts";
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
  toolResult,
} from "../helpers/signal-docs.ts";

const { stateDir, open, close } = scopedLedgers("genai-inline");

/** A sub-agent's document of the same session tree: more series, other buckets. */
function subDoc() {
  const t0 = 1_796_018_205_000;
  return messagesDoc(
    [
      prompt("s1", t0),
      assistant("msg_s1", t0 + 40, [["toolu_s1", "search_files"]]),
      toolResult("msg_sr1", t0 + 700_000, "toolu_s1"),
      assistant("msg_s2", t0 + 700_900, [], {
        inputTokens: 70_000_000,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      }),
    ],
    "subagent",
    `${ROOT}__${SUB_ID}`,
  );
}

/** Another document of the lead's session with one more request: it adds to a's series. */
function moreOfTheLead() {
  const t0 = 1_796_018_300_000;
  return messagesDoc([prompt("v1", t0), assistant("msg_c1", t0 + 70)], "lead", ROOT);
}

const bucketSum = (r: GenaiSeriesRow) => r.counts.reduce((a, b) => a + b, 0);

describe("GenAI buckets inline: a failed commit", () => {
  it("that fails between two series upserts leaves no partial count, in the ledger or in memory", () => {
    const reference = open(stateDir());
    const a = observe(leadDoc().doc, LEAD_PATH, 100);
    const c = observe(moreOfTheLead(), `/s/${ROOT}/other.messages.json`, 100);
    const b = observe(subDoc(), SUB_PATH, 100);
    reference.l.commit(a);
    const afterA = reference.s.genaiSeries();
    reference.l.commitAll([c, b]);
    const afterAll = reference.s.genaiSeries();

    const dir = stateDir();
    const { l, s } = open(dir);
    l.commit(a);
    // The batch's upserts are refused from its first tool duration on: its token usage and
    // operation duration series (a's, added to, and new ones) were written before that, in it.
    const side = new Database(join(dir, LEDGER_FILE));
    side.exec(`CREATE TRIGGER refuse_tool_duration BEFORE INSERT ON genai_rows
      WHEN NEW.outcome != '' BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    expect(() => l.commitAll([c, b])).toThrow(/injected/);
    const strip = (rows: GenaiSeriesRow[]) => rows.map(({ firstMs, updatedMs, ...r }) => r);
    expect(strip(s.genaiSeries())).toEqual(strip(afterA));
    for (const r of s.genaiSeries()) expect(bucketSum(r)).toBe(r.count);
    side.exec("DROP TRIGGER refuse_tool_duration");
    side.close();
    // Read again, the batch's observations are counted once: exactly what one clean commit gives.
    l.commitAll([c, b]);
    const got = s.genaiSeries();
    expect(strip(got)).toEqual(strip(afterAll));
    // a's series were added to, not replaced.
    expect(
      got.find((r) => r.metric === "token_usage" && r.sessionId === ROOT && r.tokenType === "output")?.count,
    ).toBe(a.events.length + c.events.length);
    for (const r of s.genaiSeries()) expect(bucketSum(r)).toBe(r.count);
  });
});

describe("GenAI buckets inline: the upserts", () => {
  it("the table has a column for every bucket of the longest boundary list", () => {
    const longest = Math.max(...Object.values(GENAI_BOUNDARIES).map((b) => b.length));
    expect(GENAI_BUCKET_COLUMNS).toBe(longest + 1);
    const dir = stateDir();
    close(open(dir).l);
    const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
    const cols = (db.prepare("SELECT name FROM pragma_table_info('genai_rows')").all() as { name: string }[])
      .map((c) => c.name)
      .filter((n) => /^b\d+$/.test(n));
    db.close();
    expect(cols).toEqual(Array.from({ length: GENAI_BUCKET_COLUMNS }, (_, i) => `b${i}`));
  });

  it("a batch of many series (several multi-row upserts and a remainder) writes what one commit per source does", () => {
    const docs = Array.from({ length: 13 }, (_, i) => {
      const sid = `1796018${String(i).padStart(6, "0")}_s${i}`;
      const t0 = 1_796_018_200_000 + i * 60_000;
      const doc = messagesDoc(
        [
          prompt(`u${i}`, t0),
          assistant(`m${i}a`, t0 + 10 * (i + 1), [[`toolu_${i}`, i % 2 ? "read_files" : "run_commands"]]),
          toolResult(`r${i}`, t0 + 1000 * (i + 1), `toolu_${i}`, i % 3 === 0),
          assistant(`m${i}b`, t0 + 1000 * (i + 1) + 5 ** (i % 7), [], {
            inputTokens: 4 ** i,
            outputTokens: i,
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
          }),
        ],
        "lead",
        sid,
      );
      return observe(doc, `/s/${sid}/${sid}.messages.json`, 100);
    });
    const batched = open(stateDir());
    const single = open(stateDir());
    batched.l.commitAll(docs);
    for (const d of docs) single.l.commit(d);
    const shape = (rows: readonly GenaiSeriesRow[]) =>
      rows
        .map(({ firstMs, updatedMs, ...r }) => r)
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const got = batched.s.genaiSeries();
    // 13 sessions x (input, output, duration, one tool): more than two statements' worth.
    expect(got.length).toBe(13 * 4);
    expect(shape(got)).toEqual(shape(single.s.genaiSeries()));
    for (const r of got) expect(bucketSum(r)).toBe(r.count);
    const input = got.filter((r) => r.metric === "token_usage" && r.tokenType === "input");
    // The first request's input is 200 + 600 + 200 (uncached, cache read, cache write), the second's 4^i.
    const bySum = (a: number, b: number) => a - b;
    expect(input.map((r) => r.sum).sort(bySum)).toEqual(docs.map((_, i) => 1000 + 4 ** i).sort(bySum));
    expect(input.map((r) => r.max).sort(bySum)).toEqual(
      docs.map((_, i) => Math.max(1000, 4 ** i)).sort(bySum),
    );
  });
});
