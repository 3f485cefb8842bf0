import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkOutcome } from "../../fixtures/harness/ground-truth-tasks.ts";
import { cline2Available, cline2Bin, taskDataDir } from "../../fixtures/harness/run-cline-tasks.ts";
import { runTaskScenario, taskScenarioByName } from "../../fixtures/harness/scenarios-tasks.ts";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";

/**
 * The task-format harness against the real Cline CLI 2.18.0 (`.ci/install-cline2.sh`; CI exports
 * CLINE_OTEL_CLINE2_BIN): one run whose first request gets HTTP 400 and is retried, its files
 * checked against the mock's ground truth and read by the task adapter.
 */
describe("task-format harness with the real Cline CLI 2.18.0", () => {
  it("stores exactly the mock's usage, one request for the refused one and its retry", async () => {
    expect(cline2Available(), `no Cline 2.18.0 at ${cline2Bin()}: run .ci/install-cline2.sh`).toBe(true);
    const root = mkdtempSync(join(tmpdir(), "cline-tasks-live-"));
    try {
      const out = await runTaskScenario(taskScenarioByName("retry-400"), root);
      const dataDir = taskDataDir(join(root, "home"));
      expect(checkOutcome(out, dataDir)).toEqual([]);
      expect(out.requests.map((r) => r.status)).toEqual([400, 200, 200]);
      expect(out.runs[0]?.result.taskIds).toHaveLength(1);
      const adapter = createClineTasksAdapter([
        { path: dataDir, client: "cli", product: "test", foundBy: "test" },
      ]);
      const d = await adapter.discover();
      expect(d.sources).toHaveLength(1);
      const source = d.sources[0];
      if (!source) throw new Error("no source");
      const o = await adapter.collectIncremental(source, undefined);
      expect(o.status).toBe("read");
      if (o.status !== "read") return;
      expect(o.problems).toEqual([]);
      expect(o.events.map((e) => [e.input, e.output, e.cacheRead, e.cacheWrite])).toEqual(
        out.records.map((r) => [
          r.components.input,
          r.components.output,
          r.components.cacheRead,
          r.components.cacheWrite,
        ]),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 240_000);
});
