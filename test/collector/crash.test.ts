import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import { reportJson, spawnCli } from "../helpers/cli.ts";
import { makeTree, type SessionSpec } from "../helpers/cline-tree.ts";

const SESSIONS = 300;
const PER = 20;

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
      const child = spawnCli(["report", "--json"], env, { stdio: "ignore" });
      const delay = 400 + Math.floor(Math.random() * 400) + i * 150;
      const timer = setTimeout(() => child.kill("SIGKILL"), delay);
      const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
      clearTimeout(timer);
      expect(code === 0 || signal === "SIGKILL").toBe(true);
      try {
        const l = Ledger.open(env.CLINE_OTEL_STATE_DIR, { readOnly: true });
        partial.push(l.counts().events);
        l.close();
      } catch {
        partial.push(0); // killed before the ledger existed
      }
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
