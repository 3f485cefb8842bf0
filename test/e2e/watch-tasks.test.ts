/**
 * `cline-otel run` watches the task-format roots like the CLI's sessions: a task that the legacy
 * core writes (a new task folder, `ui_messages.json` through a temp file and a rename) under a
 * root that did not exist when the daemon started reaches the ledger within seconds, with the
 * poll, and so the safety-net sweep, at 60 s.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Ledger } from "../../src/ledger/ledger.ts";
import { settledRequests, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { startDaemon } from "./helpers/cli.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, ms: number): Promise<number> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
  return performance.now() - t0;
}

describe("cline-otel run: the task-format roots are watched", () => {
  it("a task written by temp file + rename is in the ledger within seconds (poll and sweep 60 s)", async () => {
    const work = mkdtempSync(join(tmpdir(), "e2e-watch-tasks-"));
    const stateDir = join(work, "state");
    const taskRoot = join(work, "home", ".cline", "data");
    /** Read only after the daemon logged its first pass: its ledger exists by then. */
    const events = () => {
      const l = Ledger.open(stateDir, { readOnly: true });
      try {
        return l.counts().events;
      } finally {
        l.close();
      }
    };
    const d = startDaemon(
      [
        "run",
        ...["--data-dir", join(work, "cline-data"), "--state-dir", stateDir],
        ...["--task-root", taskRoot, "--only-task-roots", "--poll-interval", "60"],
      ],
      { OTEL_METRICS_EXPORTER: "none", CLINE_OTEL_LOG_LEVEL: "debug" },
    );
    try {
      // The pass line is logged once its watches are set (src/collector/loop.ts): a write after it is seen.
      await until("the daemon's first pass", () => d.log().includes("pass: nothing new"), 30_000);
      writeTask(taskRoot, "1796000000001", settledRequests(1));
      const first = await until("the new task's request", () => events() === 1, 15_000);
      writeTask(taskRoot, "1796000000001", settledRequests(2));
      const rewrite = await until("the rewrite's request", () => events() === 2, 15_000);
      console.log(
        `daemon task-format pick-up: root and task created after start ${first.toFixed(0)} ms, rewrite ${rewrite.toFixed(0)} ms`,
      );
    } catch (e) {
      // What the daemon did is the diagnosis of a miss: its debug log names every pass and watch.
      throw new Error(`${(e as Error).message}\n--- the daemon's log ---\n${d.log().slice(-6000)}`);
    } finally {
      d.child.kill("SIGTERM");
      const exit = await d.done;
      rmSync(work, { recursive: true, force: true });
      expect(exit.status, exit.stderr).toBe(0);
    }
  }, 60_000);
});
