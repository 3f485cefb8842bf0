import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { LEDGER_FILE } from "../../src/ledger/ledger.ts";
import { reportJson, spawnCli } from "../helpers/cli.ts";
import { makeTree, type SessionSpec } from "../helpers/cline-tree.ts";

const SESSIONS = 400;
const PER = 20;

/** Events committed so far (-1 while the ledger does not exist yet); a plain reader of our own file. */
function eventsIn(stateDir: string): number {
  const path = join(stateDir, LEDGER_FILE);
  if (!existsSync(path)) return -1;
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return (db.prepare("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n;
  } catch (e) {
    // The killed writer may have left the schema half-created: that is "nothing yet".
    if (/no such table/.test(String(e))) return -1;
    throw e;
  } finally {
    db?.close();
  }
}

describe("kill -9 in the middle of a collection", () => {
  const dir = mkdtempSync(join(tmpdir(), "crash-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("loses nothing and counts nothing twice after the next run", async () => {
    const sessions: SessionSpec[] = [];
    let input = 0;
    for (let s = 0; s < SESSIONS; s++) {
      const messages = [];
      for (let m = 0; m < PER; m++) {
        const n = 1000 + s * PER + m; // distinct per message: a miss or a double cannot cancel out
        input += n;
        messages.push({
          id: `msg_${m}`,
          metrics: { inputTokens: n, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        });
      }
      sessions.push({ id: `s${s}`, cwd: `/p${s % 7}`, messages });
    }
    const tree = makeTree(join(dir, "home"), sessions, { filler: "x".repeat(3_000) });
    const env = { HOME: tree.home, CLINE_OTEL_STATE_DIR: join(dir, "state") };

    const partial: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = eventsIn(env.CLINE_OTEL_STATE_DIR);
      const child = spawnCli(["report", "--json"], env, { stdio: "ignore" });
      // Kill the moment this run has committed something: a kill in the middle, not by luck.
      const deadline = Date.now() + 30_000;
      const poll = setInterval(() => {
        if (eventsIn(env.CLINE_OTEL_STATE_DIR) > before || Date.now() > deadline) child.kill("SIGKILL");
      }, 5);
      const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
      clearInterval(poll);
      expect(code === 0 || signal === "SIGKILL").toBe(true);
      partial.push(eventsIn(env.CLINE_OTEL_STATE_DIR));
    }
    const r = reportJson(env);
    expect(r.totals.events).toBe(SESSIONS * PER);
    expect(r.totals.input).toBe(input);
    expect(r.totals.output).toBe(SESSIONS * PER);
    // At least one run must really have died mid-way for this test to mean anything.
    expect(partial.some((n) => n > 0 && n < SESSIONS * PER)).toBe(true);
    // Each commit is one source's events with its checkpoint: never a torn source.
    for (const n of partial) expect(n % PER).toBe(0);
  }, 120_000);
});
