import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LEDGER_FILE, type Ledger } from "../../src/ledger/ledger.ts";
import type { GenaiSeriesRow, Signals } from "../../src/ledger/signals/signals.ts";
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
