import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { translateGenai } from "../../src/export/genai/metrics.ts";
import { LEDGER_FILE, type Ledger } from "../../src/ledger/ledger.ts";
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
  SUB_PATH,
  toolResult,
} from "../helpers/signal-docs.ts";

const { stateDir, open, close } = scopedLedgers("genai-rows");

/** The schema version before the migration to genai_rows. */
const ROWS_VERSION = MIGRATIONS.findIndex((m) => m.includes("CREATE TABLE IF NOT EXISTS genai_rows"));

/** A session whose first request has no start (its document opens with it): no duration yet. */
const OTHER = "1796018399000_other";
function startless() {
  const t0 = 1_796_018_400_000;
  return messagesDoc(
    [assistant("msg_x1", t0, [["toolu_x1", "read_files"]]), toolResult("msg_xr", t0 + 90, "toolu_x1")],
    "lead",
    OTHER,
  );
}
/** Later, the same session's request with a start: its duration series begins. */
function startlessLater() {
  const t0 = 1_796_018_500_000;
  return messagesDoc([prompt("y1", t0), assistant("msg_y1", t0 + 5_000)], "lead", OTHER);
}

function exported(s: Signals) {
  const rows = s.genaiSeries();
  return {
    rows,
    withSession: translateGenai(rows, { includeSessionId: true }),
    folded: translateGenai(rows, { includeSessionId: false }),
  };
}

const userVersion = (dir: string, v?: number): number => {
  const db = new Database(join(dir, LEDGER_FILE));
  try {
    if (v !== undefined) db.pragma(`user_version = ${v}`);
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
};

const tableRows = (dir: string, sql: string): unknown[] => {
  const db = new Database(join(dir, LEDGER_FILE), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
};

/** A ledger with every shape of request row: with and without a duration, one added to later. */
function history(dir: string): { l: Ledger; s: Signals } {
  const o = open(dir);
  o.l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
  o.l.commit(observe(startless(), `/s/${OTHER}/${OTHER}.messages.json`, 100));
  return o;
}

describe("GenAI request rows: the layout", () => {
  it("a request's three series are one row; a tool's duration one row per tool and outcome", () => {
    const dir = stateDir();
    const { l, s } = history(dir);
    const rows = s.genaiSeries();
    // ROOT: input, output, duration; OTHER: input, output (no start); tools: ROOT's 3 calls
    // (run_commands success twice, read_files failure) and OTHER's one.
    expect(
      rows.map((r) => [r.sessionId === ROOT ? "root" : "other", r.metric, r.tokenType || r.toolName]),
    ).toEqual([
      ["root", "token_usage", "input"],
      ["root", "token_usage", "output"],
      ["root", "operation_duration", ""],
      ["root", "tool_duration", "run_commands"],
      ["root", "tool_duration", "read_files"],
      ["other", "token_usage", "input"],
      ["other", "token_usage", "output"],
      ["other", "tool_duration", "read_files"],
    ]);
    close(l);
    expect(tableRows(dir, "SELECT count(*) AS n FROM genai_rows")).toEqual([{ n: 5 }]);
    expect(
      tableRows(dir, "SELECT session_id AS s, dur_count AS d FROM genai_rows WHERE outcome = '' ORDER BY id"),
    ).toEqual([
      { s: ROOT, d: 4 },
      { s: OTHER, d: null },
    ]);
  });
});

describe("GenAI request rows: the migration from v12", () => {
  it("moves every series exactly: the same rows and exported histograms, twice; then they keep counting", () => {
    // Found; the migrations after it (re-runnable, as every one is) run again too.
    expect(ROWS_VERSION).toBeGreaterThan(0);
    expect(ROWS_VERSION).toBeLessThan(SCHEMA_VERSION);
    const dir = stateDir();
    const { l, s } = history(dir);
    const before = exported(s);
    close(l);
    const raw = new Database(join(dir, LEDGER_FILE));
    toHistograms(raw);
    raw.pragma(`user_version = ${ROWS_VERSION}`);
    raw.close();
    expect(tableRows(dir, "SELECT count(*) AS n FROM genai_histograms")).toEqual([{ n: 8 }]);

    const again = open(dir);
    expect(exported(again.s)).toEqual(before);
    close(again.l);
    expect(userVersion(dir)).toBe(SCHEMA_VERSION);
    expect(
      tableRows(dir, "SELECT name FROM sqlite_master WHERE name LIKE 'genai%' AND type = 'table'"),
    ).toEqual([{ name: "genai_rows" }]);
    // A second run (a ledger wound back past it) changes nothing.
    userVersion(dir, ROWS_VERSION);
    const third = open(dir);
    expect(exported(third.s)).toEqual(before);
    // Re-reading adds nothing; a later request with a start begins OTHER's duration in its row,
    // and adds one to its token usage.
    third.l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
    expect(exported(third.s)).toEqual(before);
    third.l.commit(observe(startlessLater(), `/s/${OTHER}/other.messages.json`, 100));
    const got = third.s.genaiSeries().filter((r) => r.sessionId === OTHER && r.metric !== "tool_duration");
    expect(got.map((r) => [r.metric, r.tokenType, r.count])).toEqual([
      ["token_usage", "input", 2],
      ["token_usage", "output", 2],
      ["operation_duration", "", 1],
    ]);
    expect(got[2]).toMatchObject({ sum: 5, min: 5, max: 5, lastEventMs: 1_796_018_505_000 });
    close(third.l);
    expect(tableRows(dir, "SELECT count(*) AS n FROM genai_rows")).toEqual([{ n: 5 }]);
  });

  it("v12 series written in any order: the same points; a request row takes its first series' id", () => {
    const dir = stateDir();
    const { l } = open(dir);
    close(l);
    const raw = new Database(join(dir, LEDGER_FILE));
    toHistograms(raw);
    const zeros = (n: number, at: number, c: number) =>
      Array.from({ length: 18 }, (_, i) => (i < n && i === at ? c : 0)).join(", ");
    // As the build before wrote them: A's tokens (1, 2), then B's three (3, 4, 5), then A's duration (6).
    raw.exec(`
      INSERT INTO genai_histograms VALUES
        (1, 'token_usage', 'A', 'm', 'p', 'input', '', '', 2, 3000, 1000, 2000, 10, 20, 30, ${zeros(15, 6, 2)}),
        (2, 'token_usage', 'A', 'm', 'p', 'output', '', '', 2, 30, 10, 20, 10, 20, 30, ${zeros(15, 3, 2)}),
        (3, 'token_usage', 'B', 'm', 'p', 'input', '', '', 1, 5, 5, 5, 11, 21, 31, ${zeros(15, 2, 1)}),
        (4, 'token_usage', 'B', 'm', 'p', 'output', '', '', 1, 1, 1, 1, 11, 21, 31, ${zeros(15, 0, 1)}),
        (5, 'operation_duration', 'B', 'm', 'p', '', '', '', 1, 0.5, 0.5, 0.5, 11, 21, 31, ${zeros(15, 5, 1)}),
        (6, 'operation_duration', 'A', 'm', 'p', '', '', '', 1, 90, 90, 90, 12, 22, 32, ${zeros(15, 14, 1)}),
        (7, 'tool_duration', 'A', 'm', 'p', '', 'read_files', 'failure', 1, 700, 700, 700, 12, 22, 32, ${zeros(18, 17, 1)});`);
    const v12 = raw.prepare("SELECT * FROM genai_histograms ORDER BY id").all() as Record<
      string,
      number | string
    >[];
    raw.pragma(`user_version = ${ROWS_VERSION}`);
    raw.close();
    const { s } = open(dir);
    const rows = s.genaiSeries();
    // Every v12 row is one series, with its totals, times and buckets as stored.
    const asV12 = (r: GenaiSeriesRow) => ({
      metric: r.metric,
      session_id: r.sessionId,
      token_type: r.tokenType,
      tool_name: r.toolName,
      outcome: r.outcome,
      count: r.count,
      sum: r.sum,
      min: r.min,
      max: r.max,
      first_ms: r.firstMs,
      updated_ms: r.updatedMs,
      last_event_ms: r.lastEventMs,
      buckets: r.counts,
    });
    const fromV12 = v12.map((r) => ({
      metric: r.metric,
      session_id: r.session_id,
      token_type: r.token_type,
      tool_name: r.tool_name,
      outcome: r.outcome,
      count: r.count,
      sum: r.sum,
      min: r.min,
      max: r.max,
      first_ms: r.first_ms,
      updated_ms: r.updated_ms,
      last_event_ms: r.last_event_ms,
      buckets: Array.from({ length: r.metric === "tool_duration" ? 18 : 15 }, (_, i) => r[`b${i}`]),
    }));
    const byKey = (a: { metric: unknown; session_id: unknown; token_type: unknown }) =>
      `${a.metric}|${a.session_id}|${a.token_type}`;
    const sorted = <T extends { metric: unknown; session_id: unknown; token_type: unknown }>(x: T[]) =>
      [...x].sort((a, b) => byKey(a).localeCompare(byKey(b)));
    expect(sorted(rows.map(asV12))).toEqual(sorted(fromV12));
    // The order: by row, a request row where its first series was (A: 1, B: 3, A's tool: 7).
    expect(rows.map((r) => `${r.sessionId}:${r.metric}:${r.tokenType}`)).toEqual([
      "A:token_usage:input",
      "A:token_usage:output",
      "A:operation_duration:",
      "B:token_usage:input",
      "B:token_usage:output",
      "B:operation_duration:",
      "A:tool_duration:",
    ]);
    expect(tableRows(dir, "SELECT id FROM genai_rows ORDER BY id")).toEqual([
      { id: 1 },
      { id: 3 },
      { id: 7 },
    ]);
  });
});

describe("GenAI request rows: reads", () => {
  /** Two request rows whose token series are live and whose duration is not (set in SQL). */
  function partlyLive(): { dir: string; s: Signals } {
    const dir = stateDir();
    const { l } = history(dir);
    close(l);
    const db = new Database(join(dir, LEDGER_FILE));
    db.exec(`UPDATE genai_rows SET last_event_ms = 5000, updated_ms = 5000, out_last_event_ms = 5000,
      out_updated_ms = 5000, dur_last_event_ms = 10, dur_updated_ms = 10;
      UPDATE genai_rows SET last_event_ms = 10, updated_ms = 10 WHERE outcome != '';`);
    db.close();
    return { dir, s: open(dir).s };
  }

  it("the TTL is per series: a row's live series only", () => {
    const { s } = partlyLive();
    const f = { eventSinceMs: 1000, updatedSinceMs: 1000 };
    const live = s.genaiSeriesLive(f);
    expect(live.map((r) => `${r.sessionId === ROOT ? "root" : "other"}:${r.metric}:${r.tokenType}`)).toEqual([
      "root:token_usage:input",
      "root:token_usage:output",
      "other:token_usage:input",
      "other:token_usage:output",
    ]);
    // Everything is live for an infinite window; nothing for a window after every time.
    expect(s.genaiSeriesLive({ eventSinceMs: -Infinity, updatedSinceMs: -Infinity })).toEqual(
      s.genaiSeries(),
    );
    expect(s.genaiSeriesLive({ eventSinceMs: 10 ** 15, updatedSinceMs: 10 ** 15 })).toEqual([]);
  });

  it("pages hold whole rows, at most `limit` series, and every live series once, for any limit", () => {
    const dir = stateDir();
    const { l, s } = history(dir);
    l.commit(observe(startlessLater(), `/s/${OTHER}/other.messages.json`, 100));
    const all = { eventSinceMs: -Infinity, updatedSinceMs: -Infinity };
    const want = s.genaiSeriesLive(all);
    expect(want.length).toBe(9);
    for (const limit of [1, 2, 3, 4, 5, 8, 9, 10, 100]) {
      const got: GenaiSeriesRow[] = [];
      let afterId = 0;
      let pages = 0;
      for (;;) {
        // A limit below a row's series count moves on with a bigger one (as CumulativePages does).
        const page = s.genai.seriesLivePage(all, {
          afterId,
          limit: pages === 0 ? limit : Math.max(limit, 3),
        });
        expect(page.rows.length).toBeLessThanOrEqual(Math.max(pages === 0 ? limit : 3, limit));
        got.push(...page.rows);
        afterId = page.lastId;
        pages++;
        if (page.done) break;
        expect(pages).toBeLessThan(20);
      }
      expect(got).toEqual(want);
    }
  });
});

describe("GenAI request rows: a failed commit", () => {
  it("that fails after its request rows were written leaves no partial count", () => {
    const dir = stateDir();
    const { l, s } = open(dir);
    l.commit(observe(leadDoc().doc, LEAD_PATH, 100));
    const before = s.genaiSeries();
    const side = new Database(join(dir, LEDGER_FILE));
    // The request rows are written first; the tool rows of the same flush are refused.
    side.exec(`CREATE TRIGGER refuse_tools BEFORE INSERT ON genai_rows
      WHEN NEW.outcome != '' BEGIN SELECT RAISE(ABORT, 'injected'); END`);
    const sub = observe(
      messagesDoc(
        [
          prompt("s1", 1_796_018_600_000),
          assistant("s2", 1_796_018_600_500, [["toolu_q", "grep"]]),
          toolResult("s3", 1_796_018_601_000, "toolu_q"),
        ],
        "subagent",
        `${ROOT}__agent_1`,
      ),
      SUB_PATH,
      100,
    );
    const more = observe(
      messagesDoc([prompt("v1", 1_796_018_700_000), assistant("v2", 1_796_018_700_070)]),
      `/s/${ROOT}/more.messages.json`,
      100,
    );
    expect(() => l.commitAll([more, sub])).toThrow(/injected/);
    expect(s.genaiSeries()).toEqual(before);
    side.exec("DROP TRIGGER refuse_tools");
    side.close();
    l.commitAll([more, sub]);
    const rootOut = s.genaiSeries().find((r) => r.sessionId === ROOT && r.tokenType === "output");
    expect(rootOut?.count).toBe((before.find((r) => r.tokenType === "output")?.count ?? 0) + 1);
  });
});
