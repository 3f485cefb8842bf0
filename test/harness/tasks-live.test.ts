import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectedTaskEvents } from "../../fixtures/harness/ground-truth-subagent.ts";
import { checkOutcome } from "../../fixtures/harness/ground-truth-tasks.ts";
import { cline2Available, cline2Bin, taskDataDir } from "../../fixtures/harness/run-cline-tasks.ts";
import {
  runTaskScenario,
  type TaskRecord,
  type TaskScenarioOutcome,
  taskScenarioByName,
} from "../../fixtures/harness/scenarios-tasks.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import type { UsageEvent } from "../../src/adapter/types.ts";

/**
 * The task-format harness against the real Cline CLI 2.18.0 (`.ci/install-cline.sh`; CI exports
 * CLINE_OTEL_CLINE2_BIN): a run whose first request gets HTTP 400 and is retried, and a run with
 * sub-agents, their files checked against the mock's ground truth, while the task adapter reads
 * them every 50 ms as the CLI rewrites them. Each key's first event is kept, as the ledger does:
 * that must be exactly the mock's usage (no half-written read, no zeros from the retry's delay,
 * nothing twice, no sub-agent request missed).
 */

interface Live {
  readonly out: TaskScenarioOutcome;
  readonly dataDir: string;
  readonly ledger: ReadonlyMap<string, UsageEvent>;
  readonly transient: readonly string[];
  readonly passes: number;
}

/** Run a scenario while the adapter reads the tree every 50 ms; then one last pass. */
async function live(name: string, check: (l: Live) => void): Promise<void> {
  expect(cline2Available(), `no Cline 2.18.0 at ${cline2Bin()}: run .ci/install-cline.sh`).toBe(true);
  const root = mkdtempSync(join(tmpdir(), "cline-tasks-live-"));
  const dataDir = taskDataDir(join(root, "home"));
  const adapter = createClineTasksAdapter([
    { path: dataDir, client: "cli", product: "test", foundBy: "test" },
  ]);
  const ledger = new Map<string, UsageEvent>();
  const transient: string[] = [];
  let passes = 0;
  const pass = async (): Promise<void> => {
    passes++;
    for (const s of (await adapter.discover()).sources) {
      const o = await adapter.collectIncremental(s, undefined);
      if (o.status !== "read") {
        transient.push(o.status === "failed" ? o.problem.code : o.status);
        continue;
      }
      for (const e of o.events) if (!ledger.has(e.dedupKey)) ledger.set(e.dedupKey, e);
    }
  };
  let running = true;
  const poller = (async () => {
    while (running) {
      await pass();
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    const out = await runTaskScenario(taskScenarioByName(name), root);
    running = false;
    await poller;
    await pass();
    check({ out, dataDir, ledger, transient, passes });
  } finally {
    running = false;
    await poller;
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * What a read caught mid-write reports, to be read again on the next pass: a rewrite in place of
 * ui_messages.json, and of task_metadata.json (rewritten in place, read with it: §15.10).
 */
const RETRIED: readonly string[] = ["changed-during-read", "partial-document", "task-metadata-partial"];

const components = (r: TaskRecord) => [
  r.components.input,
  r.components.output,
  r.components.cacheRead,
  r.components.cacheWrite,
];
const eventComponents = (e: UsageEvent) => [e.input, e.output, e.cacheRead, e.cacheWrite];

describe("task-format harness with the real Cline CLI 2.18.0", () => {
  it("stores exactly the mock's usage, and passes during the run count it exactly once", async () => {
    await live("retry-400", ({ out, dataDir, ledger, transient, passes }) => {
      expect(checkOutcome(out, dataDir)).toEqual([]);
      expect(out.requests.map((r) => r.status)).toEqual([400, 200, 200]);
      expect(out.runs[0]?.result.taskIds).toHaveLength(1);
      expect(passes).toBeGreaterThan(40);
      // A rewrite in place caught mid-read is reported and read again on the next pass (RETRIED); nothing else.
      expect(transient.filter((c) => !RETRIED.includes(c))).toEqual([]);
      expect([...ledger.values()].map(eventComponents)).toEqual(out.records.map(components));
    });
  }, 240_000);

  it("sub-agents: each use_subagents call's requests are counted once, as their sums, during the run too", async () => {
    await live("subagent", ({ out, dataDir, ledger, transient }) => {
      expect(checkOutcome(out, dataDir)).toEqual([]);
      expect(out.records.filter((r) => r.subagent === true)).toHaveLength(5);
      expect(transient.filter((c) => !RETRIED.includes(c))).toEqual([]);
      const events = [...ledger.values()].sort((a, b) => a.timestampMs - b.timestampMs);
      expect(events.map((e) => e.agent)).toEqual(["lead", "subagent", "lead", "subagent", "lead"]);
      expect(events.map(eventComponents)).toEqual(expectedTaskEvents(out.records).map(components));
    });
  }, 240_000);
});
