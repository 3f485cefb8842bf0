import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { translateGenai } from "../../src/export/genai/metrics.ts";
import { GENAI_BOUNDARIES, GENAI_BUCKET_COLUMNS } from "../../src/ledger/genai.ts";
import { LEDGER_FILE } from "../../src/ledger/ledger.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../../src/ledger/schema.ts";
import type { GenaiSeriesRow, Signals } from "../../src/ledger/signals.ts";
import { toHistograms } from "../helpers/genai-rows.ts";
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

/** The version before the migration that puts the buckets inline. */
const INLINE_VERSION = MIGRATIONS.findIndex((m) => m.includes("CREATE TABLE IF NOT EXISTS genai_histograms"));
/** Schema v8 (the ledger of the previous release): every later migration runs on it. */
const V8 = MIGRATIONS.findIndex((m) => m.includes("DROP INDEX IF EXISTS signal_turns_lead")) + 1;

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

/** Both temporalities' view of a ledger's histograms: the rows, and the points they export. */
function exported(s: Signals) {
  const rows = s.genaiSeries();
  return {
    rows,
    withSession: translateGenai(rows, { includeSessionId: true }),
    folded: translateGenai(rows, { includeSessionId: false }),
  };
}

/**
 * Rewrites a current ledger into the shape before the inline migration, as the build before it
 * wrote it: genai_series without counts, and one genai_buckets row per bucket ever hit (the
 * v5 DDL, verbatim), then schema version v8.
 */
function toTwoTables(dir: string): number {
  const db = new Database(join(dir, LEDGER_FILE));
  try {
    // The one-row-per-series table of v11 and v12 first (test/helpers/genai-rows.ts).
    toHistograms(db);
    db.exec(`
      CREATE TABLE genai_series (
        id            INTEGER PRIMARY KEY,
        metric        TEXT NOT NULL CHECK (metric IN ('token_usage', 'operation_duration', 'tool_duration')),
        session_id    TEXT NOT NULL,
        model         TEXT NOT NULL,
        provider      TEXT NOT NULL,
        token_type    TEXT NOT NULL,
        tool_name     TEXT NOT NULL,
        outcome       TEXT NOT NULL,
        count         INTEGER NOT NULL,
        sum           REAL NOT NULL,
        min           REAL NOT NULL,
        max           REAL NOT NULL,
        first_ms      INTEGER NOT NULL,
        updated_ms    INTEGER NOT NULL,
        last_event_ms INTEGER NOT NULL,
        UNIQUE (metric, session_id, model, provider, token_type, tool_name, outcome)
      ) STRICT;
      CREATE TABLE genai_buckets (
        series_id INTEGER NOT NULL REFERENCES genai_series (id),
        bucket    INTEGER NOT NULL CHECK (bucket >= 0),
        count     INTEGER NOT NULL,
        PRIMARY KEY (series_id, bucket)
      ) STRICT, WITHOUT ROWID;
      INSERT INTO genai_series SELECT id, metric, session_id, model, provider, token_type, tool_name, outcome,
        count, sum, min, max, first_ms, updated_ms, last_event_ms FROM genai_histograms;`);
    const put = db.prepare(
      "INSERT INTO genai_buckets (series_id, bucket, count) VALUES (@id, @bucket, @count)",
    );
    let buckets = 0;
    for (const r of db.prepare("SELECT * FROM genai_histograms").all() as Record<string, number>[]) {
      for (let b = 0; b < GENAI_BUCKET_COLUMNS; b++) {
        const count = r[`b${b}`] as number;
        if (count === 0) continue;
        put.run({ id: r.id, bucket: b, count });
        buckets++;
      }
    }
    db.exec("DROP TABLE genai_histograms");
    db.pragma(`user_version = ${V8}`);
    return buckets;
  } finally {
    db.close();
  }
}

const tables = (dir: string): string[] => {
  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    return (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'genai%' ORDER BY name")
        .all() as {
        name: string;
      }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
};

const bucketSum = (r: GenaiSeriesRow) => r.counts.reduce((a, b) => a + b, 0);

describe("GenAI buckets inline: the migration", () => {
  it("moves every bucket row into its series exactly: the same rows and exported histograms", () => {
    expect(V8).toBe(8);
    expect(INLINE_VERSION).toBeGreaterThanOrEqual(V8);
    const dir = stateDir();
    const { l, s } = open(dir);
    l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
    l.commit(observe(subDoc(), SUB_PATH, 100));
    const before = exported(s);
    // Every metric, several buckets per series, and the last bucket of a metric (> its last bound).
    expect(new Set(before.rows.map((r) => r.metric))).toEqual(
      new Set(["token_usage", "operation_duration", "tool_duration"]),
    );
    expect(before.rows.some((r) => r.counts.filter((c) => c > 0).length > 1)).toBe(true);
    expect(before.rows.some((r) => (r.counts.at(-1) ?? 0) > 0)).toBe(true);
    expect(before.rows.some((r) => r.metric === "tool_duration" && r.counts.length === 18)).toBe(true);
    close(l);

    const bucketRows = toTwoTables(dir);
    expect(bucketRows).toBeGreaterThan(before.rows.length);
    expect(tables(dir)).toEqual(["genai_buckets", "genai_series"]);

    const again = open(dir);
    const after = exported(again.s);
    expect(after).toEqual(before);
    for (const r of after.rows) expect(bucketSum(r)).toBe(r.count);
    close(again.l);
    expect(tables(dir)).toEqual(["genai_rows"]);

    // A second run (a ledger wound back past it, as test/export/compaction-signals does) changes nothing.
    const db = new Database(join(dir, LEDGER_FILE));
    db.pragma(`user_version = ${INLINE_VERSION}`);
    db.close();
    const third = open(dir);
    expect(exported(third.s)).toEqual(before);
    // And the migrated series keep counting: the same document once more adds nothing (dedup),
    // a new request adds to its series.
    third.l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
    expect(exported(third.s)).toEqual(before);
    third.l.commit(observe(moreOfTheLead(), `/s/${ROOT}/other.messages.json`, 100));
    const output = (rows: GenaiSeriesRow[]) =>
      rows.find((r) => r.metric === "token_usage" && r.sessionId === ROOT && r.tokenType === "output");
    expect(output(third.s.genaiSeries())?.count).toBe((output(before.rows)?.count ?? 0) + 1);
    const db2 = new Database(join(dir, LEDGER_FILE), { readonly: true });
    expect(db2.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    db2.close();
  });

  it("a series without bucket rows moves as zeros; the first and the last bucket move as stored", () => {
    const dir = stateDir();
    const { l } = open(dir);
    close(l);
    expect(toTwoTables(dir)).toBe(0);
    const raw = new Database(join(dir, LEDGER_FILE));
    raw.exec(`
      INSERT INTO genai_series VALUES (7, 'tool_duration', 's', 'm', 'p', '', 'read_file', 'success', 5, 2.5, 0.1, 1, 10, 20, 30);
      INSERT INTO genai_series VALUES (9, 'token_usage', 's', 'm', 'p', 'input', '', '', 0, 0, 0, 0, 10, 20, 30);
      INSERT INTO genai_buckets VALUES (7, 0, 1), (7, 3, 2), (7, 17, 2);`);
    raw.close();
    const { s } = open(dir);
    const rows = s.genaiSeries();
    expect(rows.map((r) => [r.metric, r.count, r.counts])).toEqual([
      ["tool_duration", 5, [1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]],
      ["token_usage", 0, new Array(GENAI_BOUNDARIES.token_usage.length + 1).fill(0)],
    ]);
    expect(rows[0]).toMatchObject({
      sum: 2.5,
      min: 0.1,
      max: 1,
      firstMs: 10,
      updatedMs: 20,
      lastEventMs: 30,
    });
  });
});

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
