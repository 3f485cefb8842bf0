/**
 * kill -9 between the documents of ONE commit transaction (a backfill commits up to 256 sources a
 * batch: src/collector/pass.ts): the batch is lost whole, checkpoints included, so the next pass
 * reads every source of it again; nothing is lost and nothing is counted twice. With a quiet
 * time, the documents' calls and turns are final as they are read: each record exactly once too.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { BACKFILL_BATCH_SOURCES } from "../../src/collector/pass.ts";
import { LEDGER_FILE } from "../../src/ledger/ledger.ts";
import { makeTree, type SessionSpec } from "../helpers/cline-tree.ts";

const SESSIONS = 400;
const PER = 5;
const CHILD = join(import.meta.dirname, "batch-kill-child.ts");
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

function pass(clineDir: string, stateDir: string, dieAt: number, quietMs?: number) {
  const quiet = quietMs === undefined ? [] : [String(quietMs)];
  return spawnSync(process.execPath, ["--import", TSX, CHILD, clineDir, stateDir, String(dieAt), ...quiet], {
    encoding: "utf8",
  });
}

/** What the ledger holds: events, their input sum, checkpoints (a plain reader of our own file). */
function holds(stateDir: string): { events: number; input: number; checkpoints: number; calls: number } {
  const db = new Database(join(stateDir, LEDGER_FILE), { readonly: true, fileMustExist: true });
  try {
    const e = db.prepare("SELECT COUNT(*) AS n, IFNULL(SUM(input), 0) AS input FROM events").get() as {
      n: number;
      input: number;
    };
    const c = db.prepare("SELECT COUNT(*) AS n FROM checkpoints").get() as { n: number };
    const t = db.prepare("SELECT COUNT(*) AS n FROM tool_calls").get() as { n: number };
    return { events: e.n, input: e.input, checkpoints: c.n, calls: t.n };
  } finally {
    db.close();
  }
}

/** The signal records: by kind, how many distinct seqs they hold, and the calls still open. */
function records(stateDir: string) {
  const db = new Database(join(stateDir, LEDGER_FILE), { readonly: true, fileMustExist: true });
  try {
    const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      tools: n("SELECT COUNT(*) AS n FROM tool_calls WHERE signal_seq IS NOT NULL"),
      cancelled: n("SELECT COUNT(*) AS n FROM tool_calls WHERE cancelled = 1"),
      queued: n("SELECT COUNT(*) AS n FROM signal_queue"),
      seqs: n(
        `SELECT COUNT(DISTINCT s) AS n FROM (SELECT signal_seq AS s FROM tool_calls WHERE signal_seq IS NOT NULL
           UNION ALL SELECT signal_seq FROM events WHERE signal_seq IS NOT NULL UNION ALL SELECT seq FROM signal_queue)`,
      ),
      all: n(
        `SELECT (SELECT COUNT(*) FROM tool_calls WHERE signal_seq IS NOT NULL)
           + (SELECT COUNT(*) FROM events WHERE signal_seq IS NOT NULL) + (SELECT COUNT(*) FROM signal_queue) AS n`,
      ),
      open: n("SELECT COUNT(*) AS n FROM signal_calls WHERE final = 0"),
    };
  } finally {
    db.close();
  }
}

describe("kill -9 between documents of one commit transaction", () => {
  const dir = mkdtempSync(join(tmpdir(), "batch-kill-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sessions: SessionSpec[] = [];
  let input = 0;
  for (let s = 0; s < SESSIONS; s++) {
    const messages = [];
    for (let m = 0; m < PER; m++) {
      const n = 1000 + s * PER + m; // distinct per message: a miss and a double cannot cancel out
      input += n;
      messages.push({
        id: `msg_${m}`,
        metrics: { inputTokens: n, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        tools: ["read_file"],
      });
    }
    sessions.push({ id: `s${s}`, cwd: `/p${s % 7}`, messages });
  }
  const tree = makeTree(join(dir, "home"), sessions, { filler: "x".repeat(2_000) });

  it.each([
    ["the first batch", 100],
    ["the second batch", BACKFILL_BATCH_SOURCES + 70],
  ])(
    "in %s: the batch is lost whole, then read again once",
    (_, dieAt) => {
      const state = join(dir, `state-${dieAt}`);
      const killed = pass(tree.clineDir, state, dieAt);
      expect(killed.signal).toBe("SIGKILL");
      const after = holds(state);
      // Earlier documents of the killed transaction had written their rows: none of them survived.
      expect(after.checkpoints).toBeLessThan(dieAt);
      expect(after.checkpoints % BACKFILL_BATCH_SOURCES).toBe(0);
      expect(after.events).toBe(after.checkpoints * PER);
      expect(after.calls).toBe(after.checkpoints * PER);
      const resumed = pass(tree.clineDir, state, 0);
      expect(resumed.status, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
        read: SESSIONS - after.checkpoints,
        eventsAdded: (SESSIONS - after.checkpoints) * PER,
        failed: 0,
      });
      expect(holds(state)).toEqual({
        events: SESSIONS * PER,
        input,
        checkpoints: SESSIONS,
        calls: SESSIONS * PER,
      });
      // A third pass reads nothing and adds nothing.
      const idle = pass(tree.clineDir, state, 0);
      expect(JSON.parse(idle.stdout.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
        read: 0,
        eventsAdded: 0,
      });
    },
    120_000,
  );

  it("with a quiet time: the documents final as read, every record once after the kill and the re-read", () => {
    const quietMs = 900_000;
    // The same sessions, every call cut off (no tool_result): all final at read, as cancelled.
    const open = makeTree(
      join(dir, "home-open"),
      sessions.map((s) => ({ ...s, messages: s.messages.map((m) => ({ ...m, unanswered: true })) })),
      { filler: "x".repeat(2_000) },
    );
    const whole = join(dir, "state-quiet-whole");
    expect(pass(open.clineDir, whole, 0, quietMs).status).toBe(0);
    const reference = records(whole);
    expect(reference).toMatchObject({ tools: SESSIONS * PER, cancelled: SESSIONS * PER, open: 0 });
    expect(reference.seqs).toBe(reference.all);
    const state = join(dir, "state-quiet");
    expect(pass(open.clineDir, state, BACKFILL_BATCH_SOURCES + 70, quietMs).signal).toBe("SIGKILL");
    expect(records(state)).toMatchObject({ tools: BACKFILL_BATCH_SOURCES * PER, open: 0 });
    expect(pass(open.clineDir, state, 0, quietMs).status).toBe(0);
    expect(records(state)).toEqual(reference);
  }, 120_000);
});
